// Entry points of the mixture-of-experts kernels: argument checks, the plan's sizes, the per-type
// expert-product shaders (rows generated from the weight-type list), one dispatch per weight slice.
#include "ops_moe.h"

#include <fmt/format.h>
#include <algorithm>
#include <numeric>

#include "context.h"
#include "ops_check.h"
#include "ops_matmul_coop.h"
#include "push.h"

namespace vkllm::ops {

namespace {

struct IdKernels {
  DType type;
  const spirv::Shader* matvec;
  const spirv::Shader* matmul;
};

#define VKLLM_ID_KERNELS(T, t) {DType::T, &spirv::matvec_id_##t, &spirv::matmul_id_##t},
const IdKernels kIdKernels[] = {VKLLM_WEIGHT_TYPES(VKLLM_ID_KERNELS)};
#undef VKLLM_ID_KERNELS

const IdKernels& id_kernels(DType t) {
  for (const IdKernels& k : kIdKernels)
    if (k.type == t) return k;
  throw Error(fmt::format("matmul_id: no kernel reads expert weights of type {}", info(t).name));
}

// lavapipe ends an invocation's loops after loop_iteration_limit iterations in all, silently
// (docs/decisions.md, attention): a kernel whose loops could come near it is refused instead.
void check_loops(const Context& ctx, uint64_t iterations, const char* op) {
  uint32_t limit = ctx.caps().loop_iteration_limit;
  ENSURE(limit == 0 || iterations <= limit / 2,
         fmt::format("{}: {} loop iterations per thread exceed what this driver runs ({})", op, iterations, limit / 2));
}

}  // namespace

// --- routing

void moe_route(Stream& s, const MoeRouteParams& p, BufferView logits, BufferView bias, BufferView ids,
               BufferView weights, BufferView expert_scale) {
  if (p.n_tokens == 0) return;
  ENSURE(
      p.n_experts > 0 && p.n_used >= 1 && p.n_used <= std::min(p.n_experts, kMoeMaxUsed),
      fmt::format("moe_route: {} of {} experts per token (1 to min(experts, {}))", p.n_used, p.n_experts, kMoeMaxUsed));
  if (p.n_groups > 1) {
    uint32_t size = p.n_experts / p.n_groups;
    ENSURE(p.n_groups <= kMoeMaxGroups && p.n_experts % p.n_groups == 0 && size >= 2 && p.n_groups_used >= 1 &&
               p.n_groups_used <= p.n_groups && p.n_used <= p.n_groups_used * size,
           fmt::format("moe_route: {} experts in {} groups, {} groups used, {} experts used is not a valid grouping",
                       p.n_experts, p.n_groups, p.n_groups_used, p.n_used));
  }
  uint64_t n = uint64_t(p.n_tokens) * p.n_experts, k = uint64_t(p.n_tokens) * p.n_used;
  ensure_holds(logits, 4 * n, "moe_route", "logits");
  ensure_holds(ids, 4 * k, "moe_route", "ids");
  ensure_holds(weights, 4 * k, "moe_route", "weights");
  bool has_bias = is_bound(bias) && bias.size > 0;
  if (has_bias) ensure_holds(bias, 4ull * p.n_experts, "moe_route", "bias");
  bool has_scale = is_bound(expert_scale) && expert_scale.size > 0;
  if (has_scale) ensure_holds(expert_scale, 4ull * p.n_experts, "moe_route", "expert_scale");
  check_loops(s.context(), uint64_t(p.n_used + 4) * p.n_experts + uint64_t(p.n_groups) * (p.n_groups + 4), "moe_route");
  push::MoeRoutePush pc{.n_tokens = p.n_tokens,
                        .n_experts = p.n_experts,
                        .n_used = p.n_used,
                        .scores = uint32_t(p.scores),
                        .n_groups = p.n_groups,
                        .n_groups_used = p.n_groups_used,
                        .norm = p.norm ? 1u : 0u,
                        .scale = p.scale == 1.0f ? 0.0f : p.scale};
  constexpr uint32_t wg = 64;
  s.dispatch(spirv::moe_route, {wg, has_bias, has_scale},
             {.reads = {has_bias ? bias : logits, has_scale ? expert_scale : logits}, .writes = {logits, ids, weights}},
             pc, grid(ceil_div(p.n_tokens, wg)));
}

void moe_bias(Stream& s, BufferView y, BufferView bias, BufferView ids, uint32_t n_pairs, uint32_t M) {
  uint64_t n = uint64_t(n_pairs) * M;
  if (n == 0) return;
  ENSURE(n <= UINT32_MAX, "moe_bias: too many elements");
  ensure_holds(y, 4 * n, "moe_bias", "y");
  ensure_holds(ids, 4ull * n_pairs, "moe_bias", "ids");
  ensure_holds(bias, 4ull * M, "moe_bias", "bias");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::moe_bias, {wg}, {.reads = {bias, ids}, .writes = {y}, .writes_read = {y}},
             push::MoeBiasPush{n_pairs, M}, grid(ceil_div(n, wg)));
}

