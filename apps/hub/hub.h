// Getting a model from Hugging Face: the repository's file list from the hub's model API
// (GET <endpoint>/api/models/USER/REPO/tree/main?recursive=true: paths, sizes, LFS SHA-256s),
// the model file chosen as llama.cpp's -hf chooses it (repo_files.h), every part of it
// downloaded into the cache (download.h, model_cache.h) from <endpoint>/USER/REPO/resolve/main/FILE.
// Answers the hub refuses (401, 403, 404) become one line that says what to do.
#pragma once
#include <filesystem>
#include <functional>
#include <string>
#include <vector>

#include "hub/http_client.h"  // Interrupted
#include "hub/hub_settings.h"
#include "hub/model_cache.h"
#include "hub/repo_files.h"

namespace vkllm::hub {

struct PullOptions {
  bool terminal = false;            // progress bars on stderr (else a line per file)
  std::function<bool()> cancelled;  // Ctrl-C: throws Interrupted, partial files kept
  bool mmproj = true;               // also the repository's multimodal projector, as llama.cpp's -hf (--no-mmproj)
};

struct PulledModel {
  std::vector<std::filesystem::path> paths;  // every part, first part first
  std::string name;                          // USER/REPO:QUANT (or USER/REPO/FILE)
  uint64_t bytes = 0;                        // all parts
  uint64_t downloaded = 0;                   // of those, fetched by this call
  std::filesystem::path mmproj;              // the projector beside it (select_mmproj); empty: none or not asked
};

// The repository's files as the hub lists them. Throws Error (401/403 explain HF_TOKEN; 404 names
// the repository; a hub that cannot be reached names the endpoint).
std::vector<RepoFile> list_repo(const HubSettings& s, const std::string& repo);

// Lists the repository, saves the listing in the cache and downloads whatever of the chosen model
// is not there yet (a partial file is resumed).
PulledModel pull(const HubSettings& s, const ModelName& m, const PullOptions& o);

// -hf: the cached model when all of it is there (no network), else pull.
PulledModel obtain(const HubSettings& s, const ModelName& m, const PullOptions& o);

}  // namespace vkllm::hub
