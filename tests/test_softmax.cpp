// ops::softmax_rows vs ref::softmax_rows: one column, odd lengths, a vocabulary-sized row
// (128256), -inf entries (masked), temperatures, every profile.
#include <fmt/format.h>
#include <cmath>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("softmax_rows matches the reference", "[softmax]") {
  Context& ctx = test::gpu();
  struct Shape {
    uint32_t rows, cols;
    float scale;
  };
  const Shape shapes[] = {{1, 1, 1}, {1, 7, 1}, {3, 33, 0.125f}, {2, 4097, 1}, {1, 128256, 1.0f / 0.7f}, {300, 5, 2}};
  test::for_each_profile([&](const Profile& profile) {
    for (Shape sh : shapes) {
      size_t n = size_t(sh.rows) * sh.cols;
      auto x = test::random_floats(n, 50, -20, 20);
      for (size_t i = 1; i < n; i += 3) x[i] = -INFINITY;  // a causal mask's entries
      std::vector<float> want(n);
      ref::softmax_rows(want.data(), x.data(), sh.rows, sh.cols, sh.scale);
      Buffer gx = test::to_gpu(x), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::softmax_rows(s, gx, gy, sh.rows, sh.cols, sh.scale);
      s.submit_wait();
      test::check_nmse(
          test::from_gpu(gy), want, 1e-12,
          fmt::format("softmax rows={} cols={} scale={} profile={}", sh.rows, sh.cols, sh.scale, profile.name));
    }
  });
}

TEST_CASE("softmax_rows in place sums to one", "[softmax]") {
  Context& ctx = test::gpu();
  uint32_t rows = 4, cols = 1000;
  auto x = test::random_floats(rows * cols, 51, -5, 5);
  std::vector<float> want(x.size());
  ref::softmax_rows(want.data(), x.data(), rows, cols, 1);
  Buffer gx = test::to_gpu(x);
  Stream s(ctx);
  ops::softmax_rows(s, gx, gx, rows, cols);
  s.submit_wait();
  auto got = test::from_gpu(gx);
  test::check_nmse(got, want, 1e-12, "softmax in place");
  for (uint32_t r = 0; r < rows; ++r) {
    double sum = 0;
    for (uint32_t i = 0; i < cols; ++i) sum += got[r * cols + i];
    CHECK(sum == Approx(1.0).epsilon(1e-5));
  }
}
