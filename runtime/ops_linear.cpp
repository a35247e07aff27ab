// Entry points of the linear-attention kernels: argument checks, push constants, grids, and the
// loop bounds lavapipe needs (docs/decisions.md "lavapipe loop limit").
#include "ops_linear.h"

#include <algorithm>
#include <bit>
#include <cmath>

#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

constexpr uint64_t kF32 = 4;
constexpr uint32_t kC = kDeltaRuleChunk;
constexpr uint32_t kMaxHead = 256;   // delta rule head size: registers and shared memory
constexpr uint32_t kMaxTaps = 8;     // conv taps held in registers
constexpr uint32_t kStateRows = 16;  // delta_rule_chunk: state rows per workgroup

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

// delta_rule.comp: threads per state row, a power of two up to 16 dividing s.
uint32_t threads_per_row(uint32_t s) {
  uint32_t t = 16;
  while (s % t != 0) t /= 2;
  return t;
}

// delta_rule.comp and ssm_scan.comp: a workgroup of whole rows of up to 16 threads.
uint32_t row_workgroup(const Context& ctx) { return std::max(ctx.profile().wg_size / 16 * 16, 16u); }

uint32_t max_chunks(const DeltaRuleParams& p) {
  if (p.n_tokens == 0) return 0;
  return ceil_div(p.n_tokens, kC) + std::min(p.seqs, p.n_tokens) - 1;
}

void check_delta_rule(const DeltaRuleParams& p) {
  ENSURE(p.h_k > 0 && p.h_v > 0 && p.h_v % p.h_k == 0,
         fmt::format("delta_rule: {} value heads cannot share {} key heads (h_v must be a multiple of h_k)", p.h_v,
                     p.h_k));
  ENSURE(p.s >= 4 && p.s <= kMaxHead && p.s % 4 == 0,
         fmt::format("delta_rule: head size {} must be a multiple of 4 from 4 to {}", p.s, kMaxHead));
  ENSURE(p.seqs > 0, "delta_rule: seqs must be positive");
}

}  // namespace

// --- conv1d

