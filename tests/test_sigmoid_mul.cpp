// ops::sigmoid_mul vs ref::sigmoid_mul: y = x * sigmoid(g), the output gate of the full-attention
// layers, with gates far into both tails (where exp overflows), lengths around the workgroup size
// and past one grid row, in place, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("sigmoid_mul matches the reference", "[sigmoid_mul]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 50;
    for (uint32_t n : {1u, 255u, 257u, 70000u}) {
      auto x = test::random_floats(n, seed++, -3, 3), g = test::random_floats(n, seed++, -12, 12);
      g[0] = -200;
      if (n > 1) g[1] = 200;
      std::vector<float> want(n);
      ref::sigmoid_mul(want.data(), x.data(), g.data(), n);
      Buffer gx = test::to_gpu(x), gg = test::to_gpu(g), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::sigmoid_mul(s, gx, gg, gy, n);
      ops::sigmoid_mul(s, gx, gg, gx, n);  // in place, after the first
      s.submit_wait();
      std::string what = fmt::format("sigmoid_mul n={} profile={}", n, profile.name);
      test::check_nmse(test::from_gpu(gy), want, 1e-12, what);
      test::check_nmse(test::from_gpu(gx), want, 1e-12, what + " in place");
    }
  });
}
