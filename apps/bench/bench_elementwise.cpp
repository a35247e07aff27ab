// `vkllm-bench elementwise`: time of the elementwise, row, position and selection kernels at a
// model's shapes, with the bandwidth each reaches (bytes each kernel must move at least / time).
#include <fmt/format.h>
#include <functional>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench.h"
#include "ops.h"

namespace vkllm::bench {

namespace {

struct Shapes {
  uint32_t tokens = 1, dim = 4096, ffn = 14336, heads = 32, kv_heads = 8, head_dim = 128, vocab = 128256;
  uint32_t n_ctx = 4096, top_k = 40;
  std::string only;  // run the ops whose name contains this
};

struct Case {
  std::string op, shape;
  double bytes;  // minimum traffic: each input read once, each output written once
  std::function<void(Stream&)> record;
};

// The buffers every case uses, filled once.
struct Buffers {
  Buffers(const Context& ctx, const Shapes& sh)
      : x(make(ctx, uint64_t(sh.tokens) * sh.dim * 4)),
        y(make(ctx, uint64_t(sh.tokens) * sh.dim * 4)),
        w(make(ctx, sh.dim * 4)),
        g(make(ctx, uint64_t(sh.tokens) * sh.ffn * 4)),
        u(make(ctx, uint64_t(sh.tokens) * sh.ffn * 4)),
        q(make(ctx, uint64_t(sh.tokens) * sh.heads * sh.head_dim * 4)),
        k(make(ctx, uint64_t(sh.tokens) * sh.kv_heads * sh.head_dim * 4)),
        pos(make(ctx, sh.tokens * 4)),
        cache(make(ctx, uint64_t(sh.kv_heads) * sh.n_ctx * sh.head_dim * 2)),
        logits(make(ctx, uint64_t(sh.tokens) * sh.vocab * 4)),
        probs(make(ctx, uint64_t(sh.tokens) * sh.vocab * 4)),
        idx(make(ctx, uint64_t(sh.tokens) * sh.top_k * 4)),
        val(make(ctx, uint64_t(sh.tokens) * sh.top_k * 4)) {
    std::vector<int32_t> positions(sh.tokens);
    for (uint32_t t = 0; t < sh.tokens; ++t) positions[t] = int32_t(t);
    pos.upload(std::span<const int32_t>(positions));
    // Logits that look like logits: distinct values (ties make top-k take its slower path).
    std::vector<float> l(uint64_t(sh.tokens) * sh.vocab);
    uint32_t state = 1;
    for (float& v : l) state = state * 1664525u + 1013904223u, v = float(state >> 8) / float(1 << 24) * 20 - 10;
    logits.upload(std::span<const float>(l));
  }
  static Buffer make(const Context& ctx, uint64_t bytes) {
    return Buffer(ctx, std::max<uint64_t>(bytes, 4), Memory::Device, "bench");
  }
  Buffer x, y, w, g, u, q, k, pos, cache, logits, probs, idx, val;
};

std::vector<Case> cases(const Buffers& b, const Shapes& sh) {
  const uint32_t t = sh.tokens;
  double n = double(t) * sh.dim, nf = double(t) * sh.ffn, nv = double(t) * sh.vocab;
  std::string td = fmt::format("{}x{}", t, sh.dim), tf = fmt::format("{}x{}", t, sh.ffn);
  std::string tv = fmt::format("{}x{}", t, sh.vocab);
  ops::RopeParams rp{
      .n_tokens = t, .n_heads = sh.heads, .head_dim = sh.head_dim, .rot_dim = sh.head_dim, .theta_base = 5e5f};
  ops::KvStoreParams kp{.n_tokens = t, .n_kv_heads = sh.kv_heads, .head_dim = sh.head_dim, .n_ctx = sh.n_ctx};
  return {
      {"rmsnorm", td, 8 * n, [&, t](Stream& s) { ops::rmsnorm(s, b.x, b.w, b.y, t, sh.dim, 1e-5f); }},
      {"layernorm", td, 8 * n, [&, t](Stream& s) { ops::layernorm(s, b.x, b.w, b.w, b.y, t, sh.dim, 1e-5f); }},
      {"add", td, 12 * n, [&, n](Stream& s) { ops::add(s, b.x, b.y, b.y, uint32_t(n)); }},
      {"add_rows", td, 8 * n, [&, t](Stream& s) { ops::add_rows(s, b.x, b.w, b.y, t, sh.dim); }},
      {"swiglu", tf, 12 * nf, [&, nf](Stream& s) { ops::swiglu(s, b.g, b.u, b.g, uint32_t(nf)); }},
      {"gelu", tf, 8 * nf, [&, nf](Stream& s) { ops::gelu(s, b.g, b.u, uint32_t(nf)); }},
      {"rope", fmt::format("{}x{}x{}", t, sh.heads, sh.head_dim), 8.0 * t * sh.heads * sh.head_dim,
       [&, rp](Stream& s) { ops::rope(s, b.q, b.pos, {}, b.q, rp); }},
      {"kv_store_f16", fmt::format("{}x{}x{}", t, sh.kv_heads, sh.head_dim), 6.0 * t * sh.kv_heads * sh.head_dim,
       [&, kp](Stream& s) { ops::kv_store(s, b.k, b.pos, b.cache, kp); }},
      {"softmax_rows", tv, 8 * nv, [&, t](Stream& s) { ops::softmax_rows(s, b.logits, b.probs, t, sh.vocab); }},
      {"argmax_rows", tv, 4 * nv, [&, t](Stream& s) { ops::argmax_rows(s, b.logits, b.idx, t, sh.vocab); }},
      {fmt::format("topk_rows_k{}", sh.top_k), tv, 4 * nv,
       [&, t](Stream& s) { ops::topk_rows(s, b.logits, b.idx, b.val, t, sh.vocab, sh.top_k); }},
  };
}

void run(const CommonOptions& common, const Shapes& sh) {
  Context ctx(common.context());
  Buffers buffers(ctx, sh);
  nlohmann::json out = {
      {"device", ctx.caps().name}, {"profile", ctx.profile().name}, {"kernels", nlohmann::json::array()}};
  if (!common.json) {
    fmt::print("{} (profile {}), median GPU time of 10 runs\n", ctx.caps().name, ctx.profile().name);
    fmt::print("{:<16} {:>18} {:>10} {:>8}\n", "op", "shape", "us", "GB/s");
  }
  for (const Case& c : cases(buffers, sh)) {
    if (c.op.find(sh.only) == std::string::npos) continue;
    Timing t = time_stream(ctx, c.record);
    double us = t.ms_median * 1e3, gbps = c.bytes / (t.ms_median * 1e6);
    if (common.json)
      out["kernels"].push_back({{"op", c.op}, {"shape", c.shape}, {"us", us}, {"gbps", gbps}});
    else
      fmt::print("{:<16} {:>18} {:>10.1f} {:>8.2f}\n", c.op, c.shape, us, gbps);
  }
  if (common.json) fmt::print("{}\n", out.dump(2));
}

}  // namespace

void add_elementwise_bench(CLI::App& app) {
  static CommonOptions common;
  static Shapes sh;
  CLI::App* cmd = app.add_subcommand("elementwise", "norms, activations, rope, kv_store, softmax, argmax, top-k");
  add_common_options(cmd, common);
  cmd->add_option("--tokens", sh.tokens, "Tokens per call (1: decode)")->type_name("N")->check(int_range(1, 1 << 16));
  cmd->add_option("--dim", sh.dim, "Model width")->type_name("N")->check(int_range(1, 1 << 16));
  cmd->add_option("--ffn", sh.ffn, "Feed-forward width")->type_name("N")->check(int_range(1, 1 << 18));
  cmd->add_option("--vocab", sh.vocab, "Vocabulary size (softmax, argmax, top-k rows)")
      ->type_name("N")
      ->check(int_range(1, 1 << 20));
  cmd->add_option("--top-k", sh.top_k, "k of topk_rows")->type_name("K")->check(int_range(1, ops::kTopkMax));
  cmd->add_option("--only", sh.only, "Run only the ops whose name contains this")->type_name("TEXT");
  cmd->callback([] { run(common, sh); });
}

}  // namespace vkllm::bench
