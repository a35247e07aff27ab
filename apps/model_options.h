// Opening and loading models for the subcommands: the GGUF file named by -m (or the default model
// embedded in the binary), the checks that need the file but no GPU, then the upload.
#pragma once
#include <memory>
#include <string>

#include "arch/model_config.h"
#include "context.h"
#include "engine/engine.h"
#include "gguf/reader.h"
#include "options.h"

namespace vkllm::cli {

// The GGUF file named by -m, or the embedded default model.
GgufFile open_model(const std::string& path);

// What is known about a model before anything goes to the GPU. plan_model checks the
// architecture and hyperparameters, every tensor's type and the context length, so a file vkllm
// cannot run fails before any upload; a --ctx beyond the model's training context is a warning.
struct ModelPlan {
  std::unique_ptr<GgufFile> file;
  ModelConfig config;
  uint32_t n_ctx = 0;                 // what the engine will use
  std::vector<std::string> warnings;  // printed once the model is loaded (an error stays one line)
};
ModelPlan plan_model(const ModelOptions& o);

// A model loaded on the GPU; prints loading progress when stderr is a terminal.
struct LoadedModel {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Engine> engine;
};
// slots: KV-cache slots (sequences at once; vkllm serve --parallel). With the check on (--check
// or $VKLLM_CHECK), each forward's report goes to on_check (default: its summary on stderr).
LoadedModel load_model(ModelPlan plan, const ModelOptions& o, bool profiling = false, uint32_t slots = 1,
                       std::function<void(const CheckReport&)> on_check = {});
LoadedModel load_model(const ModelOptions& o, bool profiling = false, uint32_t slots = 1,
                       std::function<void(const CheckReport&)> on_check = {});
// "NAME on DEVICE (profile P): weights .., KV cache .. (N tokens, TYPE), activations .." on stderr,
// in the units `vkllm info` uses.
void print_load_line(const LoadedModel& m);

// The --kv-type names: f16, f32, q8_0, q4_0.
DType kv_type_named(const std::string& name);

// "1,2,3" or "1 2 3" -> ids; throws Error on anything else (range: vkllm::check_token_ids).
std::vector<int32_t> parse_token_list(const std::string& text);

}  // namespace vkllm::cli
