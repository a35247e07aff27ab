// Push constants of the mixture-of-experts kernels (included by push.h; plain structs only).
// docs/formats.md §8 states the routing rules; runtime/ops_moe.h the layouts.

// moe_route: per token, router logits (n_tokens, n_experts) -> the n_used chosen experts' ids
// and weights (n_tokens, n_used). The logits are replaced by the scores (softmax or sigmoid).
struct MoeRoutePush {
  uint n_tokens;
  uint n_experts;
  uint n_used;
  uint scores;    // 0: softmax over the experts; 1: sigmoid(logit); 2: the logits, and the
                  // weights the softmax over the chosen ones (gpt-oss)
  uint n_groups;  // > 1: only the n_groups_used best groups of n_experts / n_groups compete
  uint n_groups_used;
  uint norm;    // 1: weights divided by their sum (at least 6.103515625e-5)
  float scale;  // then multiplied by this (0: unchanged)
};

// moe_plan: the (token, slot) pairs p = token * n_used + slot grouped by expert, and the list of
// tiles (up to `tile` pairs of one expert) the expert-product kernels take one each. The plan
// buffer holds int32: counts[n_experts], offsets[n_experts], a scratch cursor[n_experts],
// pairs[n_pairs] (grouped by expert), then tiles[max_tiles] as (expert, index of its first pair
// in `pairs`), with expert -1 for the unused tail.
struct MoePlanPush {
  uint n_pairs;
  uint n_experts;
  uint tile;
  uint max_tiles;
};

// matvec_id / matmul_id: y(n_pairs, M) row p = W[expert of p] (M, K) · x row p / x_div. The
// weight binding holds experts expert0 .. expert1 - 1 (expert e at rows (e - expert0) * M); a
// tile of another expert is left to another dispatch. Value m of pair p goes to y[p *
// y_row_stride + m] for m < split, else to y[y_second + p * y_row_stride + m - split] (fused
// experts' gate rows and up rows into two activations; split = M: one).
struct MatmulIdPush {
  uint M;
  uint K;
  uint n_pairs;
  uint n_experts;
  uint max_tiles;
  uint x_div;         // n_used for inputs per token (gate, up), 1 for inputs per pair (down)
  uint x_row_stride;  // floats between x rows
  uint y_row_stride;  // floats between y rows
  uint expert0;
  uint expert1;
  uint split;
  uint y_second;  // floats into y
};

// moe_combine: x(n_tokens, dim) += sum_j weights[t, j] * y[t * n_used + j] (+ shared[t] *
// sigmoid(gate[t]) or shared[t]); without ACCUMULATE, x = that sum.
struct MoeCombinePush {
  uint n_tokens;
  uint n_used;
  uint dim;
};

// moe_bias: y(n_pairs, M) row p += bias[ids[p]] (a bias per expert: rows (n_experts, M)).
struct MoeBiasPush {
  uint n_pairs;
  uint M;
};
