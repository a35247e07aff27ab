// CPU reference for the elementwise and row ops: plain loops from the math, double accumulation.
// Shares no code with the shaders; it is the specification they are tested against.
#pragma once
#include <cstddef>

namespace vkllm::ref {

// y(n) = a + b
void add(float* y, const float* a, const float* b, size_t n);

// y(rows, dim) = x / sqrt(mean(x^2) + eps) * w(dim)
void rmsnorm(float* y, const float* x, const float* w, size_t rows, size_t dim, float eps);

}  // namespace vkllm::ref
