// ops::matmul_fused vs ref::matmul_fused: the products whose epilogue does the next op's work
// (the residual add, a gated FFN's activation) or writes planar parts (q, k, v from one product), on both kernels
// (the gate only on matvec) over awkward shapes, a few
// weight types and every profile. Pipelines are the cost here (each spec-constant set compiles for 0.5-3 s on
// llvmpipe), so types are spread thinly over kernels and profiles.
#include <fmt/format.h>

#include "catch.h"
#include "weight_cases.h"

using namespace vkllm;

namespace {

const char* kernel_name(ops::MatmulKernel k) { return k == ops::MatmulKernel::Matvec ? "matvec" : "tiled"; }

// y starts as random values (the residual stream) when accumulating.
void check_fused(DType t, test::MatmulCase c, ref::MatmulFusion rf, ops::MatmulKernel kernel, uint32_t seed,
                 bool with_bias = false, const std::string& note = "", bool normed = false) {
  uint32_t rows = rf.glu ? 2 * c.M : c.M;  // gate then up
  test::Weights w = test::random_weights(t, rows, c.K, seed);
  std::vector<float> x = test::random_floats(size_t(c.N) * c.K, seed + 1);
  // The residual stream: a scale far from 1 (so a missing norm shows), and a norm weight around 1.
  for (float& v : x) v *= normed ? 7.5f : 1.0f;
  std::vector<float> g = test::random_floats(c.K, seed + 4);
  for (float& v : g) v = 1.0f + 0.5f * v;
  if (normed) rf.norm = g.data(), rf.norm_eps = 1e-5f;
  std::vector<float> bias = test::random_floats(with_bias ? rows : 1, seed + 2);
  size_t y_floats = ref::matmul_fused_size(c.M, c.N, rf);
  std::vector<float> want = test::random_floats(y_floats, seed + 3);
  Buffer gy = test::to_gpu(want);
  ref::matmul_fused(want.data(), w.values.data(), x.data(), c.M, c.N, c.K, rf, with_bias ? bias.data() : nullptr);
  Buffer gw = test::bytes_to_gpu(w.stored), gx = test::to_gpu(x), gb = test::to_gpu(bias), gg = test::to_gpu(g);
  Stream s(test::gpu());
  ops::MatmulFusion f{.accumulate = rf.accumulate,
                      .split = {uint32_t(rf.split[0]), uint32_t(rf.split[1])},
                      .offset = {uint32_t(rf.offset[0]), uint32_t(rf.offset[1])},
                      .glu = ops::Glu(rf.glu),
                      .kernel = kernel,
                      .norm = normed ? gg.view() : BufferView{},
                      .norm_eps = rf.norm_eps};
  ops::matmul_fused(s, t, gw, gx, gy, c.M, c.N, c.K, f, with_bias ? gb.view() : BufferView{});
  s.submit_wait();
  test::check_nmse(test::from_gpu(gy), want, test::nmse_bound(t),
                   fmt::format("matmul_fused {} {} M={} N={} K={}{}{}{}{}{}", kernel_name(kernel), test::type_name(t),
                               c.M, c.N, c.K, rf.accumulate ? " accumulate" : "", with_bias ? " bias" : "",
                               rf.glu ? fmt::format(" glu={}", rf.glu) : "", normed ? " norm" : "", note));
}

constexpr ops::MatmulKernel kKernels[] = {ops::MatmulKernel::Matvec, ops::MatmulKernel::Tiled};

}  // namespace

TEST_CASE("matmul_fused accumulates into y (the residual add)", "[matmul_fused]") {
  const ref::MatmulFusion acc{.accumulate = true};
  for (DType t : {DType::F32, DType::Q8_0, DType::Q4_K}) {
    std::vector<uint32_t> ks = test::awkward_k(t);
    check_fused(t, {1, 1, ks[0]}, acc, ops::MatmulKernel::Matvec, 1);
    check_fused(t, {37, 3, ks[1]}, acc, ops::MatmulKernel::Matvec, 2, true);
    check_fused(t, {70, 13, ks.back()}, acc, ops::MatmulKernel::Tiled, 3);
  }
}

// q, k and v as one product: three parts with gaps between them (values there must survive).
TEST_CASE("matmul_fused stores planar parts", "[matmul_fused]") {
  for (uint32_t N : {1u, 3u, 12u}) {
    ref::MatmulFusion parts{.split = {7, 12}, .offset = {7 * N + 5, 7 * N + 5 + 5 * N + 3}};
    for (DType t : {DType::F16, DType::Q4_0}) {
      ops::MatmulKernel k = N < 9 ? ops::MatmulKernel::Matvec : ops::MatmulKernel::Tiled;
      check_fused(t, {17, N, test::awkward_k(t)[1]}, parts, k, 5 + N, N == 3);
    }
  }
  ref::MatmulFusion two{.split = {1, 0}, .offset = {2}};  // two parts, the first one row wide
  check_fused(DType::F32, {9, 2, 45}, two, ops::MatmulKernel::Matvec, 9);
}

