// ops::rope vs ref::rope: both pairings, partial rotary dims, arbitrary positions, linear scaling,
// Llama-3 frequency factors at long positions, YaRN on MLA-strided heads (deepseek2), in place,
// replay with new positions, q and k in one dispatch, and the NORM/NEOX permutation identity
// (docs/formats.md §3.3).
// Bounds: the angle pos * freq is an f32 (as in ggml and HF), so its rounding error, up to half an
// ulp of thousands of radians, sets the NMSE; it grows with the square of the position. Measured
// on lavapipe: ~7e-10 at positions < 4096, ~1.4e-9 < 8192, ~6e-9 < 30000 (ggml's own CPU rope:
// 2.6e-9 < 8192; the best any f32 angle can do: 3.7e-10).
#include <fmt/format.h>
#include <array>
#include <cmath>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

ref::RopeSpec spec_of(const ops::RopeParams& p) {
  ref::RopeSpec spec{.n_tokens = p.n_tokens,
                     .n_heads = p.n_heads,
                     .head_dim = p.head_dim,
                     .rot_dim = p.rot_dim,
                     .neox = p.mode == ops::RopeMode::Neox,
                     .theta_base = p.theta_base,
                     .freq_scale = p.freq_scale,
                     .ext_factor = p.ext_factor,
                     .attn_factor = p.attn_factor,
                     .n_ctx_orig = double(p.n_ctx_orig),
                     .beta_fast = p.beta_fast,
                     .beta_slow = p.beta_slow,
                     .token_stride = p.token_stride,
                     .head_stride = p.head_stride,
                     .interleaved = p.interleaved};
  std::copy_n(p.sections, 4, spec.sections);
  return spec;
}

std::vector<int32_t> random_positions(size_t n, int32_t lo, int32_t hi, uint32_t seed) {
  std::vector<int32_t> v;
  for (float f : test::random_floats(n, seed, float(lo), float(hi) + 1)) v.push_back(std::min(int32_t(f), hi));
  return v;
}

// x: the whole buffer (strided layouts leave gaps); `offset` elements in is where rope starts.
std::vector<float> gpu_rope(const std::vector<float>& x, const std::vector<int32_t>& pos, const std::vector<float>& ff,
                            const ops::RopeParams& p, size_t offset = 0) {
  Buffer gx = test::to_gpu(x), gp = test::to_gpu(pos), gf = test::to_gpu(ff);
  BufferView view = gx.view(offset * 4, (x.size() - offset) * 4);
  Stream s(test::gpu());
  ops::rope(s, view, gp, ff.empty() ? BufferView{} : gf.view(), view, p);  // in place
  s.submit_wait();
  return test::from_gpu(gx);
}

std::vector<float> ref_rope(std::vector<float> x, const std::vector<int32_t>& pos, const std::vector<float>& ff,
                            const ops::RopeParams& p, size_t offset = 0) {
  ref::rope(x.data() + offset, x.data() + offset, pos.data(), ff.empty() ? nullptr : ff.data(), spec_of(p));
  return x;
}

}  // namespace

TEST_CASE("rope matches the reference in both pairings", "[rope]") {
  struct Shape {
    uint32_t n_tokens, n_heads, head_dim, rot_dim;
    float base, freq_scale;
  };
  const Shape shapes[] = {{1, 1, 2, 2, 1e4f, 1},       {5, 3, 64, 64, 1e4f, 1}, {7, 4, 128, 128, 5e5f, 1},
                          {3, 2, 80, 80, 1e6f, 0.25f}, {4, 3, 96, 32, 1e4f, 1}, {33, 2, 6, 4, 1e4f, 0.5f}};
  test::for_each_profile([&](const Profile& profile) {
    for (Shape sh : shapes)
      for (ops::RopeMode mode : {ops::RopeMode::Norm, ops::RopeMode::Neox}) {
        ops::RopeParams p{.n_tokens = sh.n_tokens,
                          .n_heads = sh.n_heads,
                          .head_dim = sh.head_dim,
                          .rot_dim = sh.rot_dim,
                          .mode = mode,
                          .theta_base = sh.base,
                          .freq_scale = sh.freq_scale};
        auto x = test::random_floats(size_t(sh.n_tokens) * sh.n_heads * sh.head_dim, 80);
        auto pos = random_positions(sh.n_tokens, 0, 4096, 81);
        test::check_nmse(gpu_rope(x, pos, {}, p), ref_rope(x, pos, {}, p), 2e-9,
                         fmt::format("rope {} tokens={} heads={} head_dim={} rot_dim={} base={} freq_scale={} "
                                     "profile={}",
                                     mode == ops::RopeMode::Neox ? "neox" : "norm", sh.n_tokens, sh.n_heads,
                                     sh.head_dim, sh.rot_dim, sh.base, sh.freq_scale, profile.name));
      }
  });
}

