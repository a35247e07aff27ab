// Entry points of the attention kernels: tile and split planning, argument checks, dispatch.
#include "ops_attention.h"

#include <fmt/format.h>
#include <algorithm>
#include <bit>
#include <cmath>

#include "check.h"
#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

constexpr uint32_t kMaxAccumulators = 64;  // output floats one thread keeps in registers
constexpr uint32_t kMaxSplits = 64;
constexpr float kLog2e = 1.4426950408889634f;

// The shape with its defaults (0 fields) filled in.
AttentionShape resolved(AttentionShape sh) {
  if (sh.q_row_stride == 0) sh.q_row_stride = sh.n_heads * sh.dk;
  if (sh.o_row_stride == 0) sh.o_row_stride = sh.n_heads * sh.dv;
  if (sh.k_row_stride == 0) sh.k_row_stride = sh.dk;
  if (sh.v_row_stride == 0) sh.v_row_stride = sh.dv;
  if (sh.seq_q == 0) sh.seq_q = sh.n_q;
  if (sh.k_head_stride == 0) sh.k_head_stride = sh.kv_slots * sh.max_kv * sh.k_row_stride;
  if (sh.v_head_stride == 0) sh.v_head_stride = sh.kv_slots * sh.max_kv * sh.v_row_stride;
  if (sh.scale == 0) sh.scale = 1.0f / std::sqrt(static_cast<float>(sh.dk));
  return sh;
}

void check_shape(const AttentionShape& sh) {
  ENSURE(sh.n_q > 0 && sh.n_heads > 0 && sh.n_kv_heads > 0 && sh.dk > 0 && sh.dv > 0,
         "attention: n_q, n_heads, n_kv_heads, dk and dv must be positive");
  ENSURE(sh.n_heads % sh.n_kv_heads == 0,
         fmt::format("attention: {} query heads cannot be grouped over {} KV heads", sh.n_heads, sh.n_kv_heads));
  ENSURE(sh.max_kv > 0, "attention: max_kv (the number of keys a KV slot holds) must be positive");
  ENSURE(sh.seqs > 0 && sh.kv_slots > 0 && sh.seq_q <= sh.n_q,
         "attention: seqs and kv_slots must be positive, seq_q at most n_q");
  ENSURE(sh.q_row_stride >= sh.n_heads * sh.dk && sh.o_row_stride >= sh.n_heads * sh.dv,
         "attention: Q/O row strides smaller than a token's heads");
}

uint32_t rows_per_kv_head(const AttentionShape& sh) { return sh.n_q * (sh.n_heads / sh.n_kv_heads); }

// Row blocks of BR for any split of the n_q tokens into `seqs` sequences: each sequence boundary
// adds at most one partly filled block (flash_attn.glsl's find_block numbers them).
uint32_t row_blocks(const AttentionShape& sh, uint32_t br) {
  return ceil_div(rows_per_kv_head(sh), br) + std::min(sh.seqs, sh.n_q) - 1;
}

// Sizes derived in flash_attn.glsl from the specialization constants, mirrored here.
struct FlashLayout {
  uint32_t shared_bytes;  // q_s, kv_s (vec4), p_s, m_s, l_s, alpha_s
  uint32_t accumulators;  // output floats one thread keeps: OA * OB vec4s
};

// Loop iterations one invocation of flash_attn.glsl runs per key tile, an upper bound (entering
// a loop counts as one; the loops over DK4 and BC advance U = 2 steps per iteration).
uint32_t flash_loop_iterations_per_tile(const AttentionPlan& plan, uint32_t dk, uint32_t dv, const DeviceCaps& caps) {
  constexpr uint32_t u = 2;
  uint32_t dk4 = (dk + 3) / 4, dv4 = (dv + 3) / 4;
  uint32_t loads = ceil_div(plan.bc * dk4, plan.wg) + 1 + ceil_div(plan.bc * dv4, plan.wg) + 1;
  uint32_t n = 1 + loads + (ceil_div(dk4, u) + 1) + (ceil_div(plan.bc, u) + 1);
  if (plan.subgroup) {
    uint32_t subgroups = std::max(1u, plan.wg / std::max(1u, caps.max_subgroup_size));
    n += ceil_div(plan.br, subgroups) + 1;
  } else {
    uint32_t rows = ceil_div(plan.br, plan.wg);
    n += rows + 1 + rows * 2 * (ceil_div(plan.bc, u) + 1);
  }
  return n;
}