// gate|up as one product with SiLU or GELU in the epilogue: one output row, rows not a multiple of
// any profile's rows per workgroup, several token blocks.
TEST_CASE("matmul_fused gates the FFN's hidden state", "[matmul_fused]") {
  for (DType t : {DType::F32, DType::Q8_0, DType::Q4_K}) {
    std::vector<uint32_t> ks = test::awkward_k(t);
    for (int glu : {1, 2}) {
      check_fused(t, {1, 1, ks[0]}, {.glu = glu}, ops::MatmulKernel::Matvec, 20 + glu);
      check_fused(t, {37, 3, ks[1]}, {.glu = glu}, ops::MatmulKernel::Matvec, 22 + glu);
      check_fused(t, {70, 6, ks.back()}, {.glu = glu}, ops::MatmulKernel::Matvec, 24 + glu);
    }
  }
}

// The RMSNorm before a block's first projection, read into the matvec: alone, with the planar
// q/k/v parts and a bias, with the gate, over several token blocks and every kind of K tail.
TEST_CASE("matmul_fused norms its input", "[matmul_fused]") {
  for (DType t : {DType::F32, DType::F16, DType::Q8_0, DType::Q4_0, DType::Q4_K}) {
    std::vector<uint32_t> ks = test::awkward_k(t);
    check_fused(t, {1, 1, ks[0]}, {}, ops::MatmulKernel::Matvec, 40, false, "", true);
    check_fused(t, {17, 3, ks[1]}, {.split = {7, 12}, .offset = {7 * 3 + 5, 7 * 3 + 5 + 5 * 3 + 3}},
                ops::MatmulKernel::Matvec, 41, true, "", true);
    check_fused(t, {37, 11, ks.back()}, {.glu = 1}, ops::MatmulKernel::Matvec, 42, false, "", true);
  }
  check_fused(DType::Q8_0, {19, 2, 96}, {.accumulate = true}, ops::MatmulKernel::Matvec, 43, false, "", true);
}

TEST_CASE("matmul_fused refuses a gated product it cannot run", "[matmul_fused]") {
  Context& ctx = test::gpu();
  Buffer b(ctx, 1 << 16, Memory::Device, "b"), y(ctx, 1 << 12, Memory::Device, "y");
  Stream s(ctx);
  ops::MatmulFusion tiled{.glu = ops::Glu::Silu, .kernel = ops::MatmulKernel::Tiled};
  CHECK_THROWS_WITH(ops::matmul_fused(s, DType::F32, b, b, y, 8, 9, 32, tiled), Catch::Contains("matvec kernel alone"));
  ops::MatmulFusion accumulate{.accumulate = true, .glu = ops::Glu::Gelu};
  CHECK_THROWS_WITH(ops::matmul_fused(s, DType::F32, b, b, y, 8, 1, 32, accumulate), Catch::Contains("matvec kernel"));
  uint32_t big = 1u << 20;  // tiled on GPU profiles, matvec on llvmpipe
  CHECK(ops::matmul_fusable(s, {.glu = ops::Glu::Silu}, big) == (big < ctx.profile().matmul_tiled_min_n));
  CHECK(ops::matmul_fusable(s, {.glu = ops::Glu::Silu}, 1));
  ops::MatmulFusion normed{.kernel = ops::MatmulKernel::Tiled, .norm = b.view(0, 128)};
  CHECK_THROWS_WITH(ops::matmul_fused(s, DType::F32, b, b.view(0, 4096), y, 8, 9, 32, normed),
                    Catch::Contains("norms its input"));
  CHECK(ops::matmul_fusable(s, {.norm = b.view(0, 128)}, big) ==
        (ctx.profile().matvec_norm && big < ctx.profile().matmul_tiled_min_n));
}

TEST_CASE("matmul_fused under every profile", "[matmul_fused]") {
  test::for_each_profile([&](const Profile& profile) {
    for (ops::MatmulKernel k : kKernels)
      check_fused(DType::Q8_0, {19, 5, 96}, {.accumulate = true, .split = {3, 11}, .offset = {16, 60}}, k, 4, false,
                  " profile=" + profile.name);
    check_fused(DType::Q4_0, {21, 3, 128}, {.glu = 2}, ops::MatmulKernel::Matvec, 6, false, " profile=" + profile.name,
                true);
    check_fused(DType::Q8_0, {19, 5, 96}, {.glu = 1}, ops::MatmulKernel::Matvec, 6, false, " profile=" + profile.name);
  });
}
