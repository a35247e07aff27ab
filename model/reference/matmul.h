// CPU reference for the weight-matrix ops: matrix product with the ggml layout and row gather.
// Plain loops in double over weights dequantised by quant.h; shares no code with the shaders.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dtype.h"

namespace vkllm::ref {

// y(N, M) = x(N, K) · w(M, K)ᵀ (+ bias(M)): y[n][m] = Σ_k w[m][k]·x[n][k] + bias[m].
// w is f32 (dequantise first); tokens of x and y are x_row_stride / y_row_stride floats apart
// (0: packed, i.e. K and M). bias may be null.
void matmul(float* y, const float* w, const float* x, size_t M, size_t N, size_t K, size_t x_row_stride = 0,
            size_t y_row_stride = 0, const float* bias = nullptr);

// The same for a dequantised weight of w.size() / K rows, returning y (n, rows) packed.
std::vector<float> project(const std::vector<float>& w, const float* x, size_t n, size_t K, size_t x_row_stride = 0,
                           const float* bias = nullptr);

// The fused products of ops::matmul_fused: the product of `matmul`, then an epilogue that does
// the next op's work as the results are stored.
struct MatmulFusion {
  bool accumulate = false;  // y[n][m] += product (the residual add after a block's last projection)
  // Planar parts: rows split[0] .. split[1] - 1 land packed (N, split[1] - split[0]) at y +
  // offset[0], rows split[1] .. M - 1 at y + offset[1], rows before split[0] packed at y. 0: none.
  size_t split[2] = {0, 0};
  size_t offset[2] = {0, 0};
  // 1 (SiLU) or 2 (tanh-GELU): a gated FFN's hidden state; w holds 2M rows, the gate's then the
  // up projection's, and y (N, M) = act(x·gateᵀ) ⊙ (x·upᵀ) (no split or accumulate).
  int glu = 0;
  // The RMSNorm before the product: x is read as rmsnorm(x)·norm (K weights) per token.
  const float* norm = nullptr;
  float norm_eps = 0;
};
// Floats of y a fused product spans for N tokens.
size_t matmul_fused_size(size_t M, size_t N, const MatmulFusion& f);
void matmul_fused(float* y, const float* w, const float* x, size_t M, size_t N, size_t K, const MatmulFusion& f,
                  const float* bias = nullptr);

// y(n_ids, K) = rows ids[i] of table (rows of K values stored as type t), as f32.
void get_rows(DType t, const void* table, const int32_t* ids, float* y, size_t n_ids, size_t K);

}  // namespace vkllm::ref
