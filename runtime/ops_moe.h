// Mixture-of-experts kernels (docs/formats.md §8): routing, the grouping of routed tokens by
// expert, the expert products that read only the chosen experts' weights, and the weighted sum.
// One MoE FFN of n tokens, k experts per token, as the graph records it:
//   logits = router · h                   (ops::matmul)        (n, n_experts)
//   moe_route(logits -> ids, weights)                          (n, k) each
//   moe_plan(ids -> plan)                 pairs p = t·k + j grouped by expert, cut into tiles
//   g = matmul_id(W_gate, h), u = matmul_id(W_up, h)           (n·k, F), x row of pair p: p / k
//     (fused experts: g, u = matmul_id(W_gate_up, h), one dispatch into both)
//   a = act(g) ⊙ u; d = matmul_id(W_down, a)                   (n·k, dim), x row: p
//   moe_combine(d, weights [, shared, gate] -> x)              x += Σ_j w_j d_j (+ shared)
// No host round trip: the ids stay on the GPU and each expert-product workgroup reads its tile.
#pragma once
#include <span>

#include "buffer.h"
#include "dtype.h"
#include "ops_matmul.h"
#include "stream.h"

namespace vkllm {
class Context;
}

namespace vkllm::ops {

// How a router's logits become expert scores: softmax over the experts, sigmoid of each, or the
// logits themselves with the weights a softmax over the chosen experts' logits (gpt-oss).
enum class RouteScores : uint32_t { Softmax = 0, Sigmoid = 1, ChosenSoftmax = 2 };

struct MoeRouteParams {
  uint32_t n_tokens = 0, n_experts = 0, n_used = 0;
  RouteScores scores = RouteScores::Softmax;
  uint32_t n_groups = 0, n_groups_used = 0;  // > 1 groups: group-limited routing
  bool norm = false;                         // weights divided by their sum
  float scale = 1.0f;                        // then multiplied by this (0 and 1: unchanged)
};
constexpr uint32_t kMoeMaxUsed = 64, kMoeMaxGroups = 64;

// logits (n_tokens, n_experts) f32, replaced by the scores; bias (n_experts) or an empty view;
// ids (n_tokens, n_used) int32 and weights (n_tokens, n_used) f32, in rank order (ref::moe_route);
// expert_scale (n_experts) multiplies each chosen expert's weight (gemma4's per-expert output
// scale), or an empty view.
void moe_route(Stream& s, const MoeRouteParams& p, BufferView logits, BufferView bias, BufferView ids,
               BufferView weights, BufferView expert_scale = {});

// y(n_pairs, M) row p += bias[ids[p]]: a bias per expert (rows (n_experts, M) f32; gpt-oss),
// ids (n_pairs) int32 the pairs' experts (moe_route's ids).
void moe_bias(Stream& s, BufferView y, BufferView bias, BufferView ids, uint32_t n_pairs, uint32_t M);

// How one MoE block's expert products run for n_tokens tokens, fixed at record time: the kernel
// (matvec_id below the profile's matmul_tiled_min_n tokens, like ops::matmul, else matmul_id)
// and its tile of pairs. At most min(n_experts, n_pairs) + n_pairs / tile tiles are ever filled.
struct ExpertPlan {
  uint32_t n_tokens = 0, n_used = 0, n_experts = 0;
  bool tiled = false;
  uint32_t tile = 1;
  uint32_t max_tiles = 0;
  uint32_t n_pairs() const { return n_tokens * n_used; }
  uint64_t bytes() const;  // of the plan buffer (int32, layout in shaders/push_moe.h)
};
ExpertPlan expert_plan(const Context& ctx, uint32_t n_tokens, uint32_t n_used, uint32_t n_experts);
// The tiled plan with `tile` pairs a tile, whatever the token count (the cooperative-matrix
// self-check builds one).
ExpertPlan tiled_expert_plan(uint32_t n_tokens, uint32_t n_used, uint32_t n_experts, uint32_t tile);

// plan = ids (n_pairs int32, each < n_experts) grouped by expert, and the tile list.
void moe_plan(Stream& s, const ExpertPlan& plan, BufferView ids, BufferView plan_buf);

// The experts [first, first + count) of a (n_experts, M, K) weight, in one binding.
struct ExpertSlice {
  uint32_t first = 0, count = 0;
  BufferView w;  // count · M rows of row_bytes(type, K)
};

// y(n_pairs, M) row p = W[expert of p] · x[p / x_div] (x rows of K floats, x_row_stride apart; y
// packed), over the slices that together hold every expert. One dispatch per slice. A tiled plan
// runs on cooperative matrices where the device has a checked kernel for it (ops_matmul_coop.h;
// `kernel` Tiled or Coop forces one, for tests), else on the tiled kernel.
// second_half > 0 (M even): y holds two packed (n_pairs, M/2) matrices, values 0 .. M/2 - 1 of
// each row at y's start and the rest from second_half floats into y: fused experts' gate|up rows
// (ffn_gate_up_exps) into the gate and the up activations by one dispatch.
void matmul_id(Stream& s, const ExpertPlan& plan, DType type, std::span<const ExpertSlice> w, BufferView x,
               BufferView plan_buf, BufferView y, uint32_t M, uint32_t K, uint32_t x_div, uint32_t x_row_stride = 0,
               MatmulKernel kernel = MatmulKernel::Auto, uint64_t second_half = 0);

// x(n_tokens, dim) += Σ_j weights[t, j] · y[t·n_used + j] (+ shared[t] · sigmoid(gate[t]), or
// + shared[t] without a gate). shared (n_tokens, dim) and gate (n_tokens) may be empty views.
// accumulate false: x = that sum (x's old values unread).
void moe_combine(Stream& s, BufferView y, BufferView weights, BufferView shared, BufferView gate, BufferView x,
                 uint32_t n_tokens, uint32_t n_used, uint32_t dim, bool accumulate = true);

// Whether matmul_id reads weights of this type.
bool matmul_id_supports(DType type);

}  // namespace vkllm::ops
