// ops::attention_probs (the attention capture) vs ref::attention_probs: one token, rows not a
// multiple of the workgroup, a long sequence, a chunk continuing a cached sequence, report rows
// longer than the keys, every query-per-KV-head ratio of 8 heads (MHA, GQA, MQA), the MLA latent
// row (576 wide), a sliding window, a soft-cap (gemma2), a second KV-cache slot, every KV-cache type and every
// profile. The reference sees the K the cache stores (f16-rounded or quantised and read back),
// so only arithmetic differs. Each case prints its NMSE and largest absolute error.
#include <fmt/format.h>

#include <cmath>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "push.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct ProbsCase {
  uint32_t n_q = 1, n_kv = 1, heads = 1, kv_heads = 1, dk = 64;
  DType kv = DType::F16;
  uint32_t window = 0;
  float softcap = 0;
  int pos0 = -1;          // position of the first query (-1: n_kv - n_q)
  uint32_t n_keys = 0;    // output row length (0: n_kv)
  uint32_t slot = 0;      // of two slots of `capacity` keys when 1
  uint32_t capacity = 0;  // keys per slot (0: n_kv)
  bool sinks = false;     // one sink logit per head: rows sum to 1 minus the sink's share

  uint32_t cap() const { return capacity ? capacity : n_kv; }
  uint32_t keys() const { return n_keys ? n_keys : n_kv; }
  uint32_t first_pos() const { return pos0 >= 0 ? uint32_t(pos0) : n_kv - n_q; }
  std::string describe() const {
    return fmt::format("q={} kv={} keys={} heads={}/{} dk={} {}{}{}{}{}", n_q, n_kv, keys(), heads, kv_heads, dk,
                       info(kv).name, window ? fmt::format(" window={}", window) : "",
                       softcap > 0 ? fmt::format(" softcap={}", softcap) : "",
                       slot ? fmt::format(" slot={}", slot) : "", sinks ? " sinks" : "");
  }
};

// Runs the case on the GPU and the reference; returns the largest absolute error.
double check_probs(const ProbsCase& c, const std::string& tag = "") {
  Context& ctx = test::gpu();
  uint32_t slots = c.slot + 1, cap = c.cap(), keys = c.keys();
  std::vector<float> q = test::random_floats(size_t(c.n_q) * c.heads * c.dk, 7, -2, 2);
  std::vector<float> k = test::random_floats(size_t(c.kv_heads) * slots * cap * c.dk, 8, -1, 1);
  ref::round_trip(c.kv, k.data(), k.size());
  std::vector<uint8_t> kbytes = ref::quantize(c.kv, k.data(), k.size() / c.dk, c.dk);
  Buffer gk(ctx, kbytes.size(), Memory::Device, "k");
  gk.upload(kbytes.data(), kbytes.size());
  Buffer gq = test::to_gpu(q, "q");
  Buffer step(ctx, sizeof(push::StepParams), Memory::Host, "step");
  push::StepParams sp{.pos0 = c.first_pos(), .n_tokens = c.n_q, .n_kv = c.n_kv, .slot = c.slot};
  step.upload(&sp, sizeof sp);
  ops::AttentionShape shape{.n_q = c.n_q,
                            .kv_slots = slots,
                            .n_heads = c.heads,
                            .n_kv_heads = c.kv_heads,
                            .dk = c.dk,
                            .dv = c.dk,
                            .kv_type = c.kv,
                            .window = c.window,
                            .softcap = c.softcap,
                            .max_kv = cap};
  Buffer out(ctx, ops::attention_probs_bytes(shape, keys), Memory::Device, "probabilities");
  std::vector<float> sinks = test::random_floats(c.heads, 9, -3, 4);
  Buffer gsinks = test::to_gpu(sinks, "sinks");
  Stream s(ctx);
  ops::attention_probs(s, shape, gq, gk, step, out, keys, c.sinks ? BufferView(gsinks) : BufferView{});
  s.submit_wait();

  // The reference over the slot's keys.
  ref::AttentionParams a{.n_q = c.n_q,
                         .n_heads = c.heads,
                         .n_kv_heads = c.kv_heads,
                         .dk = c.dk,
                         .q_row_stride = size_t(c.heads) * c.dk,
                         .k_head_stride = size_t(slots) * cap * c.dk,
                         .k_row_stride = c.dk,
                         .scale = 1.0 / std::sqrt(double(c.dk)),
                         .softcap = c.softcap,
                         .causal = true,
                         .window = c.window,
                         .pos0 = c.first_pos(),
                         .n_kv = c.n_kv,
                         .sinks = c.sinks ? sinks.data() : nullptr};
  std::vector<float> want(size_t(c.heads) * c.n_q * keys);
  ref::attention_probs(want.data(), q.data(), k.data() + size_t(c.slot) * cap * c.dk, a, keys);
  std::vector<float> got = test::from_gpu(out);
  test::Comparison cmp = test::compare(got, want);
  std::string what = c.describe() + tag;
  test::check_nmse(got, want, 1e-10, "attention probs " + what);
  INFO(what);
  CHECK(cmp.max_abs <= 1e-5);
  return cmp.max_abs;
}

}  // namespace

