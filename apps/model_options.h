// Opening and loading models for the subcommands: the GGUF file named by -m, -hf or the first
// positional word (or the default model embedded in the binary), the checks that need the file
// but no GPU, then the upload.
#pragma once
#include <filesystem>
#include <memory>
#include <string>

#include "arch/model_config.h"
#include "context.h"
#include "engine/engine.h"
#include "gguf/reader.h"
#include "options.h"

namespace vkllm::cli {

// The model file the options name: -m's file or downloaded model (USER/REPO:QUANT as vkllm list
// shows it), or -hf's from the cache, downloaded first when it is not there (progress on
// stderr; Ctrl-C keeps the partial file and exits 130). Empty: the embedded default model.
std::string model_path(const ModelOptions& o);
// The projector to use: --mmproj, else with -hf (unless --no-mmproj) the repository's beside the
// model in the cache (model_path fetched it); "" when there is none.
std::string mmproj_path(const ModelOptions& o);
// Whether a positional word names a model: an existing file, a .gguf name, USER/REPO:QUANT, or
// a downloaded model's other names (USER/REPO, USER/REPO/FILE).
bool names_model(const std::string& word);
// The GGUF file the options name, or the embedded default model.
GgufFile open_model(const ModelOptions& o);

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
// The fewest tokens a request or chat turn takes: the chat template's frame around a one-token
// message (or a one-token prompt), and one token of reply.
uint32_t shortest_request(const GgufFile& f);
// Throws Error unless the plan's context holds the shortest request; `what` names the setting
// as the user gave it ("--ctx 1", "/set context 1").
void check_context_fits(const ModelPlan& p, const std::string& what);

// A model loaded on the GPU; prints loading progress (percent, MB/s) when stderr is a terminal and
// the weights are big enough to take a while.
// Members go in reverse order, also when another model is assigned (the engine before its context).
struct LoadedModel {
  std::unique_ptr<Context> ctx;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<Engine> engine;
  // No run on this device, driver and set of kernels has been recorded under vkllm's cache folder
  // (compiled_marker, "" where no folder can be named): the driver compiles the kernels now, and
  // keeps them in its own shader cache (`vkllm run` says so apart from the prompt's speed).
  bool first_use = false;
  std::filesystem::path compiled_marker;

  LoadedModel() = default;
  LoadedModel(LoadedModel&&) = default;
  LoadedModel& operator=(LoadedModel&& o) noexcept {
    engine.reset(), file.reset(), ctx.reset();
    ctx = std::move(o.ctx), file = std::move(o.file), engine = std::move(o.engine);
    first_use = o.first_use, compiled_marker = std::move(o.compiled_marker);
    return *this;
  }
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
