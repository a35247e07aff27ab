// Opening, checking and loading models for the subcommands.
#include "model_options.h"

#include <fmt/format.h>
#include <unistd.h>
#include <cstdio>
#include <sstream>

#include "default_model.h"
#include "error.h"
#include "graph/weights.h"
#include "output.h"

namespace vkllm::cli {

GgufFile open_model(const std::string& path) {
  if (path.empty()) return GgufFile::parse(default_model_bytes(), "default model");
  return GgufFile::open(path);
}

DType kv_type_named(const std::string& name) {
  std::optional<DType> t = dtype_named(name);
  ENSURE(t && (*t == DType::F16 || *t == DType::F32 || *t == DType::Q8_0 || *t == DType::Q4_0),
         fmt::format("--kv-type {}: f16, f32, q8_0 or q4_0", name));
  return *t;
}

ModelPlan plan_model(const ModelOptions& o) {
  ModelPlan p;
  p.file = std::make_unique<GgufFile>(open_model(o.path));
  p.config = ModelConfig::from_gguf(*p.file);
  check_weight_types(*p.file);
  p.n_ctx = o.ctx ? o.ctx : default_context(p.config);
  if (o.ctx > p.config.seq_len)
    p.warnings.push_back(fmt::format("--ctx {} is more than the {} tokens {} was trained with; text past that degrades",
                                     o.ctx, p.config.seq_len, p.file->name()));
  return p;
}

LoadedModel load_model(ModelPlan plan, const ModelOptions& o, bool profiling, uint32_t slots,
                       std::function<void(const CheckReport&)> on_check) {
  LoadedModel m;
  m.file = std::move(plan.file);
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
  EngineOptions eo{.n_ctx = plan.n_ctx,
                   .batch = o.batch,
                   .slots = slots,
                   .kv_type = kv_type_named(o.kv_type),
                   .profiling = profiling,
                   .check = o.check || check_requested()};
  if (eo.check)
    eo.on_check = on_check ? std::move(on_check)
                           : [](const CheckReport& r) { std::fprintf(stderr, "%s\n", r.summary().c_str()); };
  m.engine = std::make_unique<Engine>(*m.ctx, *m.file, eo, progress);
  for (const std::string& w : plan.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return m;
}

LoadedModel load_model(const ModelOptions& o, bool profiling, uint32_t slots,
                       std::function<void(const CheckReport&)> on_check) {
  return load_model(plan_model(o), o, profiling, slots, std::move(on_check));
}

void print_load_line(const LoadedModel& m) {
  MemoryReport mem = m.engine->memory();
  auto size = [](uint64_t b) { return human_bytes(double(b)); };
  std::string staging = mem.staging ? fmt::format(", upload staging {} while loading", size(mem.staging)) : "";
  std::string line = fmt::format("{} on {} (profile {}): weights {}, KV cache {} ({}, {}), activations {}{}",
                                 m.file->name(), m.ctx->caps().name, m.ctx->profile().name, size(mem.weights),
                                 size(mem.kv_cache), count(m.engine->n_ctx(), "token"),
                                 info(m.engine->kv_cache().type()).name, size(mem.activations), staging);
  std::fprintf(stderr, "%s\n", line.c_str());
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
    ENSURE(used == word.size() && v >= INT32_MIN && v <= INT32_MAX, "'" + word + "' is not a token id");
    ids.push_back(int32_t(v));
  }
  ENSURE(!ids.empty(), "no token ids given");
  return ids;
}

}  // namespace vkllm::cli