// q (n, H, hd) and k (n, G, hd) of one qkv activation, k starting after a gap (the binding
// alignment), rotated by one dispatch: equal to the reference applied to each, the gap untouched.
TEST_CASE("rope rotates q and k in one dispatch", "[rope]") {
  for (auto [n, H, G, hd, rot] : {std::array<uint32_t, 5>{1, 4, 1, 64, 64}, {7, 6, 2, 80, 80}, {13, 4, 4, 96, 32}})
    for (ops::RopeMode mode : {ops::RopeMode::Norm, ops::RopeMode::Neox}) {
      uint32_t gap = 37, offset2 = n * H * hd + gap;
      ops::RopeParams q{.n_tokens = n, .n_heads = H, .head_dim = hd, .rot_dim = rot, .mode = mode, .theta_base = 1e6f};
      ops::RopeParams k = q;
      k.n_heads = G;
      ops::RopeParams both = q;
      both.n_heads2 = G, both.token_stride2 = G * hd, both.offset2 = offset2;
      auto x = test::random_floats(offset2 + size_t(n) * G * hd, 90);
      auto pos = random_positions(n, 0, 4096, 91);
      std::vector<float> want = ref_rope(ref_rope(x, pos, {}, q), pos, {}, k, offset2);
      test::check_nmse(gpu_rope(x, pos, {}, both), want, 2e-9,
                       fmt::format("rope q+k {} tokens={} heads={}+{} head_dim={} rot_dim={}",
                                   mode == ops::RopeMode::Neox ? "neox" : "norm", n, H, G, hd, rot));
    }
}

TEST_CASE("rope with Llama-3.2-1B frequency factors up to position 8191", "[rope]") {
  // rope_freqs as the converter computes them: base 5e5, 64 dims, factor 32, low 1, high 4, L 8192.
  auto ff = ref::llama3_rope_freq_factors(64, 5e5, 32, 1, 4, 8192);
  REQUIRE(ff.size() == 32);
  // docs/formats.md §3.4: 15 x 1, 3 smoothed (1.6513, 3.2923, 9.6667), 14 x 32.
  for (int i = 0; i < 15; ++i) CHECK(ff[i] == 1.0f);
  CHECK(ff[15] == Approx(1.6513).margin(1e-4));
  CHECK(ff[16] == Approx(3.2923).margin(1e-4));
  CHECK(ff[17] == Approx(9.6667).margin(1e-4));
  for (int i = 18; i < 32; ++i) CHECK(ff[i] == 32.0f);

  ops::RopeParams p{.n_tokens = 64, .n_heads = 4, .head_dim = 64, .rot_dim = 64, .theta_base = 5e5f};
  auto x = test::random_floats(size_t(64) * 4 * 64, 82);
  auto pos = random_positions(64, 0, 8191, 83);
  pos[0] = 8191, pos[1] = 0, pos[2] = 1, pos[3] = 7999;
  test::for_each_profile([&](const Profile& profile) {
    test::check_nmse(gpu_rope(x, pos, ff, p), ref_rope(x, pos, ff, p), 5e-9,
                     fmt::format("rope llama3 factors positions<8192 profile={}", profile.name));
  });
}

