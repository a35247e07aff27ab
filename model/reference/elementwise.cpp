// Reference elementwise and row ops.
#include "elementwise.h"

#include <cmath>

namespace vkllm::ref {

void add(float* y, const float* a, const float* b, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = a[i] + b[i];
}

void rmsnorm(float* y, const float* x, const float* w, size_t rows, size_t dim, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float* xr = x + r * dim;
    double ss = 0;
    for (size_t i = 0; i < dim; ++i) ss += double(xr[i]) * xr[i];
    double scale = 1.0 / std::sqrt(ss / dim + eps);
    for (size_t i = 0; i < dim; ++i) y[r * dim + i] = float(xr[i] * scale * w[i]);
  }
}

}  // namespace vkllm::ref