FlashLayout flash_layout(uint32_t br, uint32_t bc, uint32_t wg, uint32_t dk, uint32_t dv) {
  uint32_t dk4 = (dk + 3) / 4, dv4 = (dv + 3) / 4, ks4 = std::max(dk4, dv4) | 1;
  uint32_t tj = std::min(dv4, wg), tro = wg / tj;
  uint32_t oa = (br + tro - 1) / tro, ob = (dv4 + tj - 1) / tj;
  return {.shared_bytes = 16 * (br * dk4 + bc * ks4) + 4 * (br * (bc + 1) + 3 * br), .accumulators = 4 * oa * ob};
}

uint64_t elements_spanned(uint32_t heads, uint64_t head_stride, uint32_t rows, uint64_t row_stride, uint32_t d) {
  return (heads - 1) * head_stride + (rows - 1) * row_stride + d;
}

void check_view(BufferView view, uint64_t need_bytes, const char* what) {
  ENSURE(view.size >= need_bytes,
         fmt::format("attention: {} binding has {} bytes, the shape needs {}", what, view.size, need_bytes));
}

void check_kv_type(const AttentionShape& sh) {
  ENSURE(sh.kv_type == DType::F16 || sh.kv_type == DType::F32 || sh.kv_type == DType::Q8_0 || sh.kv_type == DType::Q4_0,
         fmt::format("attention: K/V of type {} (f16, f32, q8_0 or q4_0)", info(sh.kv_type).name));
}

// Flash attention reads K/V two elements at a time, and quantised K/V by blocks of 32 from the
// start of each row: dims and strides must be multiples of 2 (32).
void check_kv_layout(const AttentionShape& sh) {
  uint32_t m = info(sh.kv_type).block_values > 1 ? info(sh.kv_type).block_values : 2;
  bool ok = sh.dk % m == 0 && sh.dv % m == 0 && sh.k_head_stride % m == 0 && sh.k_row_stride % m == 0 &&
            sh.v_head_stride % m == 0 && sh.v_row_stride % m == 0;
  ENSURE(ok, fmt::format("attention: {} K/V need head dims and K/V strides that are multiples of {}",
                         info(sh.kv_type).name, m));
}

// Checks every binding against the shape; returns the resolved shape.
AttentionShape check_bindings(const AttentionShape& shape, BufferView q, BufferView k, BufferView v, BufferView step,
                              BufferView o) {
  AttentionShape sh = resolved(shape);
  check_shape(sh);
  check_kv_type(sh);
  check_view(q, 4 * elements_spanned(1, 0, sh.n_q, sh.q_row_stride, sh.n_heads * sh.dk), "Q");
  check_view(o, 4 * elements_spanned(1, 0, sh.n_q, sh.o_row_stride, sh.n_heads * sh.dv), "O");
  uint32_t rows = sh.kv_slots * sh.max_kv;
  uint64_t k_elems = elements_spanned(sh.n_kv_heads, sh.k_head_stride, rows, sh.k_row_stride, sh.dk);
  uint64_t v_elems = elements_spanned(sh.n_kv_heads, sh.v_head_stride, rows, sh.v_row_stride, sh.dv);
  check_view(k, row_bytes(sh.kv_type, k_elems), "K");
  check_view(v, row_bytes(sh.kv_type, v_elems), "V");
  check_view(step, sh.seqs * sizeof(push::StepParams), "step");
  return sh;
}

