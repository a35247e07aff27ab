// Elementwise and row kernels (residual add, norms, activations). See ops.h for the conventions.
#pragma once
#include "buffer.h"
#include "stream.h"

namespace vkllm::ops {

// y(n) = a(n) + b(n); y may be a.
void add(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n);

// y(rows, dim) = x / sqrt(mean(x^2) + eps) * w(dim), per row; y may be x.
void rmsnorm(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps);

}  // namespace vkllm::ops
