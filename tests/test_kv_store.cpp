// ops::kv_store vs ref::kv_store: f16 and f32 caches, GQA head counts, arbitrary and out-of-range
// positions, strided sources, and the MLA latent row [c_kv; k_pe] written by two calls.
#include <fmt/format.h>
#include <algorithm>
#include <glm/gtc/packing.hpp>
#include <numeric>
#include <random>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

// The cache starts as `fill` (every element), so the test also sees what must stay untouched.
Buffer cache_buffer(size_t elems, bool f16, float fill) {
  Buffer b(test::gpu(), elems * (f16 ? 2 : 4), Memory::Device, "cache");
  if (f16) {
    std::vector<uint16_t> h(elems, glm::packHalf1x16(fill));
    b.upload(std::span<const uint16_t>(h));
  } else {
    std::vector<float> v(elems, fill);
    b.upload(std::span<const float>(v));
  }
  return b;
}

std::vector<float> cache_values(const Buffer& b, size_t elems, bool f16) {
  if (!f16) return b.download<float>(elems);
  std::vector<float> out;
  for (uint16_t h : b.download<uint16_t>(elems)) out.push_back(glm::unpackHalf1x16(h));
  return out;
}

}  // namespace

TEST_CASE("kv_store matches the reference", "[kv_store]") {
  struct Case {
    uint32_t n_tokens, n_kv_heads, head_dim, n_ctx;
  };
  const Case cases[] = {{1, 1, 64, 1}, {7, 2, 128, 40}, {3, 8, 80, 17}, {5, 1, 6, 9}, {1, 4, 256, 300}};
  test::for_each_profile([&](const Profile& profile) {
    for (Case c : cases)
      for (bool f16 : {true, false}) {
        // Distinct positions (two tokens never share one), in any order; -1 and n_ctx are skipped.
        std::vector<int32_t> pos(c.n_ctx + 2);
        std::iota(pos.begin(), pos.end(), -1);
        std::shuffle(pos.begin(), pos.end(), std::mt19937(90));
        pos.resize(c.n_tokens);
        size_t cache_elems = size_t(c.n_kv_heads) * c.n_ctx * c.head_dim;
        auto src = test::random_floats(size_t(c.n_tokens) * c.n_kv_heads * c.head_dim, 91, -70000, 70000);
        for (size_t i = 0; i < src.size(); i += 5) src[i] *= 1e-6f;  // small and subnormal f16 values
        std::vector<float> want(cache_elems, 0.5f);
        ref::kv_store(want.data(), src.data(), pos.data(), c.n_tokens, c.n_kv_heads, c.head_dim, c.n_ctx,
                      size_t(c.n_kv_heads) * c.head_dim, c.head_dim, 0, f16);
        Buffer gs = test::to_gpu(src), gp = test::to_gpu(pos), gc = cache_buffer(cache_elems, f16, 0.5f);
        Stream s(test::gpu());
        ops::kv_store(s, gs, gp, gc,
                      {.n_tokens = c.n_tokens,
                       .n_kv_heads = c.n_kv_heads,
                       .head_dim = c.head_dim,
                       .n_ctx = c.n_ctx,
                       .cache_f16 = f16});
        s.submit_wait();
        test::check_nmse(cache_values(gc, cache_elems, f16), want, f16 ? 1e-6 : 0.0,
                         fmt::format("kv_store {} tokens={} kv_heads={} head_dim={} n_ctx={} profile={}",
                                     f16 ? "f16" : "f32", c.n_tokens, c.n_kv_heads, c.head_dim, c.n_ctx, profile.name));
      }
  });
}

TEST_CASE("kv_store writes the MLA latent row in two parts", "[kv_store]") {
  // c_kv (n_tokens, 512) from its own buffer; k_pe from the last 64 of each 576-wide kv row.
  const uint32_t n_tokens = 4, lora = 512, rope = 64, row = lora + rope, n_ctx = 10;
  std::vector<int32_t> pos = {6, 7, 8, 9};
  auto c_kv = test::random_floats(n_tokens * lora, 92), kv = test::random_floats(n_tokens * row, 93);
  for (bool f16 : {true, false}) {
    std::vector<float> want(n_ctx * row, 0.0f);
    ref::kv_store(want.data(), c_kv.data(), pos.data(), n_tokens, 1, lora, n_ctx, lora, row, 0, f16);
    ref::kv_store(want.data(), kv.data() + lora, pos.data(), n_tokens, 1, rope, n_ctx, row, row, lora, f16);
    Buffer gc = test::to_gpu(c_kv), gkv = test::to_gpu(kv), gp = test::to_gpu(pos);
    Buffer cache = cache_buffer(n_ctx * row, f16, 0.0f);
    Stream s(test::gpu());
    ops::kv_store(s, gc, gp, cache,
                  {.n_tokens = n_tokens,
                   .n_kv_heads = 1,
                   .head_dim = lora,
                   .n_ctx = n_ctx,
                   .cache_f16 = f16,
                   .cache_head_dim = row});
    ops::kv_store(s, gkv.view(lora * 4, (n_tokens * row - lora) * 4), gp, cache,
                  {.n_tokens = n_tokens,
                   .n_kv_heads = 1,
                   .head_dim = rope,
                   .n_ctx = n_ctx,
                   .cache_f16 = f16,
                   .src_token_stride = row,
                   .cache_head_dim = row,
                   .cache_col = lora});
    s.submit_wait();
    test::check_nmse(cache_values(cache, n_ctx * row, f16), want, f16 ? 1e-6 : 0.0,
                     fmt::format("kv_store mla {}", f16 ? "f16" : "f32"));
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