const spirv::Shader& flash_shader(DType kv) {
  switch (kv) {
    case DType::F32:
      return spirv::flash_attn_f32;
    case DType::Q8_0:
      return spirv::flash_attn_q8_0;
    case DType::Q4_0:
      return spirv::flash_attn_q4_0;
    default:
      return spirv::flash_attn_f16;
  }
}

// Scores stay in the base-2 domain: Q is pre-scaled by scale·log2(e), or with a soft-cap by
// scale / cap, the kernel then taking cap·log2(e)·tanh of the dot product.
push::AttentionPush make_push(const AttentionShape& sh, uint32_t splits, bool v_from_k, BufferView sinks) {
  bool capped = sh.softcap > 0;
  return {.n_q = sh.n_q,
          .n_heads = sh.n_heads,
          .n_kv_heads = sh.n_kv_heads,
          .dk = sh.dk,
          .dv = sh.dv,
          .q_row_stride = sh.q_row_stride,
          .o_row_stride = sh.o_row_stride,
          .k_head_stride = sh.k_head_stride,
          .k_row_stride = sh.k_row_stride,
          .v_head_stride = sh.v_head_stride,
          .v_row_stride = sh.v_row_stride,
          .max_kv = sh.max_kv,
          .scale_log2 = capped ? sh.scale / sh.softcap : sh.scale * kLog2e,
          .causal = sh.causal ? 1u : 0u,
          .window = sh.window,
          .n_splits = splits,
          .v_from_k = v_from_k ? 1u : 0u,
          .softcap_log2 = capped ? sh.softcap * kLog2e : 0.0f,
          .n_seqs = sh.seqs,
          .has_sinks = is_bound(sinks) ? 1u : 0u};
}

// The attention sinks' binding: one logit per query head, or (none) any bound view, never read.
BufferView sinks_binding(const AttentionShape& sh, BufferView sinks, BufferView any) {
  if (!is_bound(sinks)) return any;
  check_view(sinks, 4ull * sh.n_heads, "sinks");
  return sinks;
}

}  // namespace

// --- flash attention

namespace {

// The profile's tile, lowered to the rows one sequence has in a KV group and to at most
// kMaxAccumulators output floats per thread, then halved (the larger side first) until it fits
// the device's shared memory. A forced tile (tests) is taken as it is, and must fit.
AttentionPlan plan_tile(const DeviceCaps& caps, const Profile& prof, const AttentionShape& sh) {
  AttentionPlan plan{.br = prof.attn_br, .bc = prof.attn_bc, .wg = prof.attn_wg, .subgroup = prof.subgroup_ops};
  auto layout = [&] { return flash_layout(plan.br, plan.bc, plan.wg, sh.dk, sh.dv); };
  uint32_t limit = caps.max_shared_memory;
  if (sh.force_br > 0) {
    plan.br = sh.force_br, plan.bc = sh.force_bc, plan.wg = sh.force_wg;
  } else {
    plan.br = std::min(plan.br, std::bit_ceil(sh.seq_q * (sh.n_heads / sh.n_kv_heads)));
    while (plan.br > 1 && layout().accumulators > kMaxAccumulators) plan.br /= 2;
    while (layout().shared_bytes > limit && (plan.br > 1 || plan.bc > 1)) {
      if (plan.bc >= plan.br)
        plan.bc /= 2;
      else
        plan.br /= 2;
    }
  }
  plan.shared_bytes = layout().shared_bytes;
  ENSURE(plan.shared_bytes <= limit, fmt::format("attention: head dims {}/{} need {} bytes of shared memory with "
                                                 "{}x{} tiles; the device has {}",
                                                 sh.dk, sh.dv, plan.shared_bytes, plan.br, plan.bc, limit));
  ENSURE(layout().accumulators <= kMaxAccumulators && plan.wg <= caps.max_workgroup_invocations &&
             plan.wg <= caps.max_workgroup_size[0],
         fmt::format("attention: a {}x{} tile on {} threads does not fit the device", plan.br, plan.bc, plan.wg));
  if (sh.force_br > 0) return plan;
  // Small tiles (decode: one row per KV head) get a smaller workgroup, down to one subgroup of
  // the widest size, rather than idle threads at every barrier.
  uint32_t narrow = std::max({std::bit_ceil(plan.br * plan.bc), caps.max_subgroup_size, 1u});
  if (narrow < plan.wg && flash_layout(plan.br, plan.bc, narrow, sh.dk, sh.dv).accumulators <= kMaxAccumulators)
    plan.wg = narrow;
  return plan;
}

}  // namespace

