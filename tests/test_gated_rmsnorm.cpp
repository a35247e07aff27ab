// ops::gated_rmsnorm vs ref::gated_rmsnorm: y = rmsnorm(x) * w * silu(z) per row (a DeltaNet
// layer's output, one row per token and value head), widths below and above the workgroup size,
// gates far into both tails of silu, in place, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("gated_rmsnorm matches the reference", "[gated_rmsnorm]") {
  Context& ctx = test::gpu();
  struct Shape {
    uint32_t rows, width;
  };
  const Shape shapes[] = {{1, 1}, {7, 16}, {260, 128}, {3, 48}, {5, 300}, {2, 4097}};
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 40;
    for (Shape sh : shapes) {
      size_t n = size_t(sh.rows) * sh.width;
      auto x = test::random_floats(n, seed++, -3, 3), z = test::random_floats(n, seed++, -8, 8);
      auto w = test::random_floats(sh.width, seed++, 0.5, 1.5);
      z[0] = -100, z[n - 1] = 100;
      std::vector<float> want(n);
      ref::gated_rmsnorm(want.data(), x.data(), w.data(), z.data(), sh.rows, sh.width, 1e-6f);
      Buffer gx = test::to_gpu(x), gw = test::to_gpu(w), gz = test::to_gpu(z), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::gated_rmsnorm(s, gx, gw, gz, gy, sh.rows, sh.width, 1e-6f);
      ops::gated_rmsnorm(s, gx, gw, gz, gx, sh.rows, sh.width, 1e-6f);  // in place, after the first
      s.submit_wait();
      std::string what = fmt::format("gated_rmsnorm rows={} width={} profile={}", sh.rows, sh.width, profile.name);
      test::check_nmse(test::from_gpu(gy), want, 1e-12, what);
      test::check_nmse(test::from_gpu(gx), want, 1e-12, what + " in place");
    }
  });
}
