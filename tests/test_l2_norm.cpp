// ops::l2_norm vs ref::l2_norm: the q and k heads inside the conv output's strided rows (in
// place, as the layer runs it, the rest of each row untouched), packed rows, widths below and
// above the workgroup size, every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("l2_norm matches the reference on strided heads", "[l2_norm]") {
  Context& ctx = test::gpu();
  struct Shape {
    uint32_t n_tokens, heads, width, stride, offset;  // stride 0: packed
  };
  const Shape shapes[] = {{1, 1, 1, 0, 0},     {7, 4, 16, 0, 0},  {65, 4, 128, 1100, 0},
                          {3, 6, 48, 500, 37}, {2, 2, 300, 0, 0}, {130, 2, 64, 300, 5}};
  test::for_each_profile([&](const Profile& profile) {
    uint32_t seed = 30;
    for (Shape sh : shapes) {
      uint32_t stride = sh.stride ? sh.stride : sh.heads * sh.width;
      size_t size = sh.offset + size_t(sh.n_tokens) * stride;
      auto x = test::random_floats(size, seed++, -2, 2);
      if (sh.width > 1) x[sh.offset] = 0;
      std::vector<float> want = x;
      for (uint32_t t = 0; t < sh.n_tokens; ++t) {
        float* row = want.data() + sh.offset + size_t(t) * stride;
        ref::l2_norm(row, row, sh.heads, sh.width, 1e-6f);
      }
      ops::L2NormParams p{.n_tokens = sh.n_tokens,
                          .heads = sh.heads,
                          .width = sh.width,
                          .token_stride = sh.stride,
                          .offset = sh.offset,
                          .eps = 1e-6f};
      std::string what = fmt::format("l2_norm tokens={} heads={} width={} stride={} offset={} profile={}", sh.n_tokens,
                                     sh.heads, sh.width, stride, sh.offset, profile.name);
      Buffer gx = test::to_gpu(x), gy = test::to_gpu(x);  // out of place: y starts as a copy of x
      Stream s(ctx);
      ops::l2_norm(s, gx, gy, p);
      ops::l2_norm(s, gx, gx, p);  // in place (after the first: the stream orders them)
      s.submit_wait();
      test::check_nmse(test::from_gpu(gy), want, 1e-12, what);
      test::check_nmse(test::from_gpu(gx), want, 1e-12, what + " in place");
    }
  });
}

TEST_CASE("l2_norm of a zero row is zero", "[l2_norm]") {
  std::vector<float> x(64, 0.0f);
  Buffer gx = test::to_gpu(x);
  Stream s(test::gpu());
  ops::l2_norm(s, gx, gx, {.n_tokens = 2, .heads = 2, .width = 16, .eps = 1e-6f});
  s.submit_wait();
  test::check_nmse(test::from_gpu(gx), x, 0.0, "l2_norm zeros");
}
