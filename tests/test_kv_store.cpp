// ops::kv_store vs ref::kv_store: f16, f32, q8_0 and q4_0 caches (quantised as rows are written),
// GQA head counts, arbitrary and out-of-range positions, strided sources, and the MLA latent row
// [c_kv; k_pe] written by two calls, and K and V by one dispatch (kv_store_pair).
#include <fmt/format.h>
#include <algorithm>
#include <array>
#include <numeric>
#include <random>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

// The cache starts as `fill` (every element, stored as `type`), so the test also sees what must
// stay untouched.
Buffer cache_buffer(size_t elems, DType type, float fill) {
  std::vector<float> v(elems, fill);
  std::vector<uint8_t> bytes = ref::quantize(type, v.data(), 1, elems);
  Buffer b(test::gpu(), bytes.size(), Memory::Device, "cache");
  b.upload(bytes.data(), bytes.size());
  return b;
}

// The cache's values as the attention kernels read them.
std::vector<float> cache_values(const Buffer& b, size_t elems, DType type) {
  std::vector<uint8_t> bytes = b.download<uint8_t>(row_bytes(type, elems));
  return ref::dequantize(type, bytes.data(), 1, elems);
}

std::string dtype_name(DType t) { return std::string(info(t).name); }

// f16: the device's f32 -> f16 conversion may round differently in the last bit. Quantised: the
// GPU computes 1/d and x/d in f32 as ggml does, but a value within rounding of a code boundary may
// land on the next code; rare enough that the NMSE stays far below one step.
double bound(DType t) { return t == DType::F32 ? 0.0 : t == DType::F16 ? 1e-6 : 1e-5; }

}  // namespace

TEST_CASE("kv_store matches the reference", "[kv_store]") {
  struct Case {
    uint32_t n_tokens, n_kv_heads, head_dim, n_ctx;
  };
  const Case cases[] = {{1, 1, 64, 1}, {7, 2, 128, 40}, {3, 8, 80, 17}, {5, 1, 6, 9}, {1, 4, 256, 300}};
  test::for_each_profile([&](const Profile& profile) {
    for (Case c : cases)
      for (DType t : {DType::F16, DType::F32, DType::Q8_0, DType::Q4_0}) {
        if (c.head_dim % info(t).block_values) continue;
        bool f16 = t == DType::F16;
        // Distinct positions (two tokens never share one), in any order; -1 and n_ctx are skipped.
        std::vector<int32_t> pos(c.n_ctx + 2);
        std::iota(pos.begin(), pos.end(), -1);
        std::shuffle(pos.begin(), pos.end(), std::mt19937(90));
        pos.resize(c.n_tokens);
        size_t cache_elems = size_t(c.n_kv_heads) * c.n_ctx * c.head_dim;
        float range = f16 || t == DType::F32 ? 70000 : 3;
        auto src = test::random_floats(size_t(c.n_tokens) * c.n_kv_heads * c.head_dim, 91, -range, range);
        for (size_t i = 0; i < src.size(); i += 5) src[i] *= 1e-6f;  // small and subnormal f16 values
        if (!f16 && t != DType::F32)
          for (size_t i = 0; i < std::min<size_t>(src.size(), 64); ++i) src[i] = 0;  // a block of zeros: d = 0
        std::vector<float> want = cache_values(cache_buffer(cache_elems, t, 0.5f), cache_elems, t);
        ref::kv_store(want.data(), src.data(), pos.data(), c.n_tokens, c.n_kv_heads, c.head_dim, c.n_ctx,
                      size_t(c.n_kv_heads) * c.head_dim, c.head_dim, 0, t);
        Buffer gs = test::to_gpu(src), gp = test::to_gpu(pos), gc = cache_buffer(cache_elems, t, 0.5f);
        Stream s(test::gpu());
        ops::kv_store(s, gs, gp, gc,
                      {.n_tokens = c.n_tokens,
                       .n_kv_heads = c.n_kv_heads,
                       .head_dim = c.head_dim,
                       .n_ctx = c.n_ctx,
                       .cache_type = t});
        s.submit_wait();
        test::check_nmse(cache_values(gc, cache_elems, t), want, bound(t),
                         fmt::format("kv_store {} tokens={} kv_heads={} head_dim={} n_ctx={} profile={}", dtype_name(t),
                                     c.n_tokens, c.n_kv_heads, c.head_dim, c.n_ctx, profile.name));
      }
  });
}

