// Flash attention over a batch of sequences (continuous batching): one call takes the query
// tokens of several sequences, each at its own positions and attending over its own KV-cache
// slot; every sequence's output must equal ref::attention run for that sequence alone. Covers
// decode and prefill mixed, GQA/MQA/MLA, single-token and long sequences, forced split-K and
// every profile.
#include <fmt/format.h>

#include "attention_case.h"
#include "catch.h"

using namespace vkllm;

namespace {

struct Seq {
  uint32_t slot, pos0, n;  // n query tokens at positions pos0 .. pos0 + n - 1; keys 0 .. pos0 + n - 1
};

struct BatchCase {
  uint32_t heads = 8, kv_heads = 2, dk = 64, dv = 64;
  bool f16 = true, mla_view = false;
  uint32_t capacity = 64, slots = 4, splits = 0;
  std::vector<Seq> seqs;

  std::string describe() const {
    std::string s =
        fmt::format("heads={}/{} d={}/{} {} cap={} slots={}{}{}:", heads, kv_heads, dk, dv, f16 ? "f16" : "f32",
                    capacity, slots, mla_view ? " mla-view" : "", splits ? fmt::format(" splits={}", splits) : "");
    for (const Seq& q : seqs) s += fmt::format(" [slot {} pos {} n {}]", q.slot, q.pos0, q.n);
    return s;
  }
};

Buffer upload_kv(const std::vector<float>& x, bool f16, const char* name) {
  if (!f16) return test::to_gpu(x, name);
  std::vector<uint8_t> h = ref::quantize(DType::F16, x.data(), 1, x.size());
  Buffer b(test::gpu(), h.size(), Memory::Device, name);
  b.upload(h.data(), h.size());
  return b;
}

void check_batch(const BatchCase& c, double bound = 1e-10) {
  Context& ctx = test::gpu();
  uint32_t n_q = 0, most = 0;
  for (const Seq& q : c.seqs) n_q += q.n, most = std::max(most, q.n);
  uint64_t rows = uint64_t(c.slots) * c.capacity;
  auto qv = test::random_floats(size_t(n_q) * c.heads * c.dk, 1, -2, 2);
  // f16 K/V are rounded first, so the reference sees the same values and only arithmetic differs.
  auto k = test::random_floats(c.kv_heads * rows * c.dk, 2);
  if (c.f16) ref::round_trip(DType::F16, k.data(), k.size());
  auto v = c.mla_view ? k : test::random_floats(c.kv_heads * rows * c.dv, 3);
  if (c.f16 && !c.mla_view) ref::round_trip(DType::F16, v.data(), v.size());

  ops::AttentionShape sh{.n_q = n_q,
                         .seqs = uint32_t(c.seqs.size()),
                         .seq_q = most,
                         .kv_slots = c.slots,
                         .n_heads = c.heads,
                         .n_kv_heads = c.kv_heads,
                         .dk = c.dk,
                         .dv = c.dv,
                         .kv_type = c.f16 ? DType::F16 : DType::F32,
                         .causal = true,
                         .max_kv = c.capacity,
                         .force_splits = c.splits};
  if (c.mla_view) sh.v_head_stride = sh.k_head_stride = uint32_t(rows * c.dk), sh.v_row_stride = c.dk;
  std::vector<push::StepParams> step;
  for (const Seq& q : c.seqs) step.push_back({.pos0 = q.pos0, .n_tokens = q.n, .n_kv = q.pos0 + q.n, .slot = q.slot});

  Buffer gq = test::to_gpu(qv, "q"), gk = upload_kv(k, c.f16, "k");
  std::optional<Buffer> gv;
  if (!c.mla_view) gv.emplace(upload_kv(v, c.f16, "v"));
  Buffer go(ctx, size_t(n_q) * c.heads * c.dv * 4, Memory::Device, "o");
  Buffer gs(ctx, step.size() * sizeof(push::StepParams), Memory::Host, "step");
  gs.upload(step.data(), step.size() * sizeof(push::StepParams));
  uint64_t scratch_bytes = ops::attention_scratch_bytes(ctx, sh);
  std::optional<Buffer> scratch;
  if (scratch_bytes) scratch.emplace(ctx, scratch_bytes, Memory::Device, "scratch");
  if (scratch) ops::clear_attention_scratch(ctx, *scratch);
  Stream s(ctx);
  ops::attention(s, sh, gq, gk, c.mla_view ? BufferView(gk) : BufferView(*gv), gs, go,
                 scratch ? BufferView(*scratch) : BufferView{});
  s.submit_wait();
  std::vector<float> got = test::from_gpu(go);

  std::vector<float> want(got.size());
  uint32_t first = 0;
  for (const Seq& q : c.seqs) {
    size_t k_head = rows * c.dk, v_head = c.mla_view ? rows * c.dk : rows * c.dv;
    size_t v_row = c.mla_view ? c.dk : c.dv;
    ref::AttentionParams a{.n_q = q.n,
                           .n_heads = c.heads,
                           .n_kv_heads = c.kv_heads,
                           .dk = c.dk,
                           .dv = c.dv,
                           .q_row_stride = size_t(c.heads) * c.dk,
                           .o_row_stride = size_t(c.heads) * c.dv,
                           .k_head_stride = k_head,
                           .k_row_stride = c.dk,
                           .v_head_stride = v_head,
                           .v_row_stride = v_row,
                           .scale = 1.0 / std::sqrt(double(c.dk)),
                           .causal = true,
                           .pos0 = q.pos0,
                           .n_kv = q.pos0 + q.n};
    size_t slot_row0 = size_t(q.slot) * c.capacity;
    ref::attention(&want[size_t(first) * c.heads * c.dv], &qv[size_t(first) * c.heads * c.dk], &k[slot_row0 * c.dk],
                   &v[slot_row0 * v_row], a);
    first += q.n;
  }
  test::check_nmse(got, want, bound, c.describe());
}

}  // namespace

