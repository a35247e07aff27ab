// ops::rmsnorm vs ref::rmsnorm: odd row lengths, one row, many rows, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("rmsnorm matches the reference", "[rmsnorm]") {
  Context& ctx = test::gpu();
  struct Shape {
    uint32_t rows, dim;
  };
  const Shape shapes[] = {{1, 1}, {1, 7}, {3, 64}, {7, 4097}, {2, 11008}, {300, 5}};
  test::for_each_profile([&](const Profile& profile) {
    for (Shape sh : shapes) {
      size_t n = size_t(sh.rows) * sh.dim;
      auto x = test::random_floats(n, 10, -3, 3), w = test::random_floats(sh.dim, 11, 0.5, 1.5);
      std::vector<float> want(n);
      ref::rmsnorm(want.data(), x.data(), w.data(), sh.rows, sh.dim, 1e-5f);
      Buffer gx = test::to_gpu(x), gw = test::to_gpu(w), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::rmsnorm(s, gx, gw, gy, sh.rows, sh.dim, 1e-5f);
      s.submit_wait();
      test::check_nmse(test::from_gpu(gy), want, 1e-12,
                       fmt::format("rmsnorm rows={} dim={} profile={}", sh.rows, sh.dim, profile.name));
    }
  });
}

TEST_CASE("rmsnorm in place", "[rmsnorm]") {
  Context& ctx = test::gpu();
  uint32_t rows = 5, dim = 300;
  auto x = test::random_floats(rows * dim, 12), w = test::random_floats(dim, 13);
  std::vector<float> want(x.size());
  ref::rmsnorm(want.data(), x.data(), w.data(), rows, dim, 1e-6f);
  Buffer gx = test::to_gpu(x), gw = test::to_gpu(w);
  Stream s(ctx);
  ops::rmsnorm(s, gx, gw, gx, rows, dim, 1e-6f);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gx), want, 1e-12, "rmsnorm in place");
}