AttentionPlan attention_plan(const DeviceCaps& caps, const Profile& prof, const AttentionShape& shape) {
  AttentionShape sh = resolved(shape);
  check_shape(sh);
  AttentionPlan plan = plan_tile(caps, prof, sh);
  uint32_t base = row_blocks(sh, plan.br) * sh.n_kv_heads;
  uint32_t kv = sh.plan_kv ? std::min(sh.plan_kv, sh.max_kv) : sh.max_kv;
  if (sh.force_splits > 0) {
    plan.splits = sh.force_splits;
  } else if (uint32_t target = attention_target_workgroups(caps, prof);
             base < target && kv > plan.bc && kv >= 2 * prof.attn_split_min) {
    plan.splits = std::min({ceil_div(target, base), kv / prof.attn_split_min, kMaxSplits});
  }
  // A device that cuts long loops short (lavapipe) gets enough splits that no workgroup walks
  // more tiles than its loops may iterate, with a factor 2 of margin.
  if (uint32_t loop_limit = caps.loop_iteration_limit) {
    uint32_t max_tiles = loop_limit / 2 / flash_loop_iterations_per_tile(plan, sh.dk, sh.dv, caps);
    plan.splits = std::max(plan.splits, ceil_div(kv, uint64_t(max_tiles) * plan.bc));
  }
  return plan;
}

AttentionPlan attention_plan(const Context& ctx, const AttentionShape& shape) {
  return attention_plan(ctx.caps(), ctx.profile(), shape);
}

uint64_t attention_scratch_bytes(const DeviceCaps& caps, const Profile& prof, const AttentionShape& shape) {
  AttentionPlan plan = attention_plan(caps, prof, shape);
  if (plan.splits == 1) return 0;
  // The partials (O, then m and l) and a counter per (row block, KV head) (flash_attn.glsl).
  return (uint64_t(plan.splits) * shape.n_q * shape.n_heads * (shape.dv + 2) +
          uint64_t(row_blocks(shape, plan.br)) * shape.n_kv_heads) *
         sizeof(float);
}

uint64_t attention_scratch_bytes(const Context& ctx, const AttentionShape& shape) {
  return attention_scratch_bytes(ctx.caps(), ctx.profile(), shape);
}

void clear_attention_scratch(const Context& ctx, const Buffer& scratch) {
  Stream s(ctx);
  s.fill(scratch.view(0, scratch.size() / 4 * 4), 0);
  s.submit_wait();
}

