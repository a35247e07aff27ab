// ops::layernorm vs ref::layernorm, with and without bias: odd row lengths, one row, many rows,
// rows with a large mean (where E[x^2] - mean^2 would cancel), every profile.
#include <fmt/format.h>

#include "catch.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

using namespace vkllm;

TEST_CASE("layernorm matches the reference", "[layernorm]") {
  Context& ctx = test::gpu();
  struct Shape {
    uint32_t rows, dim;
  };
  const Shape shapes[] = {{1, 1}, {1, 7}, {3, 64}, {7, 4097}, {2, 11008}, {300, 5}};
  test::for_each_profile([&](const Profile& profile) {
    for (Shape sh : shapes)
      for (bool bias : {true, false}) {
        size_t n = size_t(sh.rows) * sh.dim;
        auto x = test::random_floats(n, 20, -3, 3);
        auto w = test::random_floats(sh.dim, 21, 0.5, 1.5), b = test::random_floats(sh.dim, 22, -1, 1);
        for (size_t r = 1; r < sh.rows; r += 2)  // odd rows: mean ~100, std ~1.7
          for (size_t i = 0; i < sh.dim; ++i) x[r * sh.dim + i] += 100;
        std::vector<float> want(n);
        ref::layernorm(want.data(), x.data(), w.data(), bias ? b.data() : nullptr, sh.rows, sh.dim, 1e-5f);
        Buffer gx = test::to_gpu(x), gw = test::to_gpu(w), gb = test::to_gpu(b);
        Buffer gy(ctx, n * 4, Memory::Device, "y");
        Stream s(ctx);
        ops::layernorm(s, gx, gw, bias ? gb.view() : BufferView{}, gy, sh.rows, sh.dim, 1e-5f);
        s.submit_wait();
        // dim 1: x - mean is exactly 0, so y = b (or 0); with an all-zero reference NMSE is the raw error.
        test::check_nmse(
            test::from_gpu(gy), want, 1e-10,
            fmt::format("layernorm rows={} dim={} bias={} profile={}", sh.rows, sh.dim, bias, profile.name));
      }
  });
}

TEST_CASE("layernorm in place", "[layernorm]") {
  Context& ctx = test::gpu();
  uint32_t rows = 5, dim = 300;
  auto x = test::random_floats(rows * dim, 23), w = test::random_floats(dim, 24), b = test::random_floats(dim, 25);
  std::vector<float> want(x.size());
  ref::layernorm(want.data(), x.data(), w.data(), b.data(), rows, dim, 1e-6f);
  Buffer gx = test::to_gpu(x), gw = test::to_gpu(w), gb = test::to_gpu(b);
  Stream s(ctx);
  ops::layernorm(s, gx, gw, gb, gx, rows, dim, 1e-6f);
  s.submit_wait();
  test::check_nmse(test::from_gpu(gx), want, 1e-12, "layernorm in place");
}
