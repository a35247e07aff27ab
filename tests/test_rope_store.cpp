// ops::rope_kv_store vs ops::rope + ops::kv_store_pair (each tested against the reference in
// test_rope.cpp and test_kv_store.cpp): the same bytes in q and in both caches, in both pairings,
// with partial rotary and frequency factors, GQA, out-of-range rows, f16 and f32 caches; with the
// head norms, against ops::rmsnorm of q and k first (the same values but for the order of a sum).
#include <fmt/format.h>
#include <cstring>
#include <glm/gtc/packing.hpp>
#include <numeric>

#include "catch.h"
#include "harness.h"
#include "ops.h"

using namespace vkllm;

namespace {

struct RopeCase {
  uint32_t n, H, G, hd, rot, vd, n_ctx;
  ops::RopeMode mode;
  bool ff;
  bool qk_norm = false;
};

// The bytes of a cache of type t as floats.
std::vector<float> cache_floats(const Buffer& b, size_t bytes, DType t) {
  std::vector<uint8_t> raw = b.download<uint8_t>(bytes);
  std::vector<float> out(bytes / (t == DType::F32 ? 4 : 2));
  for (size_t i = 0; i < out.size(); ++i) {
    if (t == DType::F32) {
      std::memcpy(&out[i], &raw[4 * i], 4);
    } else {
      uint16_t h;
      std::memcpy(&h, &raw[2 * i], 2);
      out[i] = glm::unpackHalf1x16(h);
    }
  }
  return out;
}

void check_case(const RopeCase& c, DType t) {
  Context& ctx = test::gpu();
  uint32_t q_len = c.H * c.hd, k_len = c.G * c.hd, v_len = c.G * c.vd;
  // The qkv activation as the graph lays it out: q of every token, then k, then v (planar parts,
  // each at an offset a binding may start at, with a gap before it).
  uint32_t a = uint32_t(ctx.caps().binding_alignment() / 4);
  uint32_t k_at = (c.n * q_len + a) / a * a, v_at = (k_at + c.n * k_len + a) / a * a;
  std::vector<float> x = test::random_floats(size_t(v_at) + size_t(c.n) * v_len, 70, -2, 2);
  std::vector<int32_t> pos(c.n), rows(c.n);
  std::iota(pos.begin(), pos.end(), 1000);
  std::iota(rows.begin(), rows.end(), int32_t(c.n_ctx) - int32_t(c.n) + 1);  // the last is past the cache
  std::vector<float> ff = test::random_floats(c.rot / 2, 71, 1, 8);
  uint32_t word = t == DType::F32 ? 4 : 2;
  uint64_t k_bytes = uint64_t(c.G) * c.n_ctx * c.hd * word, v_bytes = uint64_t(c.G) * c.n_ctx * c.vd * word;
  uint64_t align = ctx.caps().binding_alignment(), v_off = (k_bytes + align - 1) / align * align;
  std::vector<uint8_t> zeros(v_off + v_bytes, 0x3c);
  Buffer gx1 = test::to_gpu(x), gx2 = test::to_gpu(x), gp = test::to_gpu(pos), gr = test::to_gpu(rows),
         gf = test::to_gpu(ff);
  Buffer c1(ctx, zeros.size(), Memory::Device, "kv1"), c2(ctx, zeros.size(), Memory::Device, "kv2");
  c1.upload(zeros.data(), zeros.size()), c2.upload(zeros.data(), zeros.size());
  ops::RopeParams p{.n_tokens = c.n,
                    .n_heads = c.H,
                    .head_dim = c.hd,
                    .rot_dim = c.rot,
                    .mode = c.mode,
                    .theta_base = 500000.0f,
                    .n_heads2 = c.G,
                    .token_stride2 = k_len,
                    .offset2 = k_at};
  BufferView factors = c.ff ? gf.view() : BufferView{};
  std::vector<float> qn = test::random_floats(c.hd, 72, 0.5f, 1.5f), kn = test::random_floats(c.hd, 73, 0.5f, 1.5f);
  Buffer gqn = test::to_gpu(qn), gkn = test::to_gpu(kn);
  Stream s(ctx);
  if (c.qk_norm) {
    ops::rmsnorm(s, gx1.view(0, 4ull * c.n * q_len), gqn, gx1.view(0, 4ull * c.n * q_len), c.n * c.H, c.hd, 1e-6f);
    ops::rmsnorm(s, gx1.view(4ull * k_at, 4ull * c.n * k_len), gkn, gx1.view(4ull * k_at, 4ull * c.n * k_len),
                 c.n * c.G, c.hd, 1e-6f);
  }
  ops::rope(s, gx1, gp, factors, gx1, p);
  ops::kv_store_pair(s, gx1.view(4ull * k_at, 4ull * c.n * k_len), gx1.view(4ull * v_at, 4ull * c.n * v_len), gr,
                     c1.view(0, k_bytes), c1.view(v_off, v_bytes),
                     {.n_tokens = c.n, .n_kv_heads = c.G, .head_dim = c.hd, .n_ctx = c.n_ctx, .cache_type = t}, c.vd);
  REQUIRE(ops::rope_kv_store_fits(c2.view(0, k_bytes), c2.view(v_off, v_bytes), t));
  ops::rope_kv_store(s, gx2, gp, factors, p, gr, c2.view(0, v_off + v_bytes),
                     {.cache_type = t,
                      .n_ctx = c.n_ctx,
                      .v_head_dim = c.vd,
                      .v_offset = v_at,
                      .v_token_stride = v_len,
                      .v_cache_offset = uint32_t(v_off / word),
                      .q_norm = c.qk_norm ? gqn.view() : BufferView{},
                      .k_norm = c.qk_norm ? gkn.view() : BufferView{},
                      .norm_eps = 1e-6f});
  s.submit_wait();
  INFO(fmt::format("rope_kv_store {} n={} H={} G={} hd={} rot={} vd={} mode={} ff={}", info(t).name, c.n, c.H, c.G,
                   c.hd, c.rot, c.vd, int(c.mode), c.ff));
  std::vector<float> q1 = test::from_gpu(gx1), q2 = test::from_gpu(gx2);
  CHECK(std::equal(q2.begin() + k_at, q2.end(), x.begin() + k_at));  // k and v left as they were
  if (c.qk_norm) {  // the norms' sums add in another order: the same values to rounding
    test::check_nmse(std::vector<float>(q2.begin(), q2.begin() + c.n * q_len),
                     std::vector<float>(q1.begin(), q1.begin() + c.n * q_len), 1e-12, "q");
    test::check_nmse(cache_floats(c2, zeros.size(), t), cache_floats(c1, zeros.size(), t),
                     t == DType::F32 ? 1e-12 : 1e-7, "cache");
    return;
  }
  CHECK(std::equal(q1.begin(), q1.begin() + c.n * q_len, q2.begin()));  // q rotated in place, the same bits
  CHECK(c1.download<uint8_t>(zeros.size()) == c2.download<uint8_t>(zeros.size()));
}

}  // namespace

