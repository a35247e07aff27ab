// Reference matrix product and row gather.
#include "reference/matmul.h"

#include <algorithm>
#include <vector>

#include "reference/elementwise.h"
#include "reference/quant.h"

namespace vkllm::ref {

void matmul(float* y, const float* w, const float* x, size_t M, size_t N, size_t K, size_t x_row_stride,
            size_t y_row_stride, const float* bias) {
  size_t xs = x_row_stride ? x_row_stride : K, ys = y_row_stride ? y_row_stride : M;
  for (size_t n = 0; n < N; ++n)
    for (size_t m = 0; m < M; ++m) {
      double acc = bias ? bias[m] : 0.0;
      for (size_t k = 0; k < K; ++k) acc += double(w[m * K + k]) * x[n * xs + k];
      y[n * ys + m] = float(acc);
    }
}

namespace {

// Where product row m of token n lands (MatmulFusion's parts).
size_t fused_index(size_t M, size_t n, size_t m, const MatmulFusion& f) {
  size_t s1 = f.split[0] ? f.split[0] : M, s2 = f.split[0] && f.split[1] ? f.split[1] : M;
  if (m >= s2) return f.offset[1] + n * (M - s2) + m - s2;
  if (m >= s1) return f.offset[0] + n * (s2 - s1) + m - s1;
  return n * s1 + m;
}

}  // namespace

size_t matmul_fused_size(size_t M, size_t N, const MatmulFusion& f) {
  if (f.glu) return M * N;
  size_t end = 0;
  for (size_t m = 0; m < M; ++m) end = std::max(end, fused_index(M, N - 1, m, f) + 1);
  return end;
}

void matmul_fused(float* y, const float* w, const float* x, size_t M, size_t N, size_t K, const MatmulFusion& f,
                  const float* bias) {
  std::vector<float> normed;
  if (f.norm) {  // as the unfused graph: rmsnorm into h, then the product of h
    normed.resize(N * K);
    rmsnorm(normed.data(), x, f.norm, N, K, f.norm_eps);
    x = normed.data();
  }
  if (f.glu) {  // the gate's and the up projection's products, then the activation, as unfused
    std::vector<float> p(2 * M * N), act(M);
    matmul(p.data(), w, x, 2 * M, N, K, 0, 0, bias);
    for (size_t n = 0; n < N; ++n) {
      const float *gate = &p[n * 2 * M], *up = gate + M;
      if (f.glu == 1) {
        swiglu(y + n * M, gate, up, M);
        continue;
      }
      gelu(act.data(), gate, M);
      for (size_t m = 0; m < M; ++m) y[n * M + m] = act[m] * up[m];
    }
    return;
  }
  std::vector<float> p(M * N);
  matmul(p.data(), w, x, M, N, K, 0, 0, bias);
  for (size_t n = 0; n < N; ++n)
    for (size_t m = 0; m < M; ++m) {
      float& out = y[fused_index(M, n, m, f)];
      out = f.accumulate ? out + p[n * M + m] : p[n * M + m];
    }
}

void get_rows(DType t, const void* table, const int32_t* ids, float* y, size_t n_ids, size_t K) {
  size_t row = stored_bytes(t, K);
  for (size_t i = 0; i < n_ids; ++i)
    dequantize_row(t, static_cast<const uint8_t*>(table) + size_t(ids[i]) * row, y + i * K, K);
}

std::vector<float> project(const std::vector<float>& w, const float* x, size_t n, size_t K, size_t x_row_stride,
                           const float* bias) {
  size_t M = w.size() / K;
  std::vector<float> y(n * M);
  matmul(y.data(), w.data(), x, M, n, K, x_row_stride, 0, bias);
  return y;
}

}  // namespace vkllm::ref
