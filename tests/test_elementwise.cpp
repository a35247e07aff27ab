// ops::add, mul (binary.glsl), add_rows (biases), mul_rows and scale vs the reference: awkward
// sizes, every profile. These are single f32 operations, so the GPU must match exactly.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

struct Rows {
  uint32_t rows, dim;
};
const Rows kShapes[] = {{1, 1}, {1, 7}, {3, 33}, {7, 4097}, {2, 11008}, {300, 5}};

// add and mul (one shader body) on n elements under the current profile, exactly.
void check_binary(uint32_t n, const std::string& profile) {
  struct Binary {
    const char* name;
    void (*gpu)(Stream&, BufferView, BufferView, BufferView, uint32_t);
    void (*cpu)(float*, const float*, const float*, size_t);
  };
  const Binary binaries[] = {{"add", ops::add, ref::add}, {"mul", ops::mul, ref::mul}};
  auto a = test::random_floats(n, 1, -4, 4), b = test::random_floats(n, 2, -4, 4);
  Buffer ga = test::to_gpu(a), gb = test::to_gpu(b), gy(test::gpu(), n * 4, Memory::Device, "y");
  for (const Binary& op : binaries) {
    std::vector<float> want(n);
    op.cpu(want.data(), a.data(), b.data(), n);
    Stream s(test::gpu());
    op.gpu(s, ga, gb, gy, n);
    s.submit_wait();
    test::check_nmse(test::from_gpu(gy), want, 0.0, fmt::format("{} n={} profile={}", op.name, n, profile));
  }
}

}  // namespace

TEST_CASE("add and mul match the reference", "[elementwise]") {
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 256u, 4097u, 100000u}) check_binary(n, profile.name);
  });
}

TEST_CASE("add and mul cover more than 65535 workgroups", "[elementwise]") {
  // The 2-D grid (grid() in stream.h) is the same for every profile: the device's own suffices.
  uint32_t wg = test::gpu().profile().wg_size;
  check_binary((65535 + 1000) * wg + 7, test::gpu().profile().name);
}

TEST_CASE("add in place (y aliases a) is a residual update", "[elementwise]") {
  Context& ctx = test::gpu();
  uint32_t n = 1000;
  auto a = test::random_floats(n, 3), b = test::random_floats(n, 4);
  std::vector<float> want(n);
  ref::add(want.data(), a.data(), b.data(), n);
  Buffer ga = test::to_gpu(a), gb = test::to_gpu(b);
  Stream s(ctx);
  ops::add(s, ga, gb, ga, n);
  s.submit_wait();
  test::check_nmse(test::from_gpu(ga), want, 0.0, "add in place");
}

TEST_CASE("mul_rows and add_rows broadcast a row over every row", "[elementwise]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (Rows sh : kShapes) {
      size_t n = size_t(sh.rows) * sh.dim;
      auto x = test::random_floats(n, 3, -2, 2), b = test::random_floats(sh.dim, 4, -2, 2);
      std::vector<float> want_mul(n), want_add(n);
      ref::mul_rows(want_mul.data(), x.data(), b.data(), sh.rows, sh.dim);
      ref::add_rows(want_add.data(), x.data(), b.data(), sh.rows, sh.dim);
      Buffer gx = test::to_gpu(x), gb = test::to_gpu(b), gm(ctx, n * 4, Memory::Device, "mul");
      Stream s(ctx);
      ops::mul_rows(s, gx, gb, gm, sh.rows, sh.dim);
      ops::add_rows(s, gx, gb, gx, sh.rows, sh.dim);  // in place, as the engine adds q/k/v biases
      s.submit_wait();
      auto what = fmt::format("rows={} dim={} profile={}", sh.rows, sh.dim, profile.name);
      test::check_nmse(test::from_gpu(gm), want_mul, 0.0, "mul_rows " + what);
      test::check_nmse(test::from_gpu(gx), want_add, 0.0, "add_rows in place " + what);
    }
  });
}

TEST_CASE("scale matches the reference", "[elementwise]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 4097u, 128256u}) {
      auto x = test::random_floats(n, 5, -100, 100);
      std::vector<float> want(n);
      ref::scale(want.data(), x.data(), n, 0.125f / 3);
      Buffer gx = test::to_gpu(x);
      Stream s(ctx);
      ops::scale(s, gx, gx, n, 0.125f / 3);
      s.submit_wait();
      test::check_nmse(test::from_gpu(gx), want, 0.0, fmt::format("scale n={} profile={}", n, profile.name));
    }
  });
}

TEST_CASE("elementwise ops reject views that are too small", "[elementwise]") {
  Context& ctx = test::gpu();
  Buffer small(ctx, 16, Memory::Device, "small"), big(ctx, 64, Memory::Device, "big");
  Stream s(ctx);
  CHECK_THROWS_WITH(ops::mul(s, big, small, big, 16), "mul: b holds 16 bytes, needs 64");
  CHECK_THROWS_WITH(ops::add_rows(s, big, small, big, 2, 8), "add: b holds 16 bytes, needs 32");
  CHECK_THROWS_WITH(ops::layernorm(s, big, small, {}, big, 2, 8, 1e-5f), "layernorm: w holds 16 bytes, needs 32");
}