TEST_CASE("attention probabilities over awkward lengths, every grouping and MLA rows", "[attention][probs]") {
  const ProbsCase cases[] = {
      {.n_q = 1, .n_kv = 1, .heads = 2, .kv_heads = 2},                                             // one token
      {.n_q = 37, .n_kv = 37, .heads = 8, .kv_heads = 8},                                           // MHA prefill
      {.n_q = 37, .n_kv = 37, .heads = 8, .kv_heads = 4, .dk = 80},                                 // GQA 2
      {.n_q = 21, .n_kv = 300, .heads = 8, .kv_heads = 2, .kv = DType::F32},                        // GQA 4, a chunk
      {.n_q = 3, .n_kv = 1100, .heads = 8, .kv_heads = 1},                                          // MQA, long
      {.n_q = 9, .n_kv = 40, .heads = 6, .kv_heads = 3, .n_keys = 70},                              // rows past n_kv
      {.n_q = 130, .n_kv = 130, .heads = 2, .kv_heads = 1, .dk = 128, .window = 16},                // sliding window
      {.n_q = 7, .n_kv = 90, .heads = 4, .kv_heads = 2, .window = 20, .softcap = 3.0f},             // gemma2
      {.n_q = 5, .n_kv = 50, .heads = 4, .kv_heads = 2, .slot = 1, .capacity = 64},                 // slot 1
      {.n_q = 11, .n_kv = 11, .heads = 4, .kv_heads = 1, .dk = 576},                                // MLA latent rows
      {.n_q = 30, .n_kv = 70, .heads = 8, .kv_heads = 2, .kv = DType::Q8_0},                        // quantised caches
      {.n_q = 12, .n_kv = 12, .heads = 4, .kv_heads = 1, .dk = 576, .kv = DType::Q4_0},             // MLA q4_0
      {.n_q = 17, .n_kv = 60, .heads = 4, .kv_heads = 2, .window = 8, .sinks = true},               // gpt-oss sinks
      {.n_q = 3, .n_kv = 50, .heads = 2, .kv_heads = 1, .window = 20, .pos0 = 100, .sinks = true},  // none seen
  };
  for (const ProbsCase& c : cases) check_probs(c);
}

TEST_CASE("attention probabilities under every profile", "[attention][probs]") {
  test::for_each_profile([](const Profile& profile) {
    check_probs({.n_q = 19, .n_kv = 333, .heads = 6, .kv_heads = 2, .dk = 96}, " profile=" + profile.name);
  });
}

TEST_CASE("attention probabilities refuse a batch of sequences and an output that does not fit", "[attention][probs]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 4096, Memory::Device, "b");
  Stream s(ctx);
  ops::AttentionShape two{.n_q = 2, .seqs = 2, .kv_slots = 2, .n_heads = 1, .dk = 64, .dv = 64, .max_kv = 8};
  CHECK_THROWS_WITH(ops::attention_probs(s, two, b, b, b, b, 8), Catch::Contains("one sequence"));
  ops::AttentionShape huge{.n_q = 4096, .n_heads = 64, .dk = 64, .dv = 64, .max_kv = 4096};
  CHECK_THROWS_WITH(ops::attention_probs(s, huge, b, b, b, b, 1u << 20), Catch::Contains("more than one storage"));
}
