// Elementwise and row kernels: residual add, biases, scaling, norms, activations, softmax, and the
// row selections the sampler uses (argmax, top-k). See ops.h for the conventions.
// Row-major f32 unless said; "y may be x" means the op runs in place when given the same view.
#pragma once
#include "buffer.h"
#include "stream.h"

namespace vkllm::ops {

// y(n) = a(n) + b(n); y may be a.
void add(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n);
// y(rows, dim) = x(rows, dim) + b(dim) per row (q/k/v biases); y may be x.
void add_rows(Stream& s, BufferView x, BufferView b, BufferView y, uint32_t rows, uint32_t dim);
// y(n) = a(n) * b(n); y may be a.
void mul(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n);
// y(rows, dim) = x(rows, dim) * w(dim) per row; y may be x.
void mul_rows(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim);
// y(n) = x(n) * factor; y may be x.
void scale(Stream& s, BufferView x, BufferView y, uint32_t n, float factor);
// y(n) = a(n) + b(n) * factor: a block output scaled into the residual (Granite); y may be a.
void add_scaled(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n, float factor);

// y(n) = cap * tanh(x / cap), cap > 0: logit soft-capping (gemma2); y may be x.
void softcap(Stream& s, BufferView x, BufferView y, uint32_t n, float cap);

// y(rows, dim) = x / sqrt(mean(x^2) + eps) * w(dim), per row (w an empty view: no weight); y may be x.
void rmsnorm(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps);
// y(rows, groups·width) = per row, each of its groups of width values normed on its own and
// multiplied by w's matching part, w (groups·width) (Mamba-2's grouped norm); y may be x.
void rmsnorm_groups(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t groups, uint32_t width,
                    float eps);
// y(rows, dim) += rmsnorm(x)·w per row: a block's post norm and the residual add in one dispatch;
// y must not overlap x.
void rmsnorm_add(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps);
// y(rows, dim) = (x - mean) / sqrt(var + eps) * w(dim) + b(dim), per row, biased variance;
// b may be an empty view (no bias); y may be x.
void layernorm(Stream& s, BufferView x, BufferView w, BufferView b, BufferView y, uint32_t rows, uint32_t dim,
               float eps);

// y(n) = silu(gate) * up = gate / (1 + exp(-gate)) * up. gate and up may be two views of one
// buffer (say the halves of a fused projection); y may be either.
void swiglu(Stream& s, BufferView gate, BufferView up, BufferView y, uint32_t n);
// gpt-oss's SwiGLU (ggml's swiglu_oai): y(n) = g·sigmoid(alpha·g)·(u + 1) with g = min(gate,
// limit), u = clamp(up, -limit, limit). gate and up may be views of one buffer; y may be either.
void swiglu_oai(Stream& s, BufferView gate, BufferView up, BufferView y, uint32_t n, float alpha = 1.702f,
                float limit = 7.0f);
// y(n) = GELU(x), tanh approximation as GGML: 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3)));
// y may be x.
void gelu(Stream& s, BufferView x, BufferView y, uint32_t n);
// y(n) = max(x, 0)^2, the squared ReLU of Nemotron-H's FFNs (ref::relu_sqr); y may be x.
void relu_sqr(Stream& s, BufferView x, BufferView y, uint32_t n);

// y(rows, cols) = softmax(scale * x) per row; y may be x.
void softmax_rows(Stream& s, BufferView x, BufferView y, uint32_t rows, uint32_t cols, float scale = 1.0f);

// idx(rows) int32 = the index of each row's largest value in x(rows, cols); ties go to the
// lowest index, NaN never wins, a row of only NaN gives -1.
void argmax_rows(Stream& s, BufferView x, BufferView idx, uint32_t rows, uint32_t cols);

// The k largest values of each row of x(rows, cols), ordered by value descending then index
// ascending: idx(rows, k) int32 and val(rows, k) f32. Exact; NaN ranks below every number.
// 1 <= k <= min(cols, kTopkMax).
constexpr uint32_t kTopkMax = 1024;
void topk_rows(Stream& s, BufferView x, BufferView idx, BufferView val, uint32_t rows, uint32_t cols, uint32_t k);

}  // namespace vkllm::ops
