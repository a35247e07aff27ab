// Test weights for the matmul/matvec/get_rows tests: random matrices stored in each weight type by
// the reference quantiser, with the values the reference dequantises them to.
#pragma once
#include <fmt/format.h>
#include <span>
#include <string>
#include <vector>

#include "buffer.h"
#include "dtype.h"
#include "harness.h"
#include "ops.h"
#include "reference/reference.h"

namespace vkllm::test {

// Every type the weight kernels read.
inline const std::vector<DType>& weight_types() {
  static const std::vector<DType> types = {DType::F32,   DType::F16,  DType::BF16, DType::Q8_0,   DType::Q4_0,
                                           DType::Q4_1,  DType::Q5_0, DType::Q5_1, DType::Q2_K,   DType::Q3_K,
                                           DType::Q4_K,  DType::Q5_K, DType::Q6_K, DType::IQ4_NL, DType::IQ4_XS,
                                           DType::IQ3_S, DType::MXFP4};
  return types;
}

inline std::string type_name(DType t) { return std::string(info(t).name); }
inline bool is_float(DType t) { return info(t).block_values == 1; }

struct Weights {
  std::vector<uint8_t> stored;  // (rows, row_bytes(type, K))
  std::vector<float> values;    // (rows, K): the stored values as the reference reads them
};

inline Weights random_weights(DType t, size_t rows, size_t K, uint32_t seed) {
  std::vector<float> f = random_floats(rows * K, seed);
  Weights w;
  w.stored = ref::quantize(t, f.data(), rows, K);
  w.values = ref::dequantize(t, w.stored.data(), rows, K);
  return w;
}

// slack: bytes past the data that the buffer (and so its whole view) also holds.
inline Buffer bytes_to_gpu(std::span<const uint8_t> data, const std::string& name = "test weights", size_t slack = 0) {
  Buffer b(gpu(), std::max<size_t>(data.size() + slack, 4), Memory::Device, name);
  b.upload(data.data(), data.size());
  return b;
}

// Reference product for tests: y(N, M) = x(N, K) · w(M, K)ᵀ (+ bias), packed.
inline std::vector<float> ref_matmul(const Weights& w, const std::vector<float>& x, size_t M, size_t N, size_t K,
                                     const float* bias = nullptr) {
  std::vector<float> y(N * M);
  ref::matmul(y.data(), w.values.data(), x.data(), M, N, K, 0, 0, bias);
  return y;
}

// NMSE bounds (docs/design.md "Numerics"): f32 accumulation over exact float weights, and quantised
// weights against the reference on the same dequantised values.
inline double nmse_bound(DType t) { return is_float(t) ? 1e-9 : 1e-6; }
// Products on cooperative matrices take f16 inputs (ops_matmul_coop.h): the bound through f16.
constexpr double kCoopBound = 1e-5;
// The bound for what ops::matmul computes: through f16 where it picks the cooperative-matrix kernel.
inline double matmul_bound(DType t, uint32_t M, uint32_t N) {
  bool coop = N >= gpu().profile().matmul_tiled_min_n && ops::coop_choice(gpu(), t, M, N);
  return coop ? kCoopBound : nmse_bound(t);
}
// The same for ops::matmul_id under this plan.
inline double matmul_id_bound(DType t, const ops::ExpertPlan& plan) {
  return plan.tiled && ops::coop_id_choice(gpu(), t, plan.tile) ? kCoopBound : nmse_bound(t);
}

// Awkward row lengths for a type: float rows of any length, quantised rows a multiple of the block
// (32 or 256) but, past the first, not of 8·32 or 64 (tile and workgroup strides). MXFP4 rows of
// an odd number of blocks are an odd number of bytes, so its rows start at every byte offset.
inline std::vector<uint32_t> awkward_k(DType t) {
  uint32_t qk = info(t).block_values;
  if (qk == 1) return {1, 7, 45, 100, 4097};
  if (qk == 32) return {32, 96, 160, 800};
  return {256, 768, 1280};
}

struct MatmulCase {
  uint32_t M, N, K;
};
using MatmulFn = void (*)(Stream&, DType, BufferView, BufferView, BufferView, uint32_t, uint32_t, uint32_t,
                          const ops::MatmulBatch&, BufferView);

// Runs fn (ops::matvec, ops::matmul_tiled or ops::matmul) on random weights of type t and compares
// with the reference, optionally with a bias. slack: weight bytes past the rows (Weights pads each
// tensor's view to 16 bytes; matvec then may read whole 16-byte words).
inline void check_matmul_case(MatmulFn fn, const char* name, DType t, MatmulCase c, uint32_t seed,
                              bool with_bias = false, const std::string& note = "", size_t slack = 0) {
  Weights w = random_weights(t, c.M, c.K, seed);
  std::vector<float> x = random_floats(size_t(c.N) * c.K, seed + 1);
  std::vector<float> bias = random_floats(with_bias ? c.M : 1, seed + 2);
  std::vector<float> want = ref_matmul(w, x, c.M, c.N, c.K, with_bias ? bias.data() : nullptr);
  Buffer gw = bytes_to_gpu(w.stored, "test weights", slack), gx = to_gpu(x), gb = to_gpu(bias);
  Buffer gy(gpu(), want.size() * 4, Memory::Device, "y");
  Stream s(gpu());
  fn(s, t, gw, gx, gy, c.M, c.N, c.K, {}, with_bias ? gb.view() : BufferView{});
  s.submit_wait();
  check_nmse(
      from_gpu(gy), want, fn == &ops::matmul ? matmul_bound(t, c.M, c.N) : nmse_bound(t),
      fmt::format("{} {} M={} N={} K={}{}{}", name, type_name(t), c.M, c.N, c.K, with_bias ? " bias" : "", note));
}

}  // namespace vkllm::test
