// ops::matmul_tiled (prefill kernel) and ops::matmul (the entry projections use) vs the reference:
// every weight type over awkward shapes (M, N, K not multiples of the tiles, M = 1, N = 1), every
// profile's tiles, bias, and weights split over bindings beyond maxStorageBufferRange.
#include <fmt/format.h>

#include "catch.h"
#include "weight_cases.h"

using namespace vkllm;

TEST_CASE("tiled matmul matches the reference for every weight type", "[matmul]") {
  for (DType t : test::weight_types()) {
    std::vector<uint32_t> ks = test::awkward_k(t);
    const test::MatmulCase cases[] = {
        {1, 1, ks[0]}, {67, 33, ks[1]}, {1, 70, ks[2]}, {70, 9, ks[2]}, {33, 40, ks.back()}};
    for (test::MatmulCase c : cases) test::check_matmul_case(ops::matmul_tiled, "matmul_tiled", t, c, c.M + c.N);
  }
}

TEST_CASE("tiled matmul under every profile", "[matmul]") {
  test::for_each_profile([&](const Profile& profile) {
    for (DType t : test::weight_types())
      test::check_matmul_case(ops::matmul_tiled, "matmul_tiled", t, {37, 19, test::awkward_k(t)[1]}, 6, false,
                              " profile=" + profile.name);
  });
}

TEST_CASE("matmul picks a kernel by token count", "[matmul]") {
  // On the device's profile and on generic (GPU-like: matvec up to 8 tokens, tiled above).
  for (const char* name : {"", "generic"}) {
    if (*name) test::gpu().set_profile(profile_named(name));
    const Profile& p = test::gpu().profile();
    for (DType t : {DType::F16, DType::Q6_K})
      for (uint32_t n : {1u, p.matmul_tiled_min_n - 1, p.matmul_tiled_min_n, 100u})
        if (n > 0 && n <= 100)
          test::check_matmul_case(ops::matmul, "matmul", t, {45, n, test::awkward_k(t)[1]}, 8, false,
                                  " profile=" + p.name);
  }
  test::gpu().set_profile(choose_profile(test::gpu().caps()));
}

// gpt-oss's row length (2880 = 90 MXFP4 blocks, 1530 bytes: not a multiple of 128 or 256 values),
// odd M, and token counts on both sides of the device's tiles (matvec token blocks, tiled BN).
TEST_CASE("MXFP4 at gpt-oss's row length around the tile edges", "[matmul][matvec]") {
  const Profile& p = test::gpu().profile();
  const uint32_t K = 2880;
  for (uint32_t n : {p.matvec_tokens, p.matvec_tokens + 1})
    test::check_matmul_case(ops::matvec, "matvec", DType::MXFP4, {p.matvec_rows + 3, n, K}, 31);
  for (uint32_t n : {p.matmul_bn - 1, p.matmul_bn + 1})
    test::check_matmul_case(ops::matmul_tiled, "matmul_tiled", DType::MXFP4, {p.matmul_bm + 1, n, K}, 32);
}

TEST_CASE("tiled matmul adds a bias", "[matmul]") {
  for (DType t : {DType::F32, DType::Q8_0, DType::Q4_K})
    test::check_matmul_case(ops::matmul_tiled, "matmul_tiled", t, {21, 20, test::awkward_k(t)[1]}, 9, true);
}

TEST_CASE("weights beyond maxStorageBufferRange are split into row ranges", "[matmul][get_rows]") {
  Context& ctx = test::gpu();
  const uint32_t K = 4096;
  uint64_t range = ctx.caps().max_storage_buffer_range;
  if (range > (uint64_t(256) << 20)) {
    WARN("maxStorageBufferRange is large; the split is covered on lavapipe (128 MiB)");
    return;
  }
  uint32_t M = uint32_t(range / (4 * K)) + 9;  // f32 rows: 9 past one binding
  test::Weights w{{}, test::random_floats(size_t(M) * K, 60)};
  std::vector<float> x = test::random_floats(K, 61), bias = test::random_floats(M, 62);
  std::vector<float> want(M);
  ref::matmul(want.data(), w.values.data(), x.data(), M, 1, K, 0, 0, bias.data());
  Buffer gw = test::to_gpu(w.values, "big weights"), gx = test::to_gpu(x), gb = test::to_gpu(bias);
  Buffer gy(ctx, M * 4, Memory::Device, "y");
  std::vector<int32_t> ids = {0, int32_t(M) - 1, 5};
  Buffer gi(ctx, ids.size() * 4, Memory::Device, "ids"), grows(ctx, ids.size() * K * 4, Memory::Device, "rows");
  gi.upload(std::span<const int32_t>(ids));
  Stream s(ctx);
  ops::matmul(s, DType::F32, gw, gx, gy, M, 1, K, {}, gb);
  ops::get_rows(s, DType::F32, gw, gi, grows, uint32_t(ids.size()), K);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gy), want, 1e-9, fmt::format("matmul f32 M={} K={} split", M, K));
  std::vector<float> rows_want(ids.size() * K);
  for (size_t i = 0; i < ids.size(); ++i)
    std::copy_n(w.values.begin() + size_t(ids[i]) * K, K, rows_want.begin() + i * K);
  test::check_nmse(test::from_gpu(grows), rows_want, 0.0, "get_rows f32 split");
}
