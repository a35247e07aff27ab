// ops::swiglu vs ref::swiglu: gate and up as two views of one buffer (a fused projection) and as
// separate buffers, large |gate| where exp overflows, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("swiglu matches the reference", "[swiglu]") {
  Context& ctx = test::gpu();
  test::for_each_profile([&](const Profile& profile) {
    for (uint32_t n : {1u, 7u, 33u, 4097u, 11008u, 3u * 11008u}) {
      // One buffer [gate | pad | up]: up starts at an aligned offset, as the halves of a fused
      // gate|up projection would.
      uint32_t up_at = (n + 3) / 4 * 4;
      auto gu = test::random_floats(up_at + n, 30, -12, 12);
      if (n > 1) gu[0] = -200, gu[1] = 200;  // exp(-g) overflows / vanishes
      std::vector<float> want(n);
      ref::swiglu(want.data(), gu.data(), gu.data() + up_at, n);
      Buffer g = test::to_gpu(gu), y(ctx, n * 4, Memory::Device, "y");
      Stream s(ctx);
      ops::swiglu(s, g.view(0, n * 4), g.view(up_at * 4, n * 4), y, n);
      s.submit_wait();
      test::check_nmse(test::from_gpu(y), want, 1e-12, fmt::format("swiglu n={} profile={}", n, profile.name));
    }
  });
}

TEST_CASE("swiglu in place over separate buffers", "[swiglu]") {
  Context& ctx = test::gpu();
  uint32_t n = 1000;
  auto gate = test::random_floats(n, 31, -6, 6), up = test::random_floats(n, 32, -3, 3);
  std::vector<float> want(n);
  ref::swiglu(want.data(), gate.data(), up.data(), n);
  Buffer gg = test::to_gpu(gate), gu = test::to_gpu(up);
  Stream s(ctx);
  ops::swiglu(s, gg, gu, gg, n);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gg), want, 1e-12, "swiglu in place");
}

TEST_CASE("swiglu_oai matches the reference, clamps included", "[swiglu]") {
  uint32_t n = 1031;
  auto gate = test::random_floats(n, 21, -12, 12), up = test::random_floats(n, 22, -12, 12);  // past the clamp of 7
  std::vector<float> want(n);
  ref::swiglu_oai(want.data(), gate.data(), up.data(), n, 1.702f, 7.0f);
  Buffer gg = test::to_gpu(gate), gu = test::to_gpu(up);
  Stream s(test::gpu());
  ops::swiglu_oai(s, gg, gu, gg, n);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gg), want, 1e-12, "swiglu_oai");
}
