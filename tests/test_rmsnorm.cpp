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

// A block's post norm and the residual add in one dispatch: y += rmsnorm(x)·w.
TEST_CASE("rmsnorm adds into the residual stream", "[rmsnorm]") {
  Context& ctx = test::gpu();
  for (auto [rows, dim] : {std::pair<uint32_t, uint32_t>{1, 7}, {6, 4097}}) {
    size_t n = size_t(rows) * dim;
    auto x = test::random_floats(n, 14, -3, 3), w = test::random_floats(dim, 15, 0.5, 1.5),
         y = test::random_floats(n, 16, -20, 20);
    std::vector<float> want(n);
    ref::rmsnorm(want.data(), x.data(), w.data(), rows, dim, 1e-6f);
    for (size_t i = 0; i < n; ++i) want[i] += y[i];
    Buffer gx = test::to_gpu(x), gw = test::to_gpu(w), gy = test::to_gpu(y);
    Stream s(ctx);
    ops::rmsnorm_add(s, gx, gw, gy, rows, dim, 1e-6f);
    s.submit_wait();
    test::check_nmse(test::from_gpu(gy), want, 1e-12, fmt::format("rmsnorm_add rows={} dim={}", rows, dim));
  }
  Stream s(ctx);
  Buffer b = test::to_gpu(std::vector<float>(64, 1.0f));
  CHECK_THROWS_WITH(ops::rmsnorm_add(s, b.view(0, 128), b.view(0, 128), b.view(64, 128), 1, 32, 1e-6f),
                    Catch::Contains("y overlaps x"));
}