void attention(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView v, BufferView step,
               BufferView o, BufferView scratch, BufferView sinks) {
  AttentionShape sh = check_bindings(shape, q, k, v, step, o);
  check_kv_layout(sh);
  AttentionPlan plan = attention_plan(s.context(), sh);
  // MLA: V is the prefix of each K row, so the K tile already in shared memory is the V tile.
  bool v_from_k = k.buffer == v.buffer && k.offset == v.offset && sh.k_head_stride == sh.v_head_stride &&
                  sh.k_row_stride == sh.v_row_stride && sh.dv <= sh.dk;
  const spirv::Shader& shader = flash_shader(sh.kv_type);
  Groups groups{row_blocks(sh, plan.br), sh.n_kv_heads, plan.splits};
  auto push = make_push(sh, plan.splits, v_from_k, sinks);
  BufferView sk = sinks_binding(sh, sinks, q);
  uint32_t sg_min = std::max(1u, s.context().caps().min_subgroup_size);
  std::initializer_list<SpecConst> spec = {plan.wg, plan.subgroup, plan.br, plan.bc, sh.dk, sh.dv, sg_min};
  if (plan.splits == 1) {  // the partials' binding is not read; o stands in
    s.dispatch(shader, spec, {.reads = {q, k, v, step, sk}, .writes = {o, o}}, push, groups);
    return;
  }
  // Split-K: the split of a block that finishes last merges the partials into o (one dispatch).
  uint64_t need = attention_scratch_bytes(s.context(), sh);
  check_view(scratch, need, "split-K scratch");
  BufferView partial{scratch.buffer, scratch.offset, need};
  s.dispatch(shader, spec, {.reads = {q, k, v, step, sk}, .writes = {o, partial}, .writes_read = {partial}}, push,
             groups);
}

// --- naive baseline

uint64_t attention_naive_scratch_bytes(const AttentionShape& shape) {
  return uint64_t(shape.n_heads) * shape.n_q * shape.max_kv * sizeof(float);
}

void attention_naive(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView v, BufferView step,
                     BufferView o, BufferView scores, BufferView sinks) {
  const Context& ctx = s.context();
  uint64_t need = attention_naive_scratch_bytes(shape);
  ENSURE(need <= ctx.caps().max_storage_buffer_range,
         fmt::format("naive attention: the {}x{}x{} score matrix needs {} MiB, more than one storage buffer "
                     "binding of this device ({} MiB)",
                     shape.n_heads, shape.n_q, shape.max_kv, need >> 20, ctx.caps().max_storage_buffer_range >> 20));
  ENSURE(shape.softcap == 0, "naive attention: no soft-cap (flash attention has it)");
  AttentionShape sh = check_bindings(shape, q, k, v, step, o);
  ENSURE(sh.seqs == 1, "naive attention: one sequence per call");
  ENSURE(sh.kv_type == DType::F16 || sh.kv_type == DType::F32, "naive attention reads f16 or f32 K/V only");
  bool kv_f16 = sh.kv_type == DType::F16;
  check_view(scores, need, "scores");
  BufferView sv{scores.buffer, scores.offset, need};
  uint32_t wg = ctx.profile().wg_size;
  auto push = make_push(sh, 1, false, sinks);
  s.dispatch(kv_f16 ? spirv::attention_naive_scores_f16 : spirv::attention_naive_scores_f32, {wg},
             {.reads = {step, q, k}, .writes = {sv}}, push, grid(ceil_div(need / sizeof(float), wg)));
  s.dispatch(spirv::attention_naive_softmax, {wg, ctx.profile().subgroup_ops},
             {.reads = {step, sinks_binding(sh, sinks, step)}, .writes = {sv}}, push,
             grid(uint64_t(sh.n_heads) * sh.n_q));
  s.dispatch(kv_f16 ? spirv::attention_naive_pv_f16 : spirv::attention_naive_pv_f32, {wg},
             {.reads = {step, sv, v}, .writes = {o}}, push, grid(ceil_div(uint64_t(sh.n_q) * sh.n_heads * sh.dv, wg)));
}

// --- probabilities (the capture)

uint64_t attention_probs_bytes(const AttentionShape& shape, uint32_t n_keys) {
  return uint64_t(shape.n_heads) * shape.n_q * n_keys * sizeof(float);
}

