// The model cache: <cache>/hf/<USER>/<REPO>/ holds a repository's downloaded files under their
// paths in the repository, and vkllm-repo.json, the hub's listing of the repository (paths,
// sizes, SHA-256) at the last download. With the listing, a request (USER/REPO[:QUANT] or a file)
// picks the same file offline as online, so -hf and -m NAME run from the cache without the hub.
#pragma once
#include <cstdint>
#include <filesystem>
#include <optional>
#include <string>
#include <vector>

#include "hub/hub_settings.h"
#include "hub/repo_files.h"

namespace vkllm::hub {

namespace fs = std::filesystem;

fs::path repo_dir(const HubSettings& s, const std::string& repo);
void save_listing(const HubSettings& s, const std::string& repo, const std::vector<RepoFile>& files);
std::optional<std::vector<RepoFile>> load_listing(const HubSettings& s, const std::string& repo);

// Whether every file is in the cache with the size the hub listed (a file only takes its name
// once its SHA-256 was checked).
bool in_cache(const HubSettings& s, const std::string& repo, const std::vector<RepoFile>& files);

// What a model name names: USER/REPO[:QUANT] or USER/REPO/FILE.gguf (a file of the repository).
struct ModelName {
  HubRef ref;
  std::string file;  // the file in the repository; empty: chosen by ref.tag
};
std::optional<ModelName> parse_model_name(const std::string& text);

// The cached files of a request, first part first; nullopt unless all are there.
std::optional<std::vector<fs::path>> find_cached(const HubSettings& s, const ModelName& m);

struct CachedModel {
  std::string name;             // USER/REPO:QUANT, or USER/REPO/FILE for a file name without a quant
  std::string quant;            // "" when the name carries none
  std::vector<fs::path> paths;  // every part, first part first
  uint64_t bytes = 0;           // all parts
};
// Every complete model in the cache, by repository, in the hub's listing order.
std::vector<CachedModel> cached_models(const HubSettings& s);

// Deletes a model's files (USER/REPO:QUANT or USER/REPO/FILE) or, for USER/REPO, the whole
// repository (partial downloads included); returns what was deleted. Throws Error naming what
// the cache holds when nothing matches.
std::vector<CachedModel> remove_cached(const HubSettings& s, const std::string& name);

}  // namespace vkllm::hub