TEST_CASE("rope with YaRN on MLA-strided heads as deepseek2", "[rope]") {
  // DeepSeek-V2-Lite: 64 rope dims, base 1e4, original context 4096, factor 40 (docs/formats.md §3.5).
  auto corr = ops::rope_yarn_corr_dims(64, 4096, 1e4f, 32, 1);
  CHECK(corr.low == 10.0f);
  CHECK(corr.high == 23.0f);
  const uint32_t n_tokens = 9, heads = 3, q_head = 192, nope = 128, kv_row = 576, lora = 512;
  auto pos = random_positions(n_tokens, 0, 30000, 84);
  test::for_each_profile([&](const Profile& profile) {
    for (float attn_factor : {1.0f / (1.0f + 0.1f * std::log(40.0f)), 1.0f}) {
      ops::RopeParams p{.n_tokens = n_tokens,
                        .n_heads = heads,
                        .head_dim = 64,
                        .rot_dim = 64,
                        .mode = ops::RopeMode::Norm,
                        .theta_base = 1e4f,
                        .freq_scale = 1.0f / 40,
                        .ext_factor = 1,
                        .attn_factor = attn_factor,
                        .n_ctx_orig = 4096,
                        .token_stride = heads * q_head,
                        .head_stride = q_head};
      // q: (n_tokens, heads, 192) = [q_nope(128); q_pe(64)] per head; rope the q_pe parts in place.
      auto q = test::random_floats(size_t(n_tokens) * heads * q_head, 85);
      test::check_nmse(gpu_rope(q, pos, {}, p, nope), ref_rope(q, pos, {}, p, nope), 3e-8,
                       fmt::format("rope yarn q_pe attn_factor={} profile={}", attn_factor, profile.name));
      // kv: (n_tokens, 576) = [c_kv(512); k_pe(64)]; one shared k_pe head per token.
      p.n_heads = 1, p.token_stride = kv_row, p.head_stride = 0;
      auto kv = test::random_floats(size_t(n_tokens) * kv_row, 86);
      test::check_nmse(gpu_rope(kv, pos, {}, p, lora), ref_rope(kv, pos, {}, p, lora), 3e-8,
                       fmt::format("rope yarn k_pe attn_factor={} profile={}", attn_factor, profile.name));
    }
  });
}

TEST_CASE("rope replays with new positions from the buffer", "[rope]") {
  Context& ctx = test::gpu();
  ops::RopeParams p{.n_tokens = 2, .n_heads = 2, .head_dim = 16, .rot_dim = 16, .mode = ops::RopeMode::Neox};
  auto x = test::random_floats(64, 87);
  Buffer gx = test::to_gpu(x), gy(ctx, 64 * 4, Memory::Device, "y");
  Buffer gp = test::to_gpu(std::vector<int32_t>{3, 4});
  Stream s(ctx);
  ops::rope(s, gx, gp, {}, gy, p);  // x -> y, recorded once
  for (std::vector<int32_t> pos : {std::vector<int32_t>{3, 4}, std::vector<int32_t>{100, 2000}}) {
    gp.upload(std::span<const int32_t>(pos));
    s.submit_wait();
    test::check_nmse(test::from_gpu(gy), ref_rope(x, pos, {}, p), 1e-9, fmt::format("rope replay pos={}", pos[0]));
  }
}

TEST_CASE("neox rope on HF rows equals norm rope on the converter's permuted rows", "[rope]") {
  // docs/formats.md §3.3: GGUF row 2j = HF row j, GGUF row 2j+1 = HF row j + half.
  const uint32_t n_tokens = 5, heads = 2, dim = 32, half = dim / 2;
  auto hf = test::random_floats(n_tokens * heads * dim, 88);
  std::vector<float> gguf(hf.size());
  for (uint32_t r = 0; r < n_tokens * heads; ++r)
    for (uint32_t j = 0; j < half; ++j)
      gguf[r * dim + 2 * j] = hf[r * dim + j], gguf[r * dim + 2 * j + 1] = hf[r * dim + j + half];
  auto pos = random_positions(n_tokens, 0, 2000, 89);
  ops::RopeParams p{.n_tokens = n_tokens, .n_heads = heads, .head_dim = dim, .rot_dim = dim};
  p.mode = ops::RopeMode::Neox;
  auto neox = gpu_rope(hf, pos, {}, p);
  p.mode = ops::RopeMode::Norm;
  auto norm = gpu_rope(gguf, pos, {}, p);
  std::vector<float> unpermuted(norm.size());
  for (uint32_t r = 0; r < n_tokens * heads; ++r)
    for (uint32_t j = 0; j < half; ++j)
      unpermuted[r * dim + j] = norm[r * dim + 2 * j], unpermuted[r * dim + j + half] = norm[r * dim + 2 * j + 1];
  test::check_nmse(unpermuted, neox, 0.0, "rope neox vs permuted norm");
}

