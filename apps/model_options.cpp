// Opening and loading models for the subcommands.
#include "model_options.h"

#include <unistd.h>
#include <cstdio>
#include <sstream>

#include "default_model.h"
#include "error.h"

namespace vkllm::cli {

void add_model_options(CLI::App* cmd, ModelOptions& o, bool engine) {
  cmd->add_option("-m,--model", o.path, "GGUF model file (default: the embedded model)");
  if (!engine) return;
  cmd->add_option("--device", o.device, "Vulkan device index (see vkllm devices)");
  cmd->add_option("--ctx", o.ctx, "Context length in tokens (default: the model's, at most 4096)");
  cmd->add_option("--batch", o.batch, "Prompt tokens per forward pass")->check(CLI::Range(1u, 4096u));
  cmd->add_option("--kv-type", o.kv_type, "KV cache storage: f16 or f32")->check(CLI::IsMember({"f16", "f32"}));
}

GgufFile open_model(const std::string& path) {
  if (path.empty()) return GgufFile::parse(default_model_bytes(), "default model");
  return GgufFile::open(path);
}

LoadedModel load_model(const ModelOptions& o, bool profiling, std::function<void(const CheckReport&)> on_check) {
  LoadedModel m;
  m.file = std::make_unique<GgufFile>(open_model(o.path));
  m.ctx = std::make_unique<Context>(ContextOptions{.device = o.device});
  bool tty = isatty(STDERR_FILENO);
  int shown = -1;
  auto progress = [&](const LoadProgress& p) {
    int pct = p.bytes_total ? int(100 * p.bytes_done / p.bytes_total) : 100;
    if (!tty || pct == shown) return;
    shown = pct;
    std::fprintf(stderr, "\rloading %s: %3d%%", m.file->name().c_str(), pct);
    if (pct == 100) std::fprintf(stderr, "\r\033[K");
  };
  EngineOptions eo{.n_ctx = o.ctx,
                   .batch = o.batch,
                   .kv_type = o.kv_type == "f32" ? DType::F32 : DType::F16,
                   .profiling = profiling,
                   .check = o.check || check_requested()};
  if (eo.check)
    eo.on_check = on_check ? std::move(on_check)
                           : [](const CheckReport& r) { std::fprintf(stderr, "%s\n", r.summary().c_str()); };
  m.engine = std::make_unique<Engine>(*m.ctx, *m.file, eo, progress);
  return m;
}

std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  std::string s = text;
  for (char& c : s)
    if (c == ',') c = ' ';
  std::istringstream in(s);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(word, &used);
    } catch (...) {
      used = 0;
    }
    ENSURE(used == word.size() && v >= 0 && v <= INT32_MAX, "'" + word + "' is not a token id");
    ids.push_back(int32_t(v));
  }
  ENSURE(!ids.empty(), "no token ids given");
  return ids;
}

}  // namespace vkllm::cli
