// The vision encoders' kernels (ops_vision.h) against their references (reference/vision.h):
// vision_rope in both layouts, vision_positions in its three modes, avg_pool, gelu_quick, clamp.
#include <algorithm>

#include "catch.h"
#include "context.h"
#include "harness.h"
#include "ops_vision.h"
#include "reference/vision.h"
#include "stream.h"

using namespace vkllm;

namespace {

std::vector<int32_t> grid_positions(uint32_t px, uint32_t py) {  // rows then columns, raster order
  std::vector<int32_t> pos(2 * size_t(px) * py);
  for (uint32_t t = 0; t < px * py; ++t) pos[t] = int32_t(t / px), pos[px * py + t] = int32_t(t % px);
  return pos;
}

}  // namespace

TEST_CASE("vision_rope turns pairs by two positions in qwen's and gemma4v's layouts", "[vision_rope]") {
  for (bool neox : {false, true})
    for (uint32_t stride : {0u, 3 * 2 * 16u}) {
      const uint32_t tokens = 37, heads = 2, d = 16;
      uint32_t s = stride ? stride : heads * d;
      std::vector<float> x = test::random_floats(size_t(tokens - 1) * s + heads * d, 7);
      std::vector<int32_t> pos(2 * tokens);
      for (uint32_t t = 0; t < 2 * tokens; ++t) pos[t] = int32_t((t * 13) % 61);
      std::vector<float> want = x;
      ref::vision_rope(want.data(), pos.data(), pos.data() + tokens, tokens, heads, d, stride, 100.0f, neox);
      Buffer xb = test::to_gpu(x), pb = test::to_gpu(std::span<const int32_t>(pos));
      Stream st(test::gpu());
      ops::vision_rope(st, pb, xb,
                       {.n_tokens = tokens,
                        .n_heads = heads,
                        .head_dim = d,
                        .token_stride = stride,
                        .base = 100.0f,
                        .neox_halves = neox});
      st.submit_wait();
      test::check_nmse(test::from_gpu(xb), want, 1e-10, neox ? "vision_rope gemma4v" : "vision_rope qwen");
    }
}

TEST_CASE("vision_positions adds learned, resized and per-axis position embeddings", "[vision_positions]") {
  const uint32_t n = 8, px = 7, py = 5, np = px * py, side = 4, n_pos = 9;
  std::vector<int32_t> pos = grid_positions(px, py);
  struct Case {
    ops::VisionPositions mode;
    VisionPositionKind kind;
    size_t rows;
  };
  for (Case c : {Case{ops::VisionPositions::Learned, VisionPositionKind::Learned, size_t(np)},
                 Case{ops::VisionPositions::Resized, VisionPositionKind::Resized, size_t(side) * side},
                 Case{ops::VisionPositions::AxisTables, VisionPositionKind::AxisTables, 2 * size_t(n_pos)}}) {
    std::vector<float> table = test::random_floats(c.rows * n, 3), x = test::random_floats(size_t(np) * n, 4);
    std::vector<float> want = x;
    ref::add_vision_positions(want.data(), table.data(), pos.data(), pos.data() + np, np, n,
                              {.kind = c.kind, .px = px, .py = py, .side = side, .n_pos = n_pos});
    Buffer tb = test::to_gpu(table), pb = test::to_gpu(std::span<const int32_t>(pos)), xb = test::to_gpu(x);
    Stream st(test::gpu());
    ops::vision_positions(st, tb, pb, xb,
                          {.n_tokens = np,
                           .n = n,
                           .mode = c.mode,
                           .px = px,
                           .side = side,
                           .n_pos = n_pos,
                           .sx = float(px - 1) / float(side - 1),
                           .sy = float(py - 1) / float(side - 1)});
    st.submit_wait();
    test::check_nmse(test::from_gpu(xb), want, 1e-12, "vision_positions");
  }
}

TEST_CASE("avg_pool averages k x k blocks of a grid of rows", "[avg_pool]") {
  for (uint32_t k : {2u, 3u}) {
    const uint32_t px = 7, py = 6, n = 5;  // 7 columns: the last is dropped as ggml_pool_2d drops it
    std::vector<float> x = test::random_floats(size_t(px) * py * n, 9);
    std::vector<float> want = ref::avg_pool(x.data(), px, py, n, k);
    Buffer xb = test::to_gpu(x), yb = test::to_gpu(std::vector<float>(want.size()));
    Stream st(test::gpu());
    ops::avg_pool(st, xb, yb, px, py, n, k);
    st.submit_wait();
    test::check_nmse(test::from_gpu(yb), want, 1e-12, "avg_pool");
  }
}

TEST_CASE("gelu_quick and clamp, elementwise", "[gelu_quick][clamp]") {
  std::vector<float> x = test::random_floats(1000, 5, -12.0f, 12.0f);
  x[0] = -100.0f, x[1] = 100.0f;
  std::vector<float> gq(x.size()), cl(x.size());
  for (size_t i = 0; i < x.size(); ++i) gq[i] = ref::gelu_quick(x[i]), cl[i] = std::clamp(x[i], -3.0f, 2.5f);
  Buffer xb = test::to_gpu(x), a = test::to_gpu(std::vector<float>(x.size())),
         b = test::to_gpu(std::vector<float>(x.size()));
  Stream st(test::gpu());
  ops::gelu_quick(st, xb, a, uint32_t(x.size()));
  ops::clamp(st, xb, b, uint32_t(x.size()), -3.0f, 2.5f);
  st.submit_wait();
  test::check_nmse(test::from_gpu(a), gq, 1e-12, "gelu_quick");
  CHECK(test::from_gpu(b) == cl);
}
