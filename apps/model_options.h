// What the model-running subcommands share: which model (a GGUF path, or the default model
// embedded in the binary), which device, how much context, and loading with progress.
#pragma once
#include <CLI/CLI.hpp>
#include <memory>
#include <optional>
#include <string>

#include "context.h"
#include "engine/engine.h"
#include "gguf/reader.h"

namespace vkllm::cli {

struct ModelOptions {
  std::string path;  // empty: the embedded default model
  std::optional<uint32_t> device;
  uint32_t ctx = 0;  // 0: the model's context length (at most 4096)
  uint32_t batch = 512;
  std::string kv_type = "f16";
  bool check = false;  // --check (logits) or $VKLLM_CHECK: the reference model beside the GPU
};

// -m/--model, and with `engine` also --device, --ctx, --batch, --kv-type.
void add_model_options(CLI::App* cmd, ModelOptions& o, bool engine = true);

// The GGUF file named by -m, or the embedded default model.
GgufFile open_model(const std::string& path);

// A model loaded on the GPU; prints loading progress when stderr is a terminal.
struct LoadedModel {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Engine> engine;
};
// With the check on, each forward's report goes to on_check (default: its summary on stderr).
LoadedModel load_model(const ModelOptions& o, bool profiling = false,
                       std::function<void(const CheckReport&)> on_check = {});

// "1,2,3" or "1 2 3" -> ids; throws Error on anything else.
std::vector<int32_t> parse_token_list(const std::string& text);

}  // namespace vkllm::cli
