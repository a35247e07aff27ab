// Reference elementwise and row ops.
#include "reference/elementwise.h"

#include <algorithm>
#include <cmath>
#include <numbers>
#include <numeric>
#include <vector>

namespace vkllm::ref {

// --- binary, scale

void add(float* y, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void add_rows(float* y, const float* x, const float* b, size_t rows, size_t dim) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < dim; ++i) y[r * dim + i] = x[r * dim + i] + b[i];
}

void mul(float* y, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] * b[i];
}

void mul_rows(float* y, const float* x, const float* w, size_t rows, size_t dim) {
  for (size_t r = 0; r < rows; ++r)
    for (size_t i = 0; i < dim; ++i) y[r * dim + i] = x[r * dim + i] * w[i];
}

void scale(float* y, const float* x, size_t n, float s) {
  for (size_t i = 0; i < n; ++i) y[i] = x[i] * s;
}

// --- norms

void rmsnorm(float* y, const float* x, const float* w, size_t rows, size_t dim, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += double(xr[i]) * xr[i];
    double scale = 1.0 / std::sqrt(ss / dim + eps);
    for (size_t i = 0; i < dim; ++i) y[r * dim + i] = float(xr[i] * scale * (w ? w[i] : 1.0f));
  }
}

void layernorm(float* y, const float* x, const float* w, const float* b, size_t rows, size_t dim, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double mean = 0, var = 0;
    for (size_t i = 0; i < dim; ++i) mean += xr[i];
    mean /= dim;
    for (size_t i = 0; i < dim; ++i) var += (xr[i] - mean) * (xr[i] - mean);
    double inv_std = 1.0 / std::sqrt(var / dim + eps);
    for (size_t i = 0; i < dim; ++i) y[r * dim + i] = float((xr[i] - mean) * inv_std * w[i] + (b ? b[i] : 0.0));
  }
}

// --- activations

void swiglu_oai(float* y, const float* gate, const float* up, size_t n, float alpha, float limit) {
  for (size_t i = 0; i < n; ++i) {
    double g = std::min(gate[i], limit), u = std::clamp(up[i], -limit, limit);
    y[i] = float(g / (1 + std::exp(-alpha * g)) * (u + 1));
  }
}

void swiglu(float* y, const float* gate, const float* up, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    double g = gate[i];
    y[i] = float(g / (1 + std::exp(-g)) * up[i]);
  }
}

void gelu(float* y, const float* x, size_t n) {
  const double k = std::sqrt(2 / std::numbers::pi);
  for (size_t i = 0; i < n; ++i) {
    double v = x[i];
    y[i] = float(0.5 * v * (1 + std::tanh(k * (v + 0.044715 * v * v * v))));
  }
}

void relu_sqr(float* y, const float* x, size_t n) {
  for (size_t i = 0; i < n; ++i) {
    float v = std::max(x[i], 0.0f);
    y[i] = v * v;
  }
}

// --- softmax and selection

void softcap(float* y, const float* x, size_t n, float cap) {
  for (size_t i = 0; i < n; ++i) y[i] = float(cap * std::tanh(double(x[i]) / cap));
}

void softmax_rows(float* y, const float* x, size_t rows, size_t cols, float scale) {
  std::vector<double> e(cols);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    double m = -INFINITY, sum = 0;
    for (size_t i = 0; i < cols; ++i) m = std::max(m, double(scale) * xr[i]);
    for (size_t i = 0; i < cols; ++i) sum += e[i] = std::exp(double(scale) * xr[i] - m);
    for (size_t i = 0; i < cols; ++i) y[r * cols + i] = float(e[i] / sum);
  }
}

void argmax_rows(int32_t* idx, const float* x, size_t rows, size_t cols) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    int32_t best = -1;
    for (size_t i = 0; i < cols; ++i)
      if (!std::isnan(xr[i]) && (best < 0 || xr[i] > xr[best])) best = int32_t(i);
    idx[r] = best;
  }
}

void topk_rows(int32_t* idx, float* val, const float* x, size_t rows, size_t cols, size_t k) {
  std::vector<int32_t> order(cols);
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * cols;
    std::iota(order.begin(), order.end(), 0);
    // Strict weak order: numbers by value (-0 == +0) descending, then NaN; ties by index.
    auto before = [xr](int32_t a, int32_t b) {
      bool na = std::isnan(xr[a]), nb = std::isnan(xr[b]);
      if (na != nb) return nb;
      if (!na && xr[a] != xr[b]) return xr[a] > xr[b];
      return a < b;
    };
    std::partial_sort(order.begin(), order.begin() + k, order.end(), before);
    for (size_t j = 0; j < k; ++j) idx[r * k + j] = order[j], val[r * k + j] = xr[order[j]];
  }
}

}  // namespace vkllm::ref