void ssm_conv(Stream& s, BufferView x, BufferView w, BufferView state, BufferView step, BufferView y,
              const SsmConvParams& p, BufferView bias) {
  ENSURE(p.kernel >= 2 && p.kernel <= kMaxTaps,
         fmt::format("ssm_conv: kernel size {} must be from 2 to {}", p.kernel, kMaxTaps));
  ENSURE(p.channels > 0 && p.seqs > 0, "ssm_conv: channels and seqs must be positive");
  uint32_t row = (p.gated ? 3 : 1) * p.channels, stride = p.token_stride ? p.token_stride : row;
  ENSURE(stride >= row, fmt::format("ssm_conv: token_stride {} below {} values a row", stride, row));
  if (p.n_tokens == 0) return;
  ensure_holds(x, ((p.n_tokens - 1) * uint64_t(stride) + row) * kF32, "ssm_conv", "x");
  ensure_holds(w, uint64_t(p.channels) * p.kernel * kF32, "ssm_conv", "w");
  ensure_holds(step, uint64_t(p.seqs) * sizeof(push::StepParams), "ssm_conv", "step");
  ensure_holds(y, uint64_t(p.n_tokens) * p.channels * kF32, "ssm_conv", "y");
  bool has_bias = is_bound(bias);
  if (has_bias) ensure_holds(bias, uint64_t(p.channels) * kF32, "ssm_conv", "bias");
  uint32_t slots = state_slots(state, uint64_t(p.kernel - 1) * p.channels * kF32, "ssm_conv");
  ENSURE(uint64_t(p.n_tokens) * stride <= UINT32_MAX, "ssm_conv: too many elements");
  check_loops(s.context(), uint64_t(p.seqs) + p.n_tokens * (2ull * p.kernel + 1) + 3ull * p.kernel, "ssm_conv",
              p.n_tokens);
  uint32_t wg = s.context().profile().wg_size;
  push::SsmConvPush push{
      .n_tokens = p.n_tokens, .n_seqs = p.seqs, .channels = p.channels, .token_stride = stride, .slots = slots};
  s.dispatch(spirv::ssm_conv, {wg, p.kernel, has_bias, p.silu, p.gated},
             {.reads = {x, w, step, has_bias ? bias : w}, .writes = {state, y}, .writes_read = {state}}, push,
             Groups{ceil_div(p.channels, wg), p.seqs, 1});
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

// --- the gated delta rule

uint64_t delta_rule_scratch_bytes(const DeltaRuleParams& p) {
  if (!p.chunked) return 0;
  return uint64_t(max_chunks(p)) * p.h_v * (2 * kC * kC + kC) * kF32;
}

void delta_rule(Stream& s, BufferView qkv, BufferView alpha, BufferView beta, BufferView dt_bias, BufferView a,
                BufferView state, BufferView step, BufferView o, BufferView scratch, const DeltaRuleParams& p) {
  check_delta_rule(p);
  if (p.n_tokens == 0) return;
  uint32_t S = p.s, qk_stride = p.qk_stride;
  uint64_t qk_row = std::max(
      {uint64_t(p.q_offset) + p.h_k * S, uint64_t(p.k_offset) + p.h_k * S, uint64_t(p.v_offset) + uint64_t(p.h_v) * S});
  ENSURE(qk_stride > 0 || p.n_tokens == 1, "delta_rule: qk_stride must be given");
  uint64_t qkv_floats = (p.n_tokens - 1) * uint64_t(qk_stride) + qk_row;
  ENSURE(qkv_floats <= UINT32_MAX && uint64_t(p.n_tokens) * p.h_v * S <= UINT32_MAX, "delta_rule: too many elements");
  ensure_holds(qkv, qkv_floats * kF32, "delta_rule", "qkv");
  ensure_holds(alpha, uint64_t(p.n_tokens) * p.h_v * kF32, "delta_rule", "alpha");
  ensure_holds(beta, uint64_t(p.n_tokens) * p.h_v * kF32, "delta_rule", "beta");
  ensure_holds(dt_bias, p.h_v * kF32, "delta_rule", "dt_bias");
  ensure_holds(a, p.h_v * kF32, "delta_rule", "a");
  ensure_holds(step, uint64_t(p.seqs) * sizeof(push::StepParams), "delta_rule", "step");
  ensure_holds(o, uint64_t(p.n_tokens) * p.h_v * S * kF32, "delta_rule", "o");
  uint32_t slots = state_slots(state, uint64_t(p.h_v) * S * S * kF32, "delta_rule");
  ENSURE(uint64_t(slots) * p.h_v * S * S <= UINT32_MAX, "delta_rule: the state view is too large");

  const Context& ctx = s.context();
  uint32_t wg = row_workgroup(ctx);
  push::DeltaRulePush push{.n_tokens = p.n_tokens,
                           .n_seqs = p.seqs,
                           .h_k = p.h_k,
                           .h_v = p.h_v,
                           .qk_stride = qk_stride,
                           .q_offset = p.q_offset,
                           .k_offset = p.k_offset,
                           .v_offset = p.v_offset,
                           .scale = float(1 / std::sqrt(double(S))),
                           .slots = slots,
                           .max_chunks = max_chunks(p)};
  if (!p.chunked) {
    uint32_t t = threads_per_row(S), rows = wg / t, nc = S / t;
    check_loops(ctx, p.seqs + 2ull * nc + p.n_tokens * (2ull * nc + std::bit_width(t) + 2), "delta_rule", p.n_tokens);
    s.dispatch(spirv::delta_rule, {wg, S, t},
               {.reads = {qkv, alpha, beta, dt_bias, a, step}, .writes = {state, o}, .writes_read = {state}}, push,
               Groups{ceil_div(S, rows), p.h_v, p.seqs});
    return;
  }

  uint64_t need = delta_rule_scratch_bytes(p);
  ensure_holds(scratch, need, "delta_rule", "scratch");
  ENSURE(push.max_chunks <= ctx.caps().max_workgroup_count[0],
         fmt::format("delta_rule: {} chunks exceed the device's workgroup count", push.max_chunks));
  BufferView sv{scratch.buffer, scratch.offset, need};
  // State rows per workgroup: kStateRows, fewer where shared memory is short.
  uint32_t rows = std::min(kStateRows, S);
  auto shared_bytes = [&] { return (rows * (S + 1) + 2 * rows * (kC + 1) + 2 * kC) * kF32; };
  while (shared_bytes() > ctx.caps().max_shared_memory && rows > 1) rows /= 2;
  ENSURE(
      shared_bytes() <= ctx.caps().max_shared_memory && (kC * (kC + 1) + 2 * kC) * kF32 <= ctx.caps().max_shared_memory,
      "delta_rule: the chunked form needs more shared memory than the device has");
  uint64_t pairs = ceil_div(uint64_t(rows) * kC, wg), cells = ceil_div(uint64_t(rows) * S, wg);
  // delta_rule_chunk walks a sequence's chunks; delta_rule_prep's loops do not grow with the tokens.
  uint64_t per_chunk = kC / wg + 1 + pairs * (S / 4 + 2 * (kC / 4) + 4) + cells * (kC / 4 + 1) + 4;
  uint64_t prep = p.seqs + 3 * kC + ceil_div(kC * kC, wg) * (S / 2 + 2) + kC * kC / 2;
  check_loops(ctx, std::max(prep, p.seqs + 2 * cells + ceil_div(p.n_tokens, kC) * per_chunk), "delta_rule (chunked)",
              p.n_tokens);
  s.dispatch(spirv::delta_rule_prep, {wg, S, kC}, {.reads = {qkv, alpha, beta, dt_bias, a, step}, .writes = {sv}}, push,
             Groups{push.max_chunks, p.h_v, 1});
  s.dispatch(spirv::delta_rule_chunk, {wg, S, kC, rows},
             {.reads = {qkv, step, sv}, .writes = {state, o}, .writes_read = {state}}, push,
             Groups{ceil_div(S, rows), p.h_v, p.seqs});
}

// --- Mamba-2 selective scan

void ssm_scan(Stream& s, BufferView xbc, BufferView proj, BufferView dt_bias, BufferView a, BufferView d,
              BufferView state, BufferView step, BufferView y, const SsmScanParams& p) {
  ENSURE(p.heads > 0 && p.head_dim > 0 && p.seqs > 0, "ssm_scan: heads, head_dim and seqs must be positive");
  ENSURE(p.groups > 0 && p.heads % p.groups == 0,
         fmt::format("ssm_scan: {} heads cannot share {} groups of B and C", p.heads, p.groups));
  ENSURE(p.state >= 4 && p.state <= kMaxHead && p.state % 4 == 0,
         fmt::format("ssm_scan: state size {} must be a multiple of 4 from 4 to {}", p.state, kMaxHead));
  if (p.n_tokens == 0) return;
  uint64_t d_inner = uint64_t(p.heads) * p.head_dim, bc = uint64_t(p.groups) * p.state;
  uint64_t x_row = std::max({d_inner, uint64_t(p.b_offset) + bc, uint64_t(p.c_offset) + bc});
  uint64_t p_row = std::max(uint64_t(p.dt_offset) + p.heads, p.gate ? uint64_t(p.z_offset) + d_inner : 0);
  ENSURE((p.x_stride >= x_row && p.dt_stride >= p_row) || p.n_tokens == 1,
         "ssm_scan: x_stride and dt_stride must hold a token's row");
  uint64_t x_floats = (p.n_tokens - 1) * uint64_t(p.x_stride) + x_row;
  uint64_t p_floats = (p.n_tokens - 1) * uint64_t(p.dt_stride) + p_row;
  ENSURE(x_floats <= UINT32_MAX && p_floats <= UINT32_MAX && p.n_tokens * d_inner <= UINT32_MAX,
         "ssm_scan: too many elements");
  ensure_holds(xbc, x_floats * kF32, "ssm_scan", "xbc");
  ensure_holds(proj, p_floats * kF32, "ssm_scan", "proj");
  for (auto [v, name] : {std::pair{dt_bias, "dt_bias"}, {a, "a"}, {d, "d"}})
    ensure_holds(v, p.heads * kF32, "ssm_scan", name);
  ensure_holds(step, uint64_t(p.seqs) * sizeof(push::StepParams), "ssm_scan", "step");
  ensure_holds(y, p.n_tokens * d_inner * kF32, "ssm_scan", "y");
  uint32_t slots = state_slots(state, d_inner * p.state * kF32, "ssm_scan");
  ENSURE(uint64_t(slots) * d_inner * p.state <= UINT32_MAX, "ssm_scan: the state view is too large");

  const Context& ctx = s.context();
  uint32_t wg = row_workgroup(ctx);
  uint32_t t = threads_per_row(p.state), rows = wg / t, nc = p.state / t;
  check_loops(ctx, p.seqs + 2ull * nc + p.n_tokens * (nc + std::bit_width(t) + 2), "ssm_scan", p.n_tokens);
  push::SsmScanPush push{.n_tokens = p.n_tokens,
                         .n_seqs = p.seqs,
                         .heads = p.heads,
                         .x_stride = p.x_stride,
                         .b_offset = p.b_offset,
                         .c_offset = p.c_offset,
                         .dt_stride = p.dt_stride,
                         .dt_offset = p.dt_offset,
                         .z_offset = p.z_offset,
                         .slots = slots};
  s.dispatch(spirv::ssm_scan, {wg, p.head_dim, p.state, t, p.heads / p.groups, p.gate},
             {.reads = {xbc, proj, dt_bias, a, d, step}, .writes = {state, y}, .writes_read = {state}}, push,
             Groups{ceil_div(p.head_dim, rows), p.heads, p.seqs});
}

}  // namespace vkllm::ops