TEST_CASE("batched attention: decode and prefill of several sequences in one call", "[attention][batch]") {
  // Decode tokens and prefill chunks mixed, in slots out of order, one sequence at the end of its slot.
  check_batch({.seqs = {{2, 37, 1}, {0, 0, 13}, {3, 63, 1}, {1, 5, 20}}});
  // Every sequence decoding (one row per KV group each), and one token per sequence at position 0.
  check_batch(
      {.heads = 4, .kv_heads = 1, .dk = 80, .dv = 80, .f16 = false, .seqs = {{0, 10, 1}, {1, 0, 1}, {3, 50, 1}}});
  // One long prefill among decodes: several key tiles, rows of one sequence over several blocks.
  check_batch({.heads = 6, .kv_heads = 3, .capacity = 700, .slots = 2, .seqs = {{1, 100, 1}, {0, 0, 300}}});
  // A single sequence in a slot other than 0.
  check_batch({.heads = 8, .kv_heads = 8, .seqs = {{3, 20, 7}}});
}

TEST_CASE("batched attention: MLA latent rows and forced split-K", "[attention][batch]") {
  check_batch({.heads = 4,
               .kv_heads = 1,
               .dk = 576,
               .dv = 512,
               .mla_view = true,
               .capacity = 48,
               .slots = 3,
               .seqs = {{1, 20, 1}, {0, 3, 5}, {2, 47, 1}}},
              1e-9);
  check_batch({.capacity = 600, .slots = 3, .splits = 3, .seqs = {{2, 400, 1}, {0, 599, 1}, {1, 0, 9}}});
}

TEST_CASE("batched attention under every profile", "[attention][batch]") {
  test::for_each_profile([](const Profile& p) {
    INFO(p.name);
    check_batch({.seqs = {{1, 30, 1}, {0, 0, 11}, {2, 5, 1}}});
  });
}
