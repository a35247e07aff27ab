// ops::matvec (decode kernel) vs the reference: every weight type over awkward shapes (K not a
// multiple of the workgroup stride, M = 1, odd M, 1 to 8 tokens), K = 11008, every profile, bias,
// and the batched strided form DeepSeek MLA uses. Each distinct shape class is a pipeline that
// llvmpipe compiles in 0.5-3 s, so token counts and profiles are spread thinly over the types.
#include <fmt/format.h>

#include "catch.h"
#include "weight_cases.h"

using namespace vkllm;

TEST_CASE("matvec matches the reference for every weight type", "[matvec]") {
  for (DType t : test::weight_types()) {
    std::vector<uint32_t> ks = test::awkward_k(t);
    const test::MatmulCase cases[] = {
        {1, 1, ks[0]}, {37, 1, ks[1]}, {64, 2, ks[2]}, {19, 2, ks.back()}, {130, 1, ks.back()}};
    for (test::MatmulCase c : cases) test::check_matmul_case(ops::matvec, "matvec", t, c, c.M + c.K);
  }
}

// With matvec_wide_loads (Q8_0) and matvec_wide_q4 (Q4_0, IQ4_NL), rows are read in aligned 16-byte words where the
// weight view runs to a multiple of 16 bytes: blocks start at every even byte offset of a word,
// and the last one ends at the view.
TEST_CASE("matvec reads 32-value blocks in 16-byte words where the view allows", "[matvec]") {
  struct Restore {
    ~Restore() { test::gpu().set_profile(choose_profile(test::gpu().caps())); }
  } restore;
  Profile p = test::gpu().profile();
  p.matvec_wide_loads = p.matvec_wide_q4 = true;
  test::gpu().set_profile(p);
  for (DType t : {DType::Q8_0, DType::Q4_0, DType::IQ4_NL})
    for (uint32_t k : test::awkward_k(t))
      for (test::MatmulCase c : {test::MatmulCase{1, 1, k}, {37, 1, k}, {19, 3, k}, {130, 2, k}}) {
        if (t != DType::Q8_0 && c.M == 130) continue;  // fewer pipelines: the odd shapes suffice
        size_t bytes = size_t(c.M) * row_bytes(t, c.K);
        test::check_matmul_case(ops::matvec, "matvec", t, c, c.M + k, false, " padded", (16 - bytes % 16) % 16);
        test::check_matmul_case(ops::matvec, "matvec", t, c, c.M + k, true, " slack 40", 40);
      }
}

TEST_CASE("matvec over several token blocks", "[matvec]") {
  for (DType t : {DType::F16, DType::Q4_K})
    for (uint32_t n : {3u, 8u, 21u})
      test::check_matmul_case(ops::matvec, "matvec", t, {29, n, test::awkward_k(t)[1]}, 10);
}

TEST_CASE("matvec with K = 11008", "[matvec]") {
  for (DType t : {DType::F16, DType::Q8_0, DType::Q5_0, DType::Q4_K, DType::Q6_K})
    test::check_matmul_case(ops::matvec, "matvec", t, {9, 1, 11008}, 7);
}

TEST_CASE("matvec under every profile", "[matvec]") {
  test::for_each_profile([&](const Profile& profile) {
    std::string note = " profile=" + profile.name;
    for (DType t : test::weight_types())
      test::check_matmul_case(ops::matvec, "matvec", t, {13, 1, test::awkward_k(t)[1]}, 3, false, note);
    test::check_matmul_case(ops::matvec, "matvec", DType::F16, {13, 11, 96}, 3, false, note);  // token blocks
  });
}

// What the subgroup-width runs (tests/CMakeLists.txt: subgroup_width_128 and _512) ask of matvec:
// only the reduction at the end of matvec.glsl's main() depends on the subgroup size, and it is
// the same code for every weight type; the profiles choose the threads per row and the workgroup
// it reduces over. So every profile, with a float type (and its ragged K tail), a 32-value block
// and a 256-value super-block for one token, and a block of tokens: the shapes of "matvec under
// every profile", whose kernels the default width has compiled already.
TEST_CASE("matvec reduces across subgroups under every profile", "[matvec][subgroup]") {
  test::for_each_profile([&](const Profile& profile) {
    std::string note = " profile=" + profile.name;
    for (DType t : {DType::F32, DType::Q4_0, DType::Q4_K})
      test::check_matmul_case(ops::matvec, "matvec", t, {13, 1, test::awkward_k(t)[1]}, 3, false, note);
    test::check_matmul_case(ops::matvec, "matvec", DType::F16, {13, 11, 96}, 3, false, note);
  });
}

