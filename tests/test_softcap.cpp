// ops::softcap (cap·tanh(x / cap), gemma2's logit soft-cap) vs ref::softcap: awkward sizes, values
// near 0 (where tanh loses relative precision), far past the cap, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("softcap matches the reference", "[softcap]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 33u, 4097u}) {
      for (float cap : {30.0f, 1.0f}) {
        auto x = test::random_floats(n, 41, -3 * cap, 3 * cap);
        if (n > 4) x[0] = -1e20f, x[1] = 1e20f, x[2] = 1e-7f, x[3] = 0, x[4] = -0.1f * cap;
        std::vector<float> want(n);
        ref::softcap(want.data(), x.data(), n, cap);
        Buffer gx = test::to_gpu(x), gy(ctx, n * 4, Memory::Device, "y");
        Stream s(ctx);
        ops::softcap(s, gx, gy, n, cap);
        s.submit_wait();
        auto got = test::from_gpu(gy);
        test::check_nmse(got, want, 1e-12, fmt::format("softcap n={} cap={} profile={}", n, cap, profile.name));
        if (n > 4) CHECK(std::abs(got[2] - want[2]) <= 1e-6f * std::abs(want[2]));  // relative, near 0
      }
    }
  });
}
