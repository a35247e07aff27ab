// CPU reference for the linear-attention ops of Gated DeltaNet layers (Qwen3.5/3.6, docs/formats.md
// §10): the causal conv1d that carries its last inputs over, the L2 norm of q/k, the gated
// RMSNorm of the output, the sigmoid output gate of the full-attention layers, and the gated
// delta rule itself, token by token. Written from the math (llama.cpp's src/models/qwen35.cpp and
// ggml's ssm_conv / gated_delta_net), in double; the specification the kernels are tested against.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkllm::ref {

// Depthwise causal conv1d of one sequence over C channels with K taps, continuing from `state`:
//   x (n, C) token-major; state (K-1, C), the previous K-1 inputs, oldest first; w (C, K), per
//   channel its taps, oldest first. With u = state ++ x (n + K-1 rows):
//   y[t][c] = silu(sum_j w[c][j] u[t + j][c] + bias[c])   (no silu when silu is false, no bias
// where it is null) and the state becomes the last K-1 rows of u. A fresh sequence starts from a
// zero state.
void ssm_conv(float* y, float* state, const float* x, const float* w, size_t n, size_t C, size_t K, bool silu = true,
              const float* bias = nullptr);

// LFM2's gated short conv of one sequence: bcx (n, 3C) holds per token b, c and x; the conv (no
// SiLU) runs over b·x, continuing from `state` (the previous K-1 products), and y = c · conv.
void short_conv_gated(float* y, float* state, const float* bcx, const float* w, size_t n, size_t C, size_t K);

// y(rows, width) = x / sqrt(sum x^2 + eps) per row (llama.cpp's build_gdn_l2_norm: rms_norm with
// eps / width, times 1 / sqrt(width)).
void l2_norm(float* y, const float* x, size_t rows, size_t width, float eps);

// y(rows, width) = rmsnorm(x) * w(width) * silu(z) per row: the gated norm of a DeltaNet layer's
// output, one row per (token, value head).
void gated_rmsnorm(float* y, const float* x, const float* w, const float* z, size_t rows, size_t width, float eps);

// y(n) = x * sigmoid(g): the output gate of the full-attention layers.
void sigmoid_mul(float* y, const float* x, const float* g, size_t n);

// The gated delta rule over the n tokens of one sequence, H_v value heads of S values and H_k
// key heads of S (value head h reads key head h % H_k, as llama.cpp tiles them). Per head the
// state is an (S, S) matrix M, row j a value index, column i a key index. Per token t:
//   g = softplus(alpha[t][h] + dt_bias[h]) * a[h]         (a = -exp(A_log), as files store it)
//   beta = sigmoid(b[t][h])
//   M = exp(g) M
//   d[j] = beta (v[j] - sum_i M[j][i] k[i])
//   M[j][i] += d[j] k[i]
//   o[t][h][j] = sum_i M[j][i] q[i] / sqrt(S)
// softplus(x) = x above 20, else log(1 + e^x) (ggml's). q and k are L2-normalised beforehand.
struct DeltaRuleShape {
  size_t n_tokens = 0;
  size_t h_k = 0, h_v = 0;  // key and value heads; h_v a multiple of h_k
  size_t s = 0;             // values per head (keys and values alike)
  // Floats between tokens in q, k, v (which may be parts of one row, as the conv output is) and
  // alpha, b: 0 means packed (h_k * s, h_k * s, h_v * s, h_v, h_v).
  size_t qk_stride = 0, v_stride = 0, ab_stride = 0;
};
//   q, k (n, h_k, s); v (n, h_v, s); alpha, b (n, h_v); dt_bias, a (h_v); state (h_v, s, s);
//   o (n, h_v, s) packed. The state is updated in place.
void delta_rule(float* o, float* state, const float* q, const float* k, const float* v, const float* alpha,
                const float* b, const float* dt_bias, const float* a, const DeltaRuleShape& shape);

}  // namespace vkllm::ref
