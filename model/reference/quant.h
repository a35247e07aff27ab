// CPU reference for weight storage types: f16/bf16 conversion, dequantisation of every block type
// the kernels read, and simple round-to-nearest quantisers so tests and fixture models can make
// realistic quantised weights from f32. Written from docs/formats.md §2; shares no code with the shaders.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dtype.h"

namespace vkllm::ref {

float half_to_float(uint16_t h);
uint16_t float_to_half(float f);  // round to nearest even; overflow becomes inf
float bf16_to_float(uint16_t b);
uint16_t float_to_bf16(float f);  // round to nearest even

// Bytes that n values of type t occupy (n a multiple of the block size); the reference's own
// statement of the block geometry, independent of runtime/dtype.cpp.
size_t stored_bytes(DType t, size_t n);

// dst(n) = the n values stored at src in type t (n a multiple of t's block size). Supports F32,
// F16, BF16, Q4_0, Q4_1, Q5_0, Q5_1, Q8_0, Q2_K, Q3_K, Q4_K, Q5_K, Q6_K, IQ4_NL, IQ4_XS, IQ3_S,
// MXFP4; throws std::invalid_argument otherwise.
void dequantize_row(DType t, const void* src, float* dst, size_t n);

// dst = src(n) stored as type t, for the same types. Round-to-nearest per block, no search for
// the best scale (unlike llama.cpp's quantisers): good enough for test weights, not for models.
//   Q8_0 and Q4_0 exactly as ggml's reference quantisers (quant.cpp; the GPU's quantised KV cache
//   stores the same); Q4_1 d = (max-min)/15, m = min;
//   Q5_0 d = amax/15; Q5_1 d = (max-min)/31, m = min;
//   Q4_K/Q5_K per 32-value sub-block scale (max-min')/levels and min -min' (min' = min(0, min)),
//   6-bit codes of both relative to d = max/63, dmin = max/63; Q2_K the same per 16-value group
//   with 2-bit q and 4-bit codes (d = max/15); Q3_K per 16-value group scale = the signed largest
//   value / -4 (q in -4..3) as a 6-bit signed code relative to d = max/31;
//   Q6_K per 16-value group scale amax/31 as an int8 code relative to d = max/127;
//   IQ4_NL d = the signed largest value / -127, each value the nearest of the 16 table values;
//   IQ4_XS the same per 32-value sub-block, as a 6-bit signed code relative to d = max/31;
//   IQ3_S per 32-value sub-block step amax/15 as the odd code 1..31 relative to d = max/31, each
//   group of 4 magnitudes the nearest of the 512 grid points, signs stored apart;
//   MXFP4 exactly as ggml's quantize_row_mxfp4_ref (scale 2^(floor(log2 amax) − 2), each value
//   the nearest E2M1 code, so values past 1.5·2^floor(log2 amax) are clipped).
void quantize_row(DType t, const float* src, void* dst, size_t n);

// x(n) = what x becomes when stored as type t and read back (quantise, then dequantise, block by
// block; f16 rounding for F16, nothing for F32). The KV cache stores its rows this way.
void round_trip(DType t, float* x, size_t n);

// Whole matrices of `rows` rows of `cols` values, rows laid out back to back (row_bytes each).
std::vector<uint8_t> quantize(DType t, const float* src, size_t rows, size_t cols);
std::vector<float> dequantize(DType t, const void* src, size_t rows, size_t cols);

}  // namespace vkllm::ref
