// Entry points of the linear-attention kernels: argument checks, push constants, grids, and the
// loop bounds lavapipe needs (docs/decisions.md "lavapipe loop limit").
#include "ops_linear.h"

#include <algorithm>

#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

constexpr uint64_t kF32 = 4;
constexpr uint32_t kMaxTaps = 8;  // conv taps held in registers

// lavapipe ends an invocation's loops after loop_iteration_limit iterations in all, silently: a
// call whose loops (counted as if none were unrolled) could come within a factor 2 of it is refused.
void check_loops(const Context& ctx, uint64_t iterations, const char* op, uint32_t tokens) {
  uint32_t limit = ctx.caps().loop_iteration_limit;
  ENSURE(limit == 0 || iterations <= limit / 2,
         fmt::format("{}: {} tokens need {} loop iterations per thread, more than this driver runs ({}); give a "
                     "sequence fewer tokens per call",
                     op, tokens, iterations, limit / 2));
}

// Slots a state view holds (the kernels skip sequences in other slots); at least one.
uint32_t state_slots(BufferView state, uint64_t slot_bytes, const char* op) {
  ensure_holds(state, slot_bytes, op, "state");
  return uint32_t(std::min<uint64_t>(state.size / slot_bytes, UINT32_MAX));
}

}  // namespace

// --- conv1d

void ssm_conv(Stream& s, BufferView x, BufferView w, BufferView state, BufferView step, BufferView y,
              const SsmConvParams& p) {
  ENSURE(p.kernel >= 2 && p.kernel <= kMaxTaps,
         fmt::format("ssm_conv: kernel size {} must be from 2 to {}", p.kernel, kMaxTaps));
  ENSURE(p.channels > 0 && p.seqs > 0, "ssm_conv: channels and seqs must be positive");
  uint32_t stride = p.token_stride ? p.token_stride : p.channels;
  ENSURE(stride >= p.channels, fmt::format("ssm_conv: token_stride {} below {} channels", stride, p.channels));
  if (p.n_tokens == 0) return;
  ensure_holds(x, ((p.n_tokens - 1) * uint64_t(stride) + p.channels) * kF32, "ssm_conv", "x");
  ensure_holds(w, uint64_t(p.channels) * p.kernel * kF32, "ssm_conv", "w");
  ensure_holds(step, uint64_t(p.seqs) * sizeof(push::StepParams), "ssm_conv", "step");
  ensure_holds(y, uint64_t(p.n_tokens) * p.channels * kF32, "ssm_conv", "y");
  uint32_t slots = state_slots(state, uint64_t(p.kernel - 1) * p.channels * kF32, "ssm_conv");
  ENSURE(uint64_t(p.n_tokens) * std::max(stride, p.channels) <= UINT32_MAX, "ssm_conv: too many elements");
  check_loops(s.context(), uint64_t(p.seqs) + p.n_tokens * (2ull * p.kernel + 1) + 3ull * p.kernel, "ssm_conv",
              p.n_tokens);
  uint32_t wg = s.context().profile().wg_size;
  push::SsmConvPush push{
      .n_tokens = p.n_tokens, .n_seqs = p.seqs, .channels = p.channels, .token_stride = stride, .slots = slots};
  s.dispatch(spirv::ssm_conv, {wg, p.kernel}, {.reads = {x, w, step}, .writes = {state, y}, .writes_read = {state}},
             push, Groups{ceil_div(p.channels, wg), p.seqs, 1});
}

// --- norms and the gate

void l2_norm(Stream& s, BufferView x, BufferView y, const L2NormParams& p) {
  ENSURE(p.width > 0 && p.heads > 0, "l2_norm: heads and width must be positive");
  uint32_t stride = p.token_stride ? p.token_stride : p.heads * p.width;
  ENSURE(stride >= p.heads * p.width, "l2_norm: token_stride shorter than a token's heads");
  if (p.n_tokens == 0) return;
  uint64_t extent = (p.offset + (p.n_tokens - 1) * uint64_t(stride) + uint64_t(p.heads) * p.width) * kF32;
  ENSURE(extent / kF32 <= UINT32_MAX, "l2_norm: too many elements");
  ensure_holds(x, extent, "l2_norm", "x");
  ensure_holds(y, extent, "l2_norm", "y");
  const Profile& prof = s.context().profile();
  push::L2NormPush push{.rows = p.n_tokens * p.heads,
                        .heads = p.heads,
                        .width = p.width,
                        .token_stride = stride,
                        .offset = p.offset,
                        .eps = p.eps};
  s.dispatch(spirv::l2_norm, {prof.wg_size, prof.subgroup_ops}, {.reads = {x}, .writes = {y}}, push,
             grid(uint64_t(p.n_tokens) * p.heads));
}

void gated_rmsnorm(Stream& s, BufferView x, BufferView w, BufferView z, BufferView y, uint32_t rows, uint32_t width,
                   float eps) {
  ENSURE(width > 0 || rows == 0, "gated_rmsnorm: rows of length 0");
  uint64_t n = uint64_t(rows) * width;
  ENSURE(n <= UINT32_MAX, "gated_rmsnorm: too many elements");
  if (rows == 0) return;
  ensure_holds(x, n * kF32, "gated_rmsnorm", "x");
  ensure_holds(w, width * kF32, "gated_rmsnorm", "w");
  ensure_holds(z, n * kF32, "gated_rmsnorm", "z");
  ensure_holds(y, n * kF32, "gated_rmsnorm", "y");
  const Profile& prof = s.context().profile();
  s.dispatch(spirv::gated_rmsnorm, {prof.wg_size, prof.subgroup_ops}, {.reads = {x, w, z}, .writes = {y}},
             push::NormPush{rows, width, eps}, grid(rows));
}

void sigmoid_mul(Stream& s, BufferView x, BufferView g, BufferView y, uint32_t n) {
  if (n == 0) return;
  ensure_holds(x, n * kF32, "sigmoid_mul", "x");
  ensure_holds(g, n * kF32, "sigmoid_mul", "g");
  ensure_holds(y, n * kF32, "sigmoid_mul", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::sigmoid_mul, {wg}, {.reads = {x, g}, .writes = {y}}, push::UnaryPush{n}, grid(ceil_div(n, wg)));
}

}  // namespace vkllm::ops