TEST_CASE("rope_kv_store writes what rope and kv_store_pair write", "[rope][kv_store]") {
  const RopeCase cases[] = {{1, 4, 1, 64, 64, 64, 5, ops::RopeMode::Norm, false},
                            {5, 6, 2, 128, 128, 96, 9, ops::RopeMode::Neox, true},
                            {3, 8, 4, 80, 32, 80, 7, ops::RopeMode::Neox, false},
                            {4, 2, 2, 64, 48, 32, 6, ops::RopeMode::Norm, true},
                            {3, 4, 2, 128, 128, 128, 5, ops::RopeMode::Neox, false, true},
                            {2, 3, 1, 256, 64, 256, 4, ops::RopeMode::Neox, true, true}};
  for (DType t : {DType::F16, DType::F32})
    for (const RopeCase& c : cases) check_case(c, t);
}

TEST_CASE("rope_kv_store refuses a quantised cache", "[rope][kv_store]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 16, Memory::Device, "b");
  Stream s(ctx);
  ops::RopeParams p{.n_tokens = 1, .n_heads = 1, .head_dim = 32, .rot_dim = 32, .n_heads2 = 1, .offset2 = 32};
  CHECK_THROWS_WITH(ops::rope_kv_store(s, b, b.view(0, 4), {}, p, b.view(0, 4), b, {.cache_type = DType::Q8_0}),
                    Catch::Contains("f16 and f32 caches only"));
  CHECK_FALSE(ops::rope_kv_store_fits(b.view(0, 64), b.view(64, 64), DType::Q4_0));
}
