// Weight-matrix kernels: matmul (the entry every projection uses), its two kernels matvec and
// matmul_tiled, and get_rows (embedding lookup). Weights stay in their stored type (DType) and are
// dequantised in the shaders; activations and results are f32, accumulation is f32.
// Layout (ggml): a weight w of M rows (outputs) by K columns (inputs) is row-major with K
// contiguous, row_bytes(type, K) bytes per row, quant blocks along K (GGUF ne[0] = K, ne[1] = M).
#pragma once
#include <span>
#include <string>

#include "buffer.h"
#include "dtype.h"
#include "stream.h"

namespace vkllm::ops {

// Several matrices of one weight tensor in one dispatch, e.g. DeepSeek MLA's per-head attn_k_b
// {128, 512, H}: weight b starts b·M rows into w, and
//   x[b][n][k] = x[b·x_batch_stride + n·x_row_stride + k], y[b][n][m] likewise (in floats).
// "q_lat[h] = Wuk[h]ᵀ q_nope[h] for N tokens" with q_nope token-major (N, H, 128) and q_lat
// (N, H, 512) is {.count = H, .x_batch_stride = 128, .x_row_stride = H·128,
//                 .y_batch_stride = 512, .y_row_stride = H·512}.
struct MatmulBatch {
  uint32_t count = 1;           // B
  uint32_t x_batch_stride = 0;  // floats between batches of x (unused when B = 1)
  uint32_t x_row_stride = 0;    // floats between tokens of x; 0 means K (packed)
  uint32_t y_batch_stride = 0;
  uint32_t y_row_stride = 0;  // 0 means M (packed)
};

// y(B; N, M) = x(B; N, K) · w(B; M, K)ᵀ + bias(B; M), y[b][n][m] = Σ_k w[b][m][k]·x[b][n][k] + bias[b·M+m].
//   w: stored as `wtype`, B·M rows; x, y, bias: f32. An empty bias view means no bias.
// For quantised types K must be a multiple of the block size (32 or 256). y must not overlap x.
// A single weight matrix larger than maxStorageBufferRange is split into row ranges (several
// dispatches), so e.g. a large output projection works on lavapipe's 128 MiB limit.
// Kernel: matvec for N < profile.matmul_tiled_min_n (9 on GPUs; always on llvmpipe, where it is
// the faster one), else the cooperative-matrix kernel where the device has a checked one for the
// weight type (ops_matmul_coop.h: f16 inputs, f32 accumulation), else matmul_tiled.
void matmul(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
            const MatmulBatch& batch = {}, BufferView bias = {});

// The same product by one kernel: matvec (decode: bandwidth-bound, profile.matvec_tokens tokens
// per workgroup, more as several token blocks) or matmul_tiled (prefill: shared-memory tiles).
// For tests and benchmarks; use matmul.
void matvec(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
            const MatmulBatch& batch = {}, BufferView bias = {});
void matmul_tiled(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
                  const MatmulBatch& batch = {}, BufferView bias = {});

// What a product does with its results before storing them: work that would otherwise be a
// dispatch of its own and a round trip through memory.
// Auto: as matmul chooses; the others for tests and benchmarks (Coop: the cooperative-matrix
// kernel, ops_matmul_coop.h, an error where the device has no checked one for the product).
enum class MatmulKernel { Auto, Matvec, Tiled, Coop };
enum class Glu : uint32_t { None = 0, Silu = 1, Gelu = 2 };  // the spec constant matvec.glsl's GLU
struct MatmulFusion {
  bool accumulate = false;  // y += x·wᵀ (+ bias): the residual add after a block's last projection
  // Planar parts, for one product over matrices stored back to back (q, k and v): rows split[0] ..
  // split[1] - 1 are stored packed, (N, split[1] - split[0]), from offset[0] floats into y, rows
  // split[1] .. M - 1 from offset[1]; rows before split[0] packed from the start. 0: no split.
  uint32_t split[2] = {0, 0};
  uint32_t offset[2] = {0, 0};
  // A gated FFN's hidden state (matvec only; no bias, split or accumulate): w holds 2M rows, the
  // gate's M then the up projection's M (stored back to back), and y(N, M) = act(x·gateᵀ) ⊙
  // (x·upᵀ), act = SiLU or tanh-GELU: the up product and the activation need no dispatch.
  Glu glu = Glu::None;
  MatmulKernel kernel = MatmulKernel::Auto;
  // The RMSNorm before the product (matvec only): x is read as x·norm/sqrt(mean(x²) + norm_eps)
  // per token, norm being K f32 weights; the norm costs no dispatch and no pass of its own.
  BufferView norm{};
  float norm_eps = 0;
};
// Whether matmul_fused with this fusion can run for N tokens on this stream's device (glu and
// norm: only where matmul picks the matvec kernel; norm: where the profile reads it in,
// matvec_norm); the graph falls back to separate ops otherwise.
bool matmul_fusable(const Stream& s, const MatmulFusion& fusion, uint32_t N);

// y(N, M) = x(N, K) · w(M, K)ᵀ (+ bias) with the fusion's epilogue; packed x and y, one matrix.
void matmul_fused(Stream& s, DType wtype, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K,
                  const MatmulFusion& fusion, BufferView bias = {});

// y(n_ids, K) f32 = rows ids[i] of table (rows of K values stored as `type`); ids: (n_ids) int32.
// Ids outside the table give rows of zeros. n_ids <= 65535. A table larger than
// maxStorageBufferRange is gathered by several dispatches over row ranges.
void get_rows(Stream& s, DType type, BufferView table, BufferView ids, BufferView y, uint32_t n_ids, uint32_t K);

// The weight types the kernels read (matvec, matmul and get_rows alike), in table order: the one
// list that model loading, `vkllm info` and vkllm-bench check against.
std::span<const DType> weight_types();
bool matmul_supports(DType type);
// Those types, lower case and comma-separated ("f32, f16, ..."), for messages.
std::string weight_type_names();

}  // namespace vkllm::ops
