// Internal to the reference's storage types: the block codecs of each type (dequantise one block,
// quantise one block) and the byte helpers they share. quant.cpp holds the table of types and the
// public functions of quant.h; quant_k.cpp the K-quants, quant_iq.cpp the non-linear IQ types,
// quant_mxfp4.cpp MXFP4.
#pragma once
#include <algorithm>
#include <cmath>
#include <cstdint>

#include "reference/quant.h"

namespace vkllm::ref::codec {

inline uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
inline float f16_at(const uint8_t* p) { return half_to_float(le16(p)); }
inline void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v), p[1] = uint8_t(v >> 8); }

// Stores d as f16 at p and returns the value the dequantiser will see.
inline float put_scale(uint8_t* p, float d) {
  put16(p, float_to_half(d));
  return f16_at(p);
}

inline float amax_of(const float* x, int n) {
  float a = 0;
  for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

// The value of largest magnitude, with its sign.
inline float signed_max_of(const float* x, int n) {
  float m = 0;
  for (int i = 0; i < n; ++i)
    if (std::fabs(x[i]) > std::fabs(m)) m = x[i];
  return m;
}

inline int nearest(float v, int lo, int hi) { return std::clamp(int(std::lround(v)), lo, hi); }

// K-quants (256-value super-blocks), quant_k.cpp.
void dq_q2_k(const uint8_t* b, float* y);
void dq_q3_k(const uint8_t* b, float* y);
void dq_q4_k(const uint8_t* b, float* y);
void dq_q5_k(const uint8_t* b, float* y);
void dq_q6_k(const uint8_t* b, float* y);
void q_q2_k(const float* x, uint8_t* b);
void q_q3_k(const float* x, uint8_t* b);
void q_q4_k(const float* x, uint8_t* b);
void q_q5_k(const float* x, uint8_t* b);
void q_q6_k(const float* x, uint8_t* b);

// Non-linear types, quant_iq.cpp.
void dq_iq4_nl(const uint8_t* b, float* y);
void dq_iq4_xs(const uint8_t* b, float* y);
void dq_iq3_s(const uint8_t* b, float* y);
void q_iq4_nl(const float* x, uint8_t* b);
void q_iq4_xs(const float* x, uint8_t* b);
void q_iq3_s(const float* x, uint8_t* b);

// MXFP4 (E8M0 scale, E2M1 nibbles), quant_mxfp4.cpp.
void dq_mxfp4(const uint8_t* b, float* y);
void q_mxfp4(const float* x, uint8_t* b);

}  // namespace vkllm::ref::codec
