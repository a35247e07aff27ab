// CPU reference for mixture-of-experts routing and expert products (docs/formats.md §8): plain
// loops in double, the specification of moe_route, matmul_id and moe_combine.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkllm::ref {

// Scores: softmax over the experts, sigmoid of each logit, or the logits themselves with weights
// the softmax over the chosen experts' logits (gpt-oss).
enum class RouteScores { Softmax, Sigmoid, ChosenSoftmax };

struct MoeRouteParams {
  size_t n_experts = 0, n_used = 0;
  RouteScores scores = RouteScores::Softmax;
  size_t n_groups = 0, n_groups_used = 0;  // > 1 groups: only the n_groups_used best groups compete
  bool norm = false;                       // weights divided by their sum (at least 6.103515625e-5)
  double scale = 1;                        // then multiplied by this (0: unchanged)
  const float* expert_scale = nullptr;     // (n_experts) then each weight times its expert's (gemma4)
};

// Per token: scores s from logits (n, n_experts); the experts are chosen by s + bias (bias may be
// null), optionally only from the groups whose two best biased scores sum highest; the n_used
// largest in order of value descending then id ascending. ids (n, n_used), and weights (n,
// n_used) = the unbiased scores of the chosen experts (or their softmax), normalised and scaled as
// the params say.
void moe_route(int32_t* ids, float* weights, const float* logits, const float* bias, size_t n, const MoeRouteParams& p);

// Expert products: y(P, M), row p = W[ids[p]] · x[p / x_div] where W is (n_experts, M, K) f32
// (expert e is rows e·M ..) and x rows are K floats.
void matmul_id(float* y, const float* w, const float* x, const int32_t* ids, size_t P, size_t M, size_t K,
               size_t x_div);

// x(n, dim) += Σ_j weights[t][j] · y[t·k + j] + shared[t] · (gate ? sigmoid(gate[t]) : 1), where
// shared (n, dim) and gate (n) may be null.
void moe_combine(float* x, const float* y, const float* weights, const float* shared, const float* gate, size_t n,
                 size_t k, size_t dim);

}  // namespace vkllm::ref
