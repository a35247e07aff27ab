// Entry points of the vision encoders' kernels (ops_vision.h).
#include "ops_vision.h"

#include <cmath>

#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

constexpr uint64_t kF32 = 4;

uint32_t elements(uint64_t rows, uint64_t cols, const char* op) {
  ENSURE(rows * cols <= UINT32_MAX, fmt::format("{}: {} x {} elements exceed 2^32", op, rows, cols));
  return uint32_t(rows * cols);
}

}  // namespace

void vision_rope(Stream& s, BufferView positions, BufferView x, const VisionRopeParams& p) {
  ENSURE(p.head_dim % 4 == 0 && p.head_dim > 0,
         fmt::format("vision_rope: head width {} is not a multiple of 4", p.head_dim));
  uint32_t stride = p.token_stride ? p.token_stride : p.n_heads * p.head_dim;
  ENSURE(stride >= p.n_heads * p.head_dim, "vision_rope: the token stride is narrower than the heads");
  ensure_holds(positions, 2ull * p.n_tokens * 4, "vision_rope", "positions");
  if (p.n_tokens)
    ensure_holds(x, (uint64_t(p.n_tokens - 1) * stride + p.n_heads * p.head_dim) * kF32, "vision_rope", "x");
  uint32_t n = elements(uint64_t(p.n_tokens) * p.n_heads, p.head_dim / 2, "vision_rope");
  uint32_t wg = s.context().profile().wg_size;
  push::VisionRopePush push{p.n_tokens, p.n_heads, p.head_dim, stride, std::log2(p.base), p.neox_halves ? 1u : 0u};
  s.dispatch(spirv::vision_rope, {wg}, {.reads = {positions}, .writes = {x}, .writes_read = {x}}, push,
             grid(ceil_div(n, wg)));
}

void vision_positions(Stream& s, BufferView table, BufferView positions, BufferView x, const VisionPositionsParams& p) {
  uint32_t n = elements(p.n_tokens, p.n, "vision_positions");
  ensure_holds(positions, 2ull * p.n_tokens * 4, "vision_positions", "positions");
  ensure_holds(x, uint64_t(n) * kF32, "vision_positions", "x");
  uint64_t rows = p.mode == VisionPositions::Resized      ? uint64_t(p.side) * p.side
                  : p.mode == VisionPositions::AxisTables ? 2ull * p.n_pos
                                                          : 1;
  ensure_holds(table, rows * p.n * kF32, "vision_positions", "table");
  uint32_t wg = s.context().profile().wg_size;
  push::VisionPositionsPush push{p.n_tokens, p.n, uint32_t(p.mode), p.px, p.side, p.n_pos, p.sx, p.sy};
  s.dispatch(spirv::vision_positions, {wg}, {.reads = {table, positions}, .writes = {x}, .writes_read = {x}}, push,
             grid(ceil_div(n, wg)));
}

void avg_pool(Stream& s, BufferView x, BufferView y, uint32_t px, uint32_t py, uint32_t n, uint32_t k) {
  ENSURE(k > 0, "avg_pool: a kernel of 0");
  ensure_holds(x, uint64_t(px) * py * n * kF32, "avg_pool", "x");
  uint32_t out = elements(uint64_t(px / k) * (py / k), n, "avg_pool");
  ensure_holds(y, uint64_t(out) * kF32, "avg_pool", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::avg_pool, {wg}, {.reads = {x}, .writes = {y}}, push::PoolPush{px, py, n, k},
             grid(ceil_div(out, wg)));
}

void gelu_quick(Stream& s, BufferView x, BufferView y, uint32_t n) {
  ensure_holds(x, n * kF32, "gelu_quick", "x");
  ensure_holds(y, n * kF32, "gelu_quick", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::gelu_quick, {wg}, {.reads = {x}, .writes = {y}}, push::UnaryPush{n}, grid(ceil_div(n, wg)));
}

void clamp(Stream& s, BufferView x, BufferView y, uint32_t n, float lo, float hi) {
  ensure_holds(x, n * kF32, "clamp", "x");
  ensure_holds(y, n * kF32, "clamp", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::clamp, {wg}, {.reads = {x}, .writes = {y}}, push::ClampPush{n, lo, hi}, grid(ceil_div(n, wg)));
}

}  // namespace vkllm::ops
