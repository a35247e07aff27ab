// ops::argmax_rows vs ref::argmax_rows, exactly: ties (lowest index wins), NaN, rows of only NaN
// or only -inf, vocabulary-sized rows, many rows, every profile.
#include <fmt/format.h>
#include <cmath>
#include <span>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

namespace {

std::vector<int32_t> gpu_argmax(const std::vector<float>& x, uint32_t rows, uint32_t cols) {
  Context& ctx = test::gpu();
  Buffer gx = test::to_gpu(x), gi(ctx, rows * 4, Memory::Device, "idx");
  Stream s(ctx);
  ops::argmax_rows(s, gx, gi, rows, cols);
  s.submit_wait();
  return gi.download<int32_t>(rows);
}

}  // namespace

TEST_CASE("argmax_rows matches the reference", "[argmax]") {
  struct Shape {
    uint32_t rows, cols;
  };
  const Shape shapes[] = {{1, 1}, {1, 7}, {4, 33}, {2, 128256}, {300, 5}, {3, 4097}};
  test::for_each_profile([&](const Profile& profile) {
    for (Shape sh : shapes) {
      size_t n = size_t(sh.rows) * sh.cols;
      // Few distinct values, so most rows have their maximum more than once.
      auto x = test::random_floats(n, 60, -8, 8);
      for (float& v : x) v = std::round(v);
      std::vector<int32_t> want(sh.rows);
      ref::argmax_rows(want.data(), x.data(), sh.rows, sh.cols);
      auto got = gpu_argmax(x, sh.rows, sh.cols);
      INFO(fmt::format("argmax rows={} cols={} profile={}", sh.rows, sh.cols, profile.name));
      CHECK(got == want);
    }
  });
}

TEST_CASE("argmax_rows on a vocabulary row with its maximum at either end", "[argmax]") {
  uint32_t cols = 128256;
  auto x = test::random_floats(2 * cols, 61, -10, 10);
  x[cols - 1] = 11;                // row 0: the last entry
  x[cols] = x[2 * cols - 1] = 11;  // row 1: first and last tie; the first wins
  auto got = gpu_argmax(x, 2, cols);
  CHECK(got == std::vector<int32_t>{int32_t(cols - 1), 0});
}

TEST_CASE("argmax_rows ignores NaN", "[argmax]") {
  uint32_t cols = 9;
  const float nan = NAN, inf = INFINITY;
  std::vector<float> x = {nan,  1,    nan,  3,    nan,  3,    2,    nan,  0,     // NaN around the maximum
                          nan,  nan,  nan,  nan,  nan,  nan,  nan,  nan,  nan,   // only NaN: -1
                          -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf, -inf,  // only -inf: the first
                          nan,  -inf, nan,  -inf, nan,  nan,  nan,  nan,  nan};
  std::vector<int32_t> want(4);
  ref::argmax_rows(want.data(), x.data(), 4, cols);
  CHECK(want == std::vector<int32_t>{3, -1, 0, 1});
  test::for_each_profile([&](const Profile& profile) {
    INFO(profile.name);
    CHECK(gpu_argmax(x, 4, cols) == want);
  });
}
