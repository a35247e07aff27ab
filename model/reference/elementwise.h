// CPU reference for the elementwise and row ops: plain loops from the math, double accumulation.
// Shares no code with the shaders; it is the specification they are tested against.
#pragma once
#include <cstddef>
#include <cstdint>

namespace vkllm::ref {

// y(n) = a + b
void add(float* y, const float* a, const float* b, size_t n);
// y(rows, dim) = x + b(dim) per row
void add_rows(float* y, const float* x, const float* b, size_t rows, size_t dim);
// y(n) = a * b
void mul(float* y, const float* a, const float* b, size_t n);
// y(rows, dim) = x * w(dim) per row
void mul_rows(float* y, const float* x, const float* w, size_t rows, size_t dim);
// y(n) = x * s
void scale(float* y, const float* x, size_t n, float s);

// y(rows, dim) = x / sqrt(mean(x^2) + eps) * w(dim); w may be null (no weight)
void rmsnorm(float* y, const float* x, const float* w, size_t rows, size_t dim, float eps);
// y(rows, dim) = (x - mean) / sqrt(var + eps) * w(dim) + b(dim); b may be null (no bias)
void layernorm(float* y, const float* x, const float* w, const float* b, size_t rows, size_t dim, float eps);

// y(n) = silu(gate) * up, silu(g) = g / (1 + e^-g)
void swiglu(float* y, const float* gate, const float* up, size_t n);
// gpt-oss's: y = g sigmoid(alpha g) (u + 1), g = min(gate, limit), u = clamp(up, -limit, limit)
void swiglu_oai(float* y, const float* gate, const float* up, size_t n, float alpha, float limit);
// y(n) = 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), GELU's tanh approximation
void gelu(float* y, const float* x, size_t n);
// y = max(x, 0)^2 (squared ReLU: ggml's relu, then sqr); y may be x.
void relu_sqr(float* y, const float* x, size_t n);

// y(n) = cap * tanh(x / cap): logit soft-capping (gemma2)
void softcap(float* y, const float* x, size_t n, float cap);

// y(rows, cols) = softmax(scale * x) per row
void softmax_rows(float* y, const float* x, size_t rows, size_t cols, float scale);

// idx(rows): per row of x(rows, cols) the lowest index of the largest value, ignoring NaN;
// -1 when the row holds only NaN.
void argmax_rows(int32_t* idx, const float* x, size_t rows, size_t cols);
// idx(rows, k), val(rows, k): per row the k largest values by (value descending, index
// ascending); NaN is smaller than every number, -0 equals +0.
void topk_rows(int32_t* idx, float* val, const float* x, size_t rows, size_t cols, size_t k);

}  // namespace vkllm::ref