// --- grouping by expert

uint64_t ExpertPlan::bytes() const { return 4ull * (3ull * n_experts + n_pairs() + 2ull * max_tiles); }

ExpertPlan expert_plan(const Context& ctx, uint32_t n_tokens, uint32_t n_used, uint32_t n_experts) {
  const Profile& pr = ctx.profile();
  if (n_tokens >= pr.matmul_tiled_min_n) return tiled_expert_plan(n_tokens, n_used, n_experts, pr.matmul_bn);
  ExpertPlan p{.n_tokens = n_tokens, .n_used = n_used, .n_experts = n_experts};
  p.tile = std::max(1u, std::min(n_tokens, pr.matvec_tokens));
  p.max_tiles = std::min(n_experts, p.n_pairs()) + ceil_div(p.n_pairs(), p.tile);
  return p;
}

ExpertPlan tiled_expert_plan(uint32_t n_tokens, uint32_t n_used, uint32_t n_experts, uint32_t tile) {
  ExpertPlan p{.n_tokens = n_tokens, .n_used = n_used, .n_experts = n_experts, .tiled = true, .tile = tile};
  p.max_tiles = std::min(n_experts, p.n_pairs()) + ceil_div(p.n_pairs(), p.tile);
  return p;
}

void moe_plan(Stream& s, const ExpertPlan& plan, BufferView ids, BufferView plan_buf) {
  if (plan.n_pairs() == 0) return;
  ensure_holds(ids, 4ull * plan.n_pairs(), "moe_plan", "ids");
  ensure_holds(plan_buf, plan.bytes(), "moe_plan", "plan");
  constexpr uint32_t wg = 256;
  check_loops(s.context(), 3ull * plan.n_experts + 2ull * plan.max_tiles + 2 * ceil_div(plan.n_pairs(), wg),
              "moe_plan");
  push::MoePlanPush pc{
      .n_pairs = plan.n_pairs(), .n_experts = plan.n_experts, .tile = plan.tile, .max_tiles = plan.max_tiles};
  s.dispatch(spirv::moe_plan, {wg}, {.reads = {ids}, .writes = {plan_buf}}, pc, Groups{});
}

// --- expert products

bool matmul_id_supports(DType type) {
  return std::any_of(std::begin(kIdKernels), std::end(kIdKernels), [&](const IdKernels& k) { return k.type == type; });
}

namespace {

void check_matmul_id(const ExpertPlan& plan, DType type, std::span<const ExpertSlice> w, BufferView x,
                     BufferView plan_buf, BufferView y, uint32_t M, uint32_t K, uint32_t x_div, uint32_t x_row_stride,
                     uint64_t second_half) {
  const DTypeInfo& ti = info(type);
  ENSURE(M > 0 && K > 0 && K % ti.block_values == 0,
         fmt::format("matmul_id: K = {} is not a multiple of {}'s block of {} values", K, ti.name, ti.block_values));
  ENSURE(x_div == 1 || x_div == plan.n_used, "matmul_id: x rows are per pair (1) or per token (n_used)");
  uint32_t covered = 0;
  for (const ExpertSlice& sl : w) {
    ENSURE(sl.first == covered && sl.count > 0, "matmul_id: the weight slices must cover the experts in order");
    ensure_holds(sl.w, uint64_t(sl.count) * M * row_bytes(type, K), "matmul_id", "weight slice");
    covered += sl.count;
  }
  ENSURE(covered == plan.n_experts, fmt::format("matmul_id: slices hold {} of {} experts", covered, plan.n_experts));
  uint64_t x_rows = plan.n_pairs() / x_div;
  ensure_holds(x, 4 * ((x_rows - 1) * x_row_stride + K), "matmul_id", "x");
  uint64_t half = uint64_t(plan.n_pairs()) * (M / 2);
  ENSURE(second_half == 0 || (M % 2 == 0 && second_half >= half && second_half <= UINT32_MAX),
         fmt::format("matmul_id: the second half at {} floats overlaps the first ({} floats) or is out of reach",
                     second_half, half));
  ensure_holds(y, second_half ? 4 * (second_half + half) : 4ull * plan.n_pairs() * M, "matmul_id", "y");
  ensure_holds(plan_buf, plan.bytes(), "matmul_id", "plan");
  ENSURE(!x.overlaps(y), "matmul_id: y overlaps x");
}

}  // namespace

