// Reference codec of MXFP4 (the OCP microscaling FP4 format gpt-oss ships its experts in), byte by
// byte from docs/formats.md §2.5: a block of 32 values is one E8M0 scale byte and 16 bytes of E2M1
// nibbles, 17 bytes. The quantiser is ggml's quantize_row_mxfp4_ref rule, so a fixture written
// from f32 holds the blocks llama.cpp's own quantiser would write for the same values.
#include <bit>

#include "reference/quant_codec.h"

namespace vkllm::ref::codec {

namespace {

// The 16 E2M1 codes, doubled so that they are integers (ggml's kvalues_mxfp4): bit 3 is the sign,
// so code 8 is +0 again. A block's scale is halved to match (e8m0_half).
constexpr int8_t kE2m1Doubled[16] = {0, 1, 2, 3, 4, 6, 8, 12, 0, -1, -2, -3, -4, -6, -8, -12};

// Half of the E8M0 scale 2^(e − 127), i.e. 2^(e − 128), built from its bits: e = 0 and 1 give
// the subnormals 2^-128 and 2^-127; e = 255 gives 2^127 (E8M0's NaN code is not treated apart,
// as in ggml).
float e8m0_half(uint8_t e) {
  uint32_t bits = e < 2 ? 0x00200000u << e : uint32_t(e - 1) << 23;
  return std::bit_cast<float>(bits);
}

// The code whose value times d is nearest to v; on a tie the first in code order (so 0, not −0).
int nearest_e2m1(float v, float d) {
  int best = 0;
  float best_err = std::fabs(kE2m1Doubled[0] * d - v);
  for (int i = 1; i < 16; ++i) {
    float err = std::fabs(kE2m1Doubled[i] * d - v);
    if (err < best_err) best = i, best_err = err;
  }
  return best;
}

}  // namespace

// Value j < 16 is the low nibble of qs[j], value j + 16 its high nibble (Q4_0's order).
void dq_mxfp4(const uint8_t* b, float* y) {
  float d = e8m0_half(b[0]);
  const uint8_t* qs = b + 1;
  for (int j = 0; j < 16; ++j) y[j] = kE2m1Doubled[qs[j] & 15] * d, y[j + 16] = kE2m1Doubled[qs[j] >> 4] * d;
}

// e = floor(log2(amax)) − 2 + 127, so the half scale d = 2^(floor(log2 amax) − 3) puts amax/d in
// [8, 16): values past 12·d are clipped to ±12·d, as ggml does. An all-zero block gets e = 0.
// (ggml casts a negative e, from amax < 2^-125, to uint8_t unchecked; here it is clamped to 0.)
void q_mxfp4(const float* x, uint8_t* b) {
  float amax = amax_of(x, 32);
  int e = amax > 0 ? std::clamp(int(std::floor(std::log2(amax))) - 2 + 127, 0, 255) : 0;
  b[0] = uint8_t(e);
  float d = e8m0_half(b[0]);
  for (int j = 0; j < 16; ++j) b[1 + j] = uint8_t(nearest_e2m1(x[j], d) | nearest_e2m1(x[j + 16], d) << 4);
}

}  // namespace vkllm::ref::codec
