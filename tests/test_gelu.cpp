// ops::gelu (tanh approximation) vs ref::gelu: awkward sizes, the tails where 1 + tanh cancels
// and where tanh's argument overflows, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("gelu matches the reference", "[gelu]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 33u, 4097u, 11008u}) {
      auto x = test::random_floats(n, 40, -8, 8);
      if (n > 3) x[0] = -1e20f, x[1] = 1e20f, x[2] = -30, x[3] = 0;
      std::vector<float> want(n);
      ref::gelu(want.data(), x.data(), n);
      Buffer gx = test::to_gpu(x), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::gelu(s, gx, gy, n);
      s.submit_wait();
      test::check_nmse(test::from_gpu(gy), want, 1e-12, fmt::format("gelu n={} profile={}", n, profile.name));
    }
  });
}

TEST_CASE("gelu values of the tanh approximation", "[gelu]") {
  // The tanh form at a few points (evaluated in double with Python), to 1e-6.
  Context& ctx = test::gpu();
  std::vector<float> x = {-3, -1, -0.5f, 0, 0.5f, 1, 3};
  std::vector<float> known = {-0.00363739f, -0.15880801f, -0.15428599f, 0, 0.34571401f, 0.84119199f, 2.99636261f};
  Buffer gx = test::to_gpu(x);
  Stream s(ctx);
  ops::gelu(s, gx, gx, uint32_t(x.size()));
  s.submit_wait();
  auto got = test::from_gpu(gx);
  for (size_t i = 0; i < x.size(); ++i) CHECK(got[i] == Approx(known[i]).margin(1e-6));
}
