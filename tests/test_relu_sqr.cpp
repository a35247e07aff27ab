// ops::relu_sqr vs ref::relu_sqr (Nemotron-H's FFN activation): awkward sizes, negatives, zero
// and values whose square overflows, in place and apart, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("relu_sqr matches the reference", "[relu_sqr]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 33u, 4097u}) {
      auto x = test::random_floats(n, 41, -4, 4);
      if (n > 3) x[0] = -1e20f, x[1] = 1e20f, x[2] = 0, x[3] = -0.0f;
      std::vector<float> want(n);
      ref::relu_sqr(want.data(), x.data(), n);
      Buffer gx = test::to_gpu(x), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::relu_sqr(s, gx, gy, n);
      ops::relu_sqr(s, gx, gx, n);  // in place
      s.submit_wait();
      auto apart = test::from_gpu(gy), in_place = test::from_gpu(gx);
      for (uint32_t i = 0; i < n; ++i) {
        INFO(fmt::format("n={} i={} x={} profile={}", n, i, x[i], profile.name));
        CHECK(apart[i] == want[i]);
        CHECK(in_place[i] == want[i]);
      }
    }
  });
}
