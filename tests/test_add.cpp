// ops::add vs ref::add over awkward sizes, under every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference.h"
#include "stream.h"

using namespace vkllm;

TEST_CASE("add matches the reference", "[add]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    // 70000 * 257 > 65535 workgroups' worth: exercises the 2-D grid.
    for (uint32_t n : {1u, 7u, 256u, 4097u, 70000u * 257u}) {
      auto a = test::random_floats(n, 1), b = test::random_floats(n, 2);
      std::vector<float> want(n);
      ref::add(want.data(), a.data(), b.data(), n);
      Buffer ga = test::to_gpu(a), gb = test::to_gpu(b), gy(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::add(s, ga, gb, gy, n);
      s.submit_wait();
      test::check_nmse(test::from_gpu(gy), want, 0.0, fmt::format("add n={} profile={}", n, profile.name));
    }
  });
}

TEST_CASE("add in place (y aliases a) is a residual update", "[add]") {
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