TEST_CASE("kv_store writes the MLA latent row in two parts", "[kv_store]") {
  // c_kv (n_tokens, 512) from its own buffer; k_pe from the last 64 of each 576-wide kv row.
  const uint32_t n_tokens = 4, lora = 512, rope = 64, row = lora + rope, n_ctx = 10;
  std::vector<int32_t> pos = {6, 7, 8, 9};
  auto c_kv = test::random_floats(n_tokens * lora, 92), kv = test::random_floats(n_tokens * row, 93);
  for (DType t : {DType::F16, DType::F32, DType::Q8_0, DType::Q4_0}) {
    std::vector<float> want(n_ctx * row, 0.0f);
    ref::kv_store(want.data(), c_kv.data(), pos.data(), n_tokens, 1, lora, n_ctx, lora, row, 0, t);
    ref::kv_store(want.data(), kv.data() + lora, pos.data(), n_tokens, 1, rope, n_ctx, row, row, lora, t);
    Buffer gc = test::to_gpu(c_kv), gkv = test::to_gpu(kv), gp = test::to_gpu(pos);
    Buffer cache = cache_buffer(n_ctx * row, t, 0.0f);
    Stream s(test::gpu());
    ops::kv_store(s, gc, gp, cache,
                  {.n_tokens = n_tokens,
                   .n_kv_heads = 1,
                   .head_dim = lora,
                   .n_ctx = n_ctx,
                   .cache_type = t,
                   .cache_head_dim = row});
    ops::kv_store(s, gkv.view(lora * 4, (n_tokens * row - lora) * 4), gp, cache,
                  {.n_tokens = n_tokens,
                   .n_kv_heads = 1,
                   .head_dim = rope,
                   .n_ctx = n_ctx,
                   .cache_type = t,
                   .src_token_stride = row,
                   .cache_head_dim = row,
                   .cache_col = lora});
    s.submit_wait();
    test::check_nmse(cache_values(cache, n_ctx * row, t), want, bound(t), "kv_store mla " + dtype_name(t));
  }
}

TEST_CASE("kv_store rejects columns outside the cache row", "[kv_store]") {
  Buffer b(test::gpu(), 1 << 16, Memory::Device, "b");
  Stream s(test::gpu());
  CHECK_THROWS_WITH(
      ops::kv_store(
          s, b, b, b,
          {.n_tokens = 1, .n_kv_heads = 1, .head_dim = 64, .n_ctx = 4, .cache_head_dim = 576, .cache_col = 513}),
      "kv_store: columns 513..577 outside cache rows of 576");
}

TEST_CASE("kv_store rejects quantised rows that are not whole blocks", "[kv_store]") {
  Buffer b(test::gpu(), 1 << 16, Memory::Device, "b");
  Stream s(test::gpu());
  CHECK_THROWS_WITH(
      ops::kv_store(s, b, b, b,
                    {.n_tokens = 1, .n_kv_heads = 1, .head_dim = 48, .n_ctx = 4, .cache_type = DType::Q8_0}),
      Catch::Contains("a q8_0 cache stores whole blocks of 32 values"));
}