// A row group that is exactly one subgroup reduces by the subgroup alone (no shared memory, no
// barrier), as the GPU profiles plan it; here on the device's own subgroup size, with an odd
// unroll so that the units left after the unrolled steps run too.
TEST_CASE("matvec with one subgroup per row group", "[matvec]") {
  struct Restore {
    ~Restore() { test::gpu().set_profile(choose_profile(test::gpu().caps())); }
  } restore;
  Profile p = fit_profile(profile_named("generic"), test::gpu().caps());
  uint32_t sg = p.run_subgroup_size;
  p.matvec_wg = 4 * sg, p.matvec_rows = 8, p.matvec_rows_per_thread = 2, p.matvec_unroll = 3;
  test::gpu().set_profile(p);
  for (DType t : {DType::F32, DType::Q4_0, DType::Q8_0, DType::Q4_K, DType::Q6_K})
    for (uint32_t n : {1u, 3u})
      test::check_matmul_case(ops::matvec, "matvec", t, {19, n, test::awkward_k(t).back()}, 50 + n, n == 3,
                              fmt::format(" one subgroup of {}", sg));
}

TEST_CASE("matvec adds a bias", "[matvec]") {
  for (DType t : {DType::F32, DType::Q8_0, DType::Q4_K})
    for (uint32_t n : {1u, 2u})
      test::check_matmul_case(ops::matvec, "matvec", t, {21, n, test::awkward_k(t)[1]}, 4, true);
}

// Per-head products of DeepSeek MLA's absorbed attention (docs/formats.md §5.3): weight b is rows
// b·M .. of one tensor, x is token-major (N, H, K) and y (N, H, M).
void check_batched(test::MatmulFn fn, const char* name, DType t, uint32_t H, uint32_t M, uint32_t N, uint32_t K) {
  test::Weights w = test::random_weights(t, size_t(H) * M, K, 50);
  std::vector<float> x = test::random_floats(size_t(N) * H * K, 51), bias = test::random_floats(size_t(H) * M, 52);
  std::vector<float> want(size_t(N) * H * M);
  for (uint32_t h = 0; h < H; ++h)
    ref::matmul(want.data() + h * M, w.values.data() + size_t(h) * M * K, x.data() + h * K, M, N, K, H * K, H * M,
                bias.data() + h * M);
  Buffer gw = test::bytes_to_gpu(w.stored), gx = test::to_gpu(x), gb = test::to_gpu(bias);
  Buffer gy(test::gpu(), want.size() * 4, Memory::Device, "y");
  Stream s(test::gpu());
  ops::MatmulBatch batch{
      .count = H, .x_batch_stride = K, .x_row_stride = H * K, .y_batch_stride = M, .y_row_stride = H * M};
  fn(s, t, gw, gx, gy, M, N, K, batch, gb);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gy), want, test::nmse_bound(t),
                   fmt::format("{} batched {} H={} M={} N={} K={}", name, test::type_name(t), H, M, N, K));
}

TEST_CASE("batched matmul for MLA heads", "[matvec][matmul]") {
  for (DType t : {DType::F16, DType::Q8_0, DType::Q5_0}) {  // what MLA files store attn_k_b/v_b as
    check_batched(ops::matvec, "matvec", t, 4, 48, 1, 32);
    check_batched(ops::matvec, "matvec", t, 3, 40, 2, 96);
    check_batched(ops::matmul_tiled, "matmul_tiled", t, 3, 40, 11, 96);
    check_batched(ops::matmul, "matmul", t, 5, 17, 20, 64);
  }
}

TEST_CASE("matvec rejects bad arguments", "[matvec]") {
  Context& ctx = test::gpu();
  Buffer w(ctx, 1 << 16, Memory::Device, "w"), x(ctx, 1 << 16, Memory::Device, "x"),
      y(ctx, 1 << 16, Memory::Device, "y");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::matvec(s, DType::Q4_K, w, x, y, 4, 1, 100),
                    Catch::Contains("K = 100 is not a multiple of q4_k's block of 256"));
  CHECK_THROWS_WITH(ops::matvec(s, DType::IQ2_XXS, w, x, y, 4, 1, 256), Catch::Contains("type iq2_xxs"));
  CHECK_THROWS_WITH(ops::matvec(s, DType::F32, w, x, y, 1024, 1, 32), Catch::Contains("weight view"));
  CHECK_THROWS_WITH(ops::matvec(s, DType::F32, w, x, x, 4, 1, 32), Catch::Contains("overlaps"));
}