void matmul_id(Stream& s, const ExpertPlan& plan, DType type, std::span<const ExpertSlice> w, BufferView x,
               BufferView plan_buf, BufferView y, uint32_t M, uint32_t K, uint32_t x_div, uint32_t x_row_stride,
               MatmulKernel kernel, uint64_t second_half) {
  if (plan.n_pairs() == 0) return;
  const IdKernels& k = id_kernels(type);
  if (x_row_stride == 0) x_row_stride = K;
  check_matmul_id(plan, type, w, x, plan_buf, y, M, K, x_div, x_row_stride, second_half);
  const Context& ctx = s.context();
  const Profile& p = ctx.profile();
  ENSURE(plan.max_tiles <= ctx.caps().max_workgroup_count[0],
         fmt::format("matmul_id: {} tiles exceed the device's workgroup count", plan.max_tiles));
  std::optional<CoopTile> coop;
  if (plan.tiled && kernel != MatmulKernel::Tiled) coop = coop_id_choice(ctx, type, plan.tile);
  ENSURE(coop || kernel != MatmulKernel::Coop,
         fmt::format("matmul_id: no checked cooperative-matrix kernel for {} rows of {} in tiles of {} on this device",
                     M, info(type).name, plan.tile));
  for (const ExpertSlice& sl : w) {
    push::MatmulIdPush pc{.M = M,
                          .K = K,
                          .n_pairs = plan.n_pairs(),
                          .n_experts = plan.n_experts,
                          .max_tiles = plan.max_tiles,
                          .x_div = x_div,
                          .x_row_stride = x_row_stride,
                          .y_row_stride = second_half ? M / 2 : M,
                          .expert0 = sl.first,
                          .expert1 = sl.first + sl.count,
                          .split = second_half ? M / 2 : M,
                          .y_second = uint32_t(second_half)};
    Bindings b{.reads = {sl.w, x, plan_buf}, .writes = {y}};
    if (coop) {
      dispatch_coop_id(s, type, *coop, b, pc, plan.max_tiles, x.offset % 16 == 0 && x_row_stride % 4 == 0);
    } else if (plan.tiled) {
      s.dispatch(*k.matmul, {p.matmul_wg, p.matmul_bm, p.matmul_bn, p.matmul_bk, p.matmul_tm, p.matmul_tn}, b, pc,
                 Groups{plan.max_tiles, ceil_div(M, p.matmul_bm), 1});
    } else {
      bool aligned = K % 8 == 0 && x_row_stride % 4 == 0;
      Groups rows = grid(ceil_div(M, p.matvec_rows));
      Groups g{plan.max_tiles, rows.x, rows.y};
      s.dispatch(*k.matvec, {p.matvec_wg, p.subgroup_ops, p.matvec_rows, plan.tile, aligned, p.matvec_rows_per_thread},
                 b, pc, g);
    }
  }
}

// --- the weighted sum

void moe_combine(Stream& s, BufferView y, BufferView weights, BufferView shared, BufferView gate, BufferView x,
                 uint32_t n_tokens, uint32_t n_used, uint32_t dim, bool accumulate) {
  uint64_t n = uint64_t(n_tokens) * dim;
  if (n == 0) return;
  ENSURE(n <= UINT32_MAX, "moe_combine: too many elements");
  ensure_holds(y, 4 * n * n_used, "moe_combine", "y");
  ensure_holds(weights, 4ull * n_tokens * n_used, "moe_combine", "weights");
  ensure_holds(x, 4 * n, "moe_combine", "x");
  bool has_shared = is_bound(shared) && shared.size > 0, has_gate = is_bound(gate) && gate.size > 0;
  ENSURE(has_shared || !has_gate, "moe_combine: a gate needs a shared expert");
  if (has_shared) ensure_holds(shared, 4 * n, "moe_combine", "shared");
  if (has_gate) ensure_holds(gate, 4ull * n_tokens, "moe_combine", "gate");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::moe_combine, {wg, has_shared, has_gate, accumulate},
             {.reads = {y, weights, has_shared ? shared : y, has_gate ? gate : y, accumulate ? x : y}, .writes = {x}},
             push::MoeCombinePush{.n_tokens = n_tokens, .n_used = n_used, .dim = dim}, grid(ceil_div(n, wg)));
}

}  // namespace vkllm::ops