// K and V as the graph stores them: sources in one buffer (k, a gap, v: the qkv activation), caches
// in one buffer (K, then V at an aligned offset: a layer's KV buffer), one dispatch; and the same
// from separate buffers (two dispatches). V may be narrower than K.
TEST_CASE("kv_store_pair writes K and V as two kv_stores would", "[kv_store]") {
  Context& ctx = test::gpu();
  uint64_t align = ctx.caps().binding_alignment();
  for (auto [n, G, hd, vd, n_ctx] : {std::array<uint32_t, 5>{1, 1, 64, 64, 3}, {6, 2, 128, 64, 21}})
    for (DType t : {DType::F16, DType::F32, DType::Q8_0, DType::Q4_0}) {
      std::vector<int32_t> pos(n);
      std::iota(pos.begin(), pos.end(), int32_t(n_ctx - n));
      size_t k_elems = size_t(G) * n_ctx * hd, v_elems = size_t(G) * n_ctx * vd;
      auto k = test::random_floats(size_t(n) * G * hd, 92, -3, 3),
           v = test::random_floats(size_t(n) * G * vd, 93, -3, 3);
      std::vector<float> want_k = cache_values(cache_buffer(k_elems, t, 0.5f), k_elems, t);
      std::vector<float> want_v = cache_values(cache_buffer(v_elems, t, 0.5f), v_elems, t);
      ref::kv_store(want_k.data(), k.data(), pos.data(), n, G, hd, n_ctx, size_t(G) * hd, hd, 0, t);
      ref::kv_store(want_v.data(), v.data(), pos.data(), n, G, vd, n_ctx, size_t(G) * vd, vd, 0, t);
      // One source buffer: k, 13 floats of gap, v; one cache buffer: K, V at an aligned offset.
      std::vector<float> src(k);
      src.resize(k.size() + 13, 7.0f);
      src.insert(src.end(), v.begin(), v.end());
      uint64_t k_bytes = row_bytes(t, k_elems), v_at = (k_bytes + align - 1) / align * align;
      std::vector<float> cache_init(k_elems, 0.5f);
      std::vector<uint8_t> k0 = ref::quantize(t, cache_init.data(), 1, k_elems);
      cache_init.assign(v_elems, 0.5f);
      std::vector<uint8_t> v0 = ref::quantize(t, cache_init.data(), 1, v_elems), both(v_at + v0.size(), 0);
      std::copy(k0.begin(), k0.end(), both.begin());
      std::copy(v0.begin(), v0.end(), both.begin() + v_at);
      Buffer gs = test::to_gpu(src), gp = test::to_gpu(pos), gc(ctx, both.size(), Memory::Device, "kv");
      gc.upload(both.data(), both.size());
      Buffer sk = test::to_gpu(k), sv = test::to_gpu(v), ck = cache_buffer(k_elems, t, 0.5f),
             cv = cache_buffer(v_elems, t, 0.5f);
      ops::KvStoreParams p{.n_tokens = n, .n_kv_heads = G, .head_dim = hd, .n_ctx = n_ctx, .cache_type = t};
      Stream s(ctx);
      ops::kv_store_pair(s, gs.view(0, k.size() * 4), gs.view((k.size() + 13) * 4, v.size() * 4), gp,
                         gc.view(0, k_bytes), gc.view(v_at, v0.size()), p, vd);
      ops::kv_store_pair(s, sk, sv, gp, ck, cv, p, vd);
      s.submit_wait();
      std::vector<uint8_t> got = gc.download<uint8_t>(both.size());
      std::string what = fmt::format("kv_store_pair {} tokens={} kv_heads={} k={} v={}", dtype_name(t), n, G, hd, vd);
      test::check_nmse(ref::dequantize(t, got.data(), 1, k_elems), want_k, bound(t), what + " K");
      test::check_nmse(ref::dequantize(t, got.data() + v_at, 1, v_elems), want_v, bound(t), what + " V");
      test::check_nmse(cache_values(ck, k_elems, t), want_k, bound(t), what + " K, apart");
      test::check_nmse(cache_values(cv, v_elems, t), want_v, bound(t), what + " V, apart");
    }
}
