// Reference matrix product and row gather.
#include "reference/matmul.h"

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