// Qwen3.5's sectioned rope of text tokens (interleaved M-RoPE, sections {11, 11, 10, 0}, NEOX,
// 64 of 256 dims): no pair is in the 4th section, so it equals plain partial rope; sections with a
// 4th part ({8, 8, 8, 8}, interleaved or in turn; {3, 2, 1, 5} with a rot_dim that wraps) turn
// those pairs by position 0 (the reference decides which: ref::rope_pair_is_fourth_section).
TEST_CASE("rope with sections (Qwen3.5 M-RoPE for text)", "[rope]") {
  struct Case {
    uint32_t sections[4];
    bool interleaved;
    uint32_t head_dim, rot_dim;
    size_t fourth;  // pairs in the 4th section
  };
  const Case cases[] = {{{11, 11, 10, 0}, true, 256, 64, 0},
                        {{8, 8, 8, 8}, true, 64, 64, 8},
                        {{8, 8, 8, 8}, false, 80, 64, 8},
                        {{3, 2, 1, 5}, true, 48, 48, 10},
                        {{3, 2, 1, 5}, false, 48, 48, 10}};
  test::for_each_profile([&](const Profile& profile) {
    for (const Case& c : cases)
      for (ops::RopeMode mode : {ops::RopeMode::Norm, ops::RopeMode::Neox}) {
        const uint32_t n = 9, heads = 3;
        ops::RopeParams p{.n_tokens = n,
                          .n_heads = heads,
                          .head_dim = c.head_dim,
                          .rot_dim = c.rot_dim,
                          .mode = mode,
                          .theta_base = 1e7f,
                          .interleaved = c.interleaved};
        std::copy_n(c.sections, 4, p.sections);
        auto x = test::random_floats(size_t(n) * heads * c.head_dim, 92);
        auto pos = random_positions(n, 0, 4096, 93);
        std::vector<float> want = ref_rope(x, pos, {}, p);
        std::string what =
            fmt::format("rope sections {} {} {} {}{} {} head_dim={} rot_dim={} profile={}", c.sections[0],
                        c.sections[1], c.sections[2], c.sections[3], c.interleaved ? " interleaved" : "",
                        mode == ops::RopeMode::Neox ? "neox" : "norm", c.head_dim, c.rot_dim, profile.name);
        test::check_nmse(gpu_rope(x, pos, {}, p), want, 2e-9, what);
        size_t fourth = 0;
        for (uint32_t i = 0; i < c.rot_dim / 2; ++i) fourth += ref::rope_pair_is_fourth_section(spec_of(p), i);
        ops::RopeParams plain = p;
        std::fill_n(plain.sections, 4, 0u);
        if (fourth == 0) test::check_nmse(want, ref_rope(x, pos, {}, plain), 0.0, what + " vs plain rope");
        CHECK(fourth == c.fourth);
      }
  });
}

TEST_CASE("rope rejects bad dimensions", "[rope]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 4096, Memory::Device, "b");
  Stream s(ctx);
  ops::RopeParams p{.n_tokens = 1, .n_heads = 1, .head_dim = 64, .rot_dim = 65};
  CHECK_THROWS_WITH(ops::rope(s, b, b, {}, b, p),
                    "rope: rot_dim 65 and head_dim 64 must be even, 0 < rot_dim <= head_dim");
  p.rot_dim = 64, p.ext_factor = 1;
  CHECK_THROWS_WITH(ops::rope(s, b, b, {}, b, p), "rope: YaRN (ext_factor != 0) needs n_ctx_orig");
}

// Mistral 3's attention temperature: the queries of the token at position p times
// 1 + beta·ln(floor(p / n) + 1); 1 below n, then steps at every multiple of n. Only the first
// `width` values of each token row change (the rest of the qkv row is K and V).
TEST_CASE("attention temperature scales queries by position", "[rope][temperature]") {
  Context& ctx = test::gpu();
  const uint32_t width = 24, stride = 40, length = 16;
  const float beta = 0.1f;
  std::vector<int32_t> pos = {0, 15, 16, 31, 32, 100, 4095, 65537};
  uint32_t n = uint32_t(pos.size());
  auto x = test::random_floats(size_t(n) * stride, 91);
  Buffer gx = test::to_gpu(x), gp = test::to_gpu(pos);
  Stream s(ctx);
  ops::attn_temperature(s, gx, gp, n, width, stride, beta, length);
  s.submit_wait();
  std::vector<float> want = x;
  for (uint32_t t = 0; t < n; ++t) {
    double f = 1 + beta * std::log(std::floor(double(pos[t]) / length) + 1);
    for (uint32_t j = 0; j < width; ++j) want[t * stride + j] = float(want[t * stride + j] * f);
  }
  std::vector<float> got = test::from_gpu(gx);
  test::check_nmse(got, want, 1e-12, "attention temperature");
  for (uint32_t j = 0; j < width; ++j) CHECK(got[j] == x[j]);                                 // position 0: factor 1
  for (uint32_t j = width; j < stride; ++j) CHECK(got[5 * stride + j] == x[5 * stride + j]);  // K, V untouched
}