namespace {

const spirv::Shader& probs_shader(DType kv) {
  switch (kv) {
    case DType::F32:
      return spirv::attention_probs_f32;
    case DType::Q8_0:
      return spirv::attention_probs_q8_0;
    case DType::Q4_0:
      return spirv::attention_probs_q4_0;
    default:
      return spirv::attention_probs_f16;
  }
}

// Loop iterations one invocation of attention_probs.glsl runs, an upper bound (entering a loop
// counts as one): the query load, the three passes over its keys (the first with a dot product
// of dk / 2 pairs per key) and the reductions.
uint64_t probs_loop_iterations(uint32_t wg, uint32_t dk, uint32_t n_keys) {
  uint64_t keys = ceil_div(n_keys, wg), pairs = dk / 2;
  return ceil_div(pairs, wg) + 1 + keys * (pairs + 1) + 1 + 2 * (keys + 1) + 4 * (std::bit_width(wg) + 1);
}

}  // namespace

void attention_probs(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView step,
                     BufferView out, uint32_t n_keys, BufferView sinks) {
  const Context& ctx = s.context();
  AttentionShape sh = resolved(shape);
  check_shape(sh);
  check_kv_type(sh);
  check_kv_layout(sh);
  ENSURE(sh.seqs == 1, "attention probabilities: one sequence per call");
  ENSURE(n_keys >= 1, "attention probabilities: at least one key per row");
  uint64_t need = attention_probs_bytes(sh, n_keys);
  ENSURE(need <= ctx.caps().max_storage_buffer_range,
         fmt::format("attention probabilities: {} heads x {} queries x {} keys need {} MiB, more than one storage "
                     "buffer binding of this device ({} MiB)",
                     sh.n_heads, sh.n_q, n_keys, need >> 20, ctx.caps().max_storage_buffer_range >> 20));
  check_view(q, 4 * elements_spanned(1, 0, sh.n_q, sh.q_row_stride, sh.n_heads * sh.dk), "Q");
  uint64_t k_elems = elements_spanned(sh.n_kv_heads, sh.k_head_stride, sh.kv_slots * sh.max_kv, sh.k_row_stride, sh.dk);
  check_view(k, row_bytes(sh.kv_type, k_elems), "K");
  check_view(step, sizeof(push::StepParams), "step");
  check_view(out, need, "probabilities");
  bool capped = sh.softcap > 0;
  // A longer row gets a wider workgroup where the device cuts long loops short (lavapipe).
  uint32_t wg = ctx.profile().wg_size;
  if (uint32_t limit = ctx.caps().loop_iteration_limit) {
    while (probs_loop_iterations(wg, sh.dk, n_keys) > limit / 2 && wg * 2 <= ctx.caps().max_workgroup_invocations)
      wg *= 2;
    ENSURE(probs_loop_iterations(wg, sh.dk, n_keys) <= limit / 2,
           fmt::format("attention probabilities: rows of {} keys are too long for this device's loop limit", n_keys));
  }
  push::AttentionProbsPush push{.n_q = sh.n_q,
                                .n_heads = sh.n_heads,
                                .n_kv_heads = sh.n_kv_heads,
                                .dk = sh.dk,
                                .q_row_stride = sh.q_row_stride,
                                .k_head_stride = sh.k_head_stride,
                                .k_row_stride = sh.k_row_stride,
                                .max_kv = sh.max_kv,
                                .scale_log2 = capped ? sh.scale / sh.softcap : sh.scale * kLog2e,
                                .causal = sh.causal ? 1u : 0u,
                                .window = sh.window,
                                .n_keys = n_keys,
                                .softcap_log2 = capped ? sh.softcap * kLog2e : 0.0f,
                                .has_sinks = is_bound(sinks) ? 1u : 0u};
  s.dispatch(probs_shader(sh.kv_type), {wg, ctx.profile().subgroup_ops, sh.dk},
             {.reads = {q, k, step, sinks_binding(sh, sinks, q)}, .writes = {BufferView{out.buffer, out.offset, need}}},
             push, grid(uint64_t(sh.n_heads) * sh.n_q));
}

}  // namespace vkllm::ops
