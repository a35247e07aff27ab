// vkllm-bench attention: flash attention (or the naive baseline) over a KV cache, timed by GPU
// timestamps (median of several replays after a warm-up), with the device memory it allocated.
#include <fmt/format.h>
#include <nlohmann/json.hpp>
#include <random>

#include "bench.h"
#include "error.h"
#include "ops.h"
#include "output.h"
#include "push.h"
#include "reference/quant.h"

namespace vkllm::bench {

namespace {

struct AttnOptions {
  CommonOptions common;
  uint32_t q_len = 1, kv_len = 512, heads = 8, kv_heads = 8, head_dim = 128, v_dim = 0;
  bool naive = false, causal = false, f32_kv = false;
  std::string kv_type = "f16";
  uint32_t splits = 0;
  int warmup = 2, runs = 10;
};

// Device buffers filled with uniform random values in [-1, 1], stored as `type` (K/V: f16, f32,
// or quantised rows of `row` values by the reference quantiser).
Buffer random_buffer(const Context& ctx, size_t n, DType type, uint32_t seed, const char* name, size_t row = 0) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> f(n);
  for (float& x : f) x = dist(rng);
  std::vector<uint8_t> bytes = ref::quantize(type, f.data(), row ? n / row : 1, row ? row : n);
  Buffer b(ctx, std::max<size_t>(bytes.size(), 4), Memory::Device, name);
  b.upload(bytes.data(), bytes.size());
  return b;
}

// Query-key pairs the mask leaves visible: n_q * n_kv without a mask; with the causal mask the
// query at position p sees min(p + 1, n_kv) keys (about half of a square matrix).
double visible_pairs(const AttnOptions& o, uint32_t pos0) {
  if (!o.causal) return double(o.q_len) * o.kv_len;
  double pairs = 0;
  for (uint32_t r = 0; r < o.q_len; ++r) pairs += std::min<double>(pos0 + r + 1.0, o.kv_len);
  return pairs;
}

void run(const AttnOptions& o) {
  ENSURE(
      o.heads % o.kv_heads == 0,
      fmt::format("--kv-heads {} does not divide --heads {} (query heads are shared in groups)", o.kv_heads, o.heads));
  Context ctx(o.common.context());
  uint32_t dv = o.v_dim ? o.v_dim : o.head_dim;
  std::optional<DType> kv = dtype_named(o.f32_kv ? "f32" : o.kv_type);
  ENSURE(kv && (*kv == DType::F16 || *kv == DType::F32 || *kv == DType::Q8_0 || *kv == DType::Q4_0),
         fmt::format("--kv-type {}: f16, f32, q8_0 or q4_0", o.kv_type));
  std::string kv_name(info(*kv).name);
  ops::AttentionShape sh{.n_q = o.q_len,
                         .n_heads = o.heads,
                         .n_kv_heads = o.kv_heads,
                         .dk = o.head_dim,
                         .dv = dv,
                         .kv_type = *kv,
                         .causal = o.causal,
                         .max_kv = o.kv_len,
                         .force_splits = o.splits};
  // Everything this run allocates on the device, counted as it is created.
  uint64_t scratch_bytes = o.naive ? ops::attention_naive_scratch_bytes(sh) : ops::attention_scratch_bytes(ctx, sh);
  if (o.naive)
    ENSURE(scratch_bytes <= ctx.caps().max_storage_buffer_range,
           fmt::format("naive attention does not fit: its score matrix needs {} MiB, one binding holds at most {} MiB",
                       scratch_bytes >> 20, ctx.caps().max_storage_buffer_range >> 20));
  Buffer q = random_buffer(ctx, size_t(o.q_len) * o.heads * o.head_dim, DType::F32, 1, "q");
  Buffer k = random_buffer(ctx, size_t(o.kv_heads) * o.kv_len * o.head_dim, *kv, 2, "k", o.head_dim);
  Buffer v = random_buffer(ctx, size_t(o.kv_heads) * o.kv_len * dv, *kv, 3, "v", dv);
  Buffer out(ctx, size_t(o.q_len) * o.heads * dv * 4, Memory::Device, "o");
  Buffer step(ctx, sizeof(push::StepParams), Memory::Device, "step");
  std::optional<Buffer> scratch;
  if (scratch_bytes) scratch.emplace(ctx, scratch_bytes, Memory::Device, "scratch");
  if (scratch && !o.naive) ops::clear_attention_scratch(ctx, *scratch);
  uint64_t peak = q.size() + k.size() + v.size() + out.size() + step.size() + (scratch ? scratch->size() : 0);
  uint32_t pos0 = o.kv_len >= o.q_len ? o.kv_len - o.q_len : 0;
  push::StepParams sp{.pos0 = pos0, .n_tokens = o.q_len, .n_kv = o.kv_len};
  step.upload(&sp, sizeof(sp));

  BufferView sv = scratch ? BufferView(*scratch) : BufferView{};
  Timing tm = time_stream(
      ctx,
      [&](Stream& s) {
        if (o.naive)
          ops::attention_naive(s, sh, q, k, v, step, out, sv);
        else
          ops::attention(s, sh, q, k, v, step, out, sv);
      },
      o.warmup, o.runs);
  ops::AttentionPlan plan = ops::attention_plan(ctx, sh);
  double flops = 2.0 * visible_pairs(o, pos0) * (o.head_dim + dv) * o.heads;
  double tflops = flops / (tm.ms_median * 1e-3) / 1e12;
  std::string kernel = o.naive ? "naive" : plan.splits > 1 ? "flash split-K" : "flash";
  if (o.common.json) {
    nlohmann::json j = {{"op", "attention"},         {"kernel", kernel},
                        {"q_len", o.q_len},          {"kv_len", o.kv_len},
                        {"heads", o.heads},          {"kv_heads", o.kv_heads},
                        {"head_dim", o.head_dim},    {"v_dim", dv},
                        {"causal", o.causal},        {"kv_type", kv_name},
                        {"device", ctx.caps().name}, {"profile", ctx.profile().name},
                        {"ms_median", tm.ms_median}, {"ms_min", tm.ms_min},
                        {"runs", tm.runs},           {"tflops", tflops},
                        {"device_bytes_peak", peak}};
    if (!o.naive) j["plan"] = {{"br", plan.br}, {"bc", plan.bc}, {"wg", plan.wg}, {"splits", plan.splits}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("attention ({}) q_len={} kv_len={} heads={}/{} dims={}/{} {}{} on {} (profile {})\n", kernel, o.q_len,
             o.kv_len, o.heads, o.kv_heads, o.head_dim, dv, kv_name, o.causal ? " causal" : "", ctx.caps().name,
             ctx.profile().name);
  if (!o.naive) fmt::print("  tiles br={} bc={} wg={} splits={}\n", plan.br, plan.bc, plan.wg, plan.splits);
  fmt::print("  median {:.3f} ms (min {:.3f}, {}): {:.3f} GFLOP/s, {:.1f} MiB of device memory\n", tm.ms_median,
             tm.ms_min, cli::count(tm.runs, "run"), tflops * 1e3, peak / 1048576.0);
}

}  // namespace

void add_attention_bench(CLI::App& app) {
  static AttnOptions o;
  CLI::App* cmd = app.add_subcommand("attention", "Flash attention over a KV cache (TFLOP/s, device memory)");
  cmd->add_option("--q-len", o.q_len, "Query tokens")->type_name("N")->check(int_range(1, 1 << 16));
  cmd->add_option("--kv-len", o.kv_len, "Keys in the cache")->type_name("N")->check(int_range(1, 1 << 22));
  cmd->add_option("--heads", o.heads, "Query heads")->type_name("N")->check(int_range(1, 1024));
  cmd->add_option("--kv-heads", o.kv_heads, "KV heads (divides --heads)")->type_name("N")->check(int_range(1, 1024));
  cmd->add_option("--head-dim", o.head_dim, "Q/K head dim")->type_name("N")->check(int_range(1, 1024));
  cmd->add_option("--v-dim", o.v_dim, "V head dim; 0: --head-dim")->type_name("N")->check(int_range(0, 1024));
  cmd->add_flag("--naive", o.naive, "The naive baseline (score matrix in device memory)");
  cmd->add_flag("--causal", o.causal, "Causal mask (queries are the last q-len positions)");
  cmd->add_option("--kv-type", o.kv_type, "K/V storage (q8_0, q4_0: flash only)")
      ->type_name("TYPE")
      ->check(one_of({"f16", "f32", "q8_0", "q4_0"}));
  cmd->add_flag("--f32-kv", o.f32_kv, "The same as --kv-type f32");
  cmd->add_option("--splits", o.splits, "Force this many key splits; 0: planned")
      ->type_name("N")
      ->check(int_range(0, 1024));
  add_repeat_options(cmd, o.warmup, o.runs);
  add_common_options(cmd, o.common);
  cmd->callback([] { run(o); });
}

}  // namespace vkllm::bench
