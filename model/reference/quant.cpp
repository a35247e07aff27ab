// Reference dequantisers and quantisers, byte by byte from docs/formats.md §2 (ggml-common.h layouts).
// Block geometry is restated here (kCodecs) on purpose instead of taken from runtime/dtype.cpp.
#include "reference/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

#include "reference/quant_codec.h"

namespace vkllm::ref {

// --- f16 / bf16

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
  // inf / NaN; a NaN comes out quiet (bit 22 set), as x86's conversions and ggml's give it.
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | man << 13 | (man ? 0x400000u : 0));
  double mag = exp == 0 ? std::ldexp(double(man), -24) : std::ldexp(1024.0 + man, int(exp) - 25);
  return float(sign ? -mag : mag);
}

uint16_t float_to_half(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  uint16_t sign = uint16_t((u >> 16) & 0x8000);
  float a = std::fabs(f);
  if (std::isnan(f)) return sign | 0x7E00;
  if (a >= 65520.0f) return sign | 0x7C00;  // rounds to inf
  // Scale so the f16 quantum (2^-24 subnormal, or 2^(e-10) normal) becomes 1, then round half-even.
  int e = a < std::ldexp(1.0f, -14) ? -14 : std::ilogb(a);
  double q = std::nearbyint(std::ldexp(double(a), 10 - e));  // default rounding: to nearest even
  uint32_t bits = e == -14 && q < 1024 ? uint32_t(q) : uint32_t((e + 15) << 10) + uint32_t(q) - 1024;
  return sign | uint16_t(bits);  // q == 2048 carries into the exponent by the addition
}

float bf16_to_float(uint16_t b) { return std::bit_cast<float>(uint32_t(b) << 16); }

uint16_t float_to_bf16(float f) {
  uint32_t u = std::bit_cast<uint32_t>(f);
  if (std::isnan(f)) return uint16_t((u >> 16) | 0x40);
  return uint16_t((u + 0x7FFF + ((u >> 16) & 1)) >> 16);
}

// --- 32-value blocks and plain floats (the K-quants: quant_k.cpp; IQ types: quant_iq.cpp; MXFP4:
// quant_mxfp4.cpp)

namespace codec {

namespace {

void dq_q4_0(const uint8_t* b, float* y) {
  float d = f16_at(b);
  const uint8_t* qs = b + 2;
  for (int j = 0; j < 16; ++j) y[j] = ((qs[j] & 15) - 8) * d, y[j + 16] = ((qs[j] >> 4) - 8) * d;
}

void dq_q4_1(const uint8_t* b, float* y) {
  float d = f16_at(b), m = f16_at(b + 2);
  const uint8_t* qs = b + 4;
  for (int j = 0; j < 16; ++j) y[j] = (qs[j] & 15) * d + m, y[j + 16] = (qs[j] >> 4) * d + m;
}

// Q5_0 (no min: q − 16) and Q5_1 (y = q·d + m): qh read as one u32 holds bit 4 of value j at bit j.
uint32_t qh_word(const uint8_t* p) { return p[0] | p[1] << 8 | p[2] << 16 | uint32_t(p[3]) << 24; }
int q5(const uint8_t* qs, uint32_t h, int j) {
  int nibble = j < 16 ? qs[j] & 15 : qs[j - 16] >> 4;
  return nibble | int((h >> j) & 1) << 4;
}

void dq_q5_0(const uint8_t* b, float* y) {
  float d = f16_at(b);
  uint32_t h = qh_word(b + 2);
  for (int j = 0; j < 32; ++j) y[j] = (q5(b + 6, h, j) - 16) * d;
}

void dq_q5_1(const uint8_t* b, float* y) {
  float d = f16_at(b), m = f16_at(b + 2);
  uint32_t h = qh_word(b + 4);
  for (int j = 0; j < 32; ++j) y[j] = q5(b + 8, h, j) * d + m;
}

void dq_q8_0(const uint8_t* b, float* y) {
  float d = f16_at(b);
  for (int j = 0; j < 32; ++j) y[j] = int8_t(b[2 + j]) * d;
}

void dq_f32(const uint8_t* b, float* y) { std::memcpy(y, b, 4); }
void dq_f16(const uint8_t* b, float* y) { *y = half_to_float(le16(b)); }
void dq_bf16(const uint8_t* b, float* y) { *y = bf16_to_float(le16(b)); }

// --- quantisation, one block each (round to nearest; see quant.h)

// Q8_0 and Q4_0 exactly as ggml's quantize_row_q8_0_ref / quantize_row_q4_0_ref (the quantised KV
// cache's kv_store does the same on the GPU): the inverse scale comes from the f32 d, not the f16
// one stored. Q8_0: d = amax/127, q = round half away from zero of x/d. Q4_0: d = the value of
// largest magnitude / -8 (so it becomes q = 0 exactly), q = min(15, trunc(x/d + 8.5)).
void q_q8_0(const float* x, uint8_t* b) {
  float d = amax_of(x, 32) / 127, id = d ? 1.0f / d : 0.0f;
  put_scale(b, d);
  for (int j = 0; j < 32; ++j) b[2 + j] = uint8_t(int8_t(std::lround(x[j] * id)));
}

void q_q4_0(const float* x, uint8_t* b) {
  float d = signed_max_of(x, 32) / -8, id = d ? 1.0f / d : 0.0f;
  put_scale(b, d);
  auto q = [&](int j) { return std::min(15, int(x[j] * id + 8.5f)); };
  for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(q(j) | q(j + 16) << 4);
}

void q_q4_1(const float* x, uint8_t* b) {
  float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  float d = put_scale(b, (hi - lo) / 15), m = put_scale(b + 2, lo);
  auto q = [&](int j) { return d ? nearest((x[j] - m) / d, 0, 15) : 0; };
  for (int j = 0; j < 16; ++j) b[4 + j] = uint8_t(q(j) | q(j + 16) << 4);
}

// Stores 5-bit codes q[32] as Q5_0/Q5_1 do: qh (u32) at p, then the nibbles.
void put_q5(const int* q, uint8_t* p) {
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) {
    p[4 + j] = uint8_t((q[j] & 15) | (q[j + 16] & 15) << 4);
    h |= uint32_t(q[j] >> 4) << j | uint32_t(q[j + 16] >> 4) << (j + 16);
  }
  for (int k = 0; k < 4; ++k) p[k] = uint8_t(h >> 8 * k);
}

void q_q5_0(const float* x, uint8_t* b) {
  float d = put_scale(b, amax_of(x, 32) / 15);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = d ? nearest(x[j] / d + 16, 0, 31) : 16;
  put_q5(q, b + 2);
}

void q_q5_1(const float* x, uint8_t* b) {
  float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  float d = put_scale(b, (hi - lo) / 31), m = put_scale(b + 2, lo);
  int q[32];
  for (int j = 0; j < 32; ++j) q[j] = d ? nearest((x[j] - m) / d, 0, 31) : 0;
  put_q5(q, b + 4);
}

void q_f32(const float* x, uint8_t* b) { std::memcpy(b, x, 4); }
void q_f16(const float* x, uint8_t* b) { put16(b, float_to_half(*x)); }
void q_bf16(const float* x, uint8_t* b) { put16(b, float_to_bf16(*x)); }

}  // namespace

}  // namespace codec

// --- the table: geometry and codec of each type

namespace {

struct Codec {
  DType type;
  size_t values, bytes;  // per block
  void (*dequantize)(const uint8_t* block, float* y);
  void (*quantize)(const float* x, uint8_t* block);
};

using namespace codec;
constexpr Codec kCodecs[] = {
    {DType::F32, 1, 4, dq_f32, q_f32},
    {DType::F16, 1, 2, dq_f16, q_f16},
    {DType::BF16, 1, 2, dq_bf16, q_bf16},
    {DType::Q4_0, 32, 18, dq_q4_0, q_q4_0},
    {DType::Q4_1, 32, 20, dq_q4_1, q_q4_1},
    {DType::Q5_0, 32, 22, dq_q5_0, q_q5_0},
    {DType::Q5_1, 32, 24, dq_q5_1, q_q5_1},
    {DType::Q8_0, 32, 34, dq_q8_0, q_q8_0},
    {DType::Q2_K, 256, 84, dq_q2_k, q_q2_k},
    {DType::Q3_K, 256, 110, dq_q3_k, q_q3_k},
    {DType::Q4_K, 256, 144, dq_q4_k, q_q4_k},
    {DType::Q5_K, 256, 176, dq_q5_k, q_q5_k},
    {DType::Q6_K, 256, 210, dq_q6_k, q_q6_k},
    {DType::IQ4_NL, 32, 18, dq_iq4_nl, q_iq4_nl},
    {DType::IQ4_XS, 256, 136, dq_iq4_xs, q_iq4_xs},
    {DType::IQ3_S, 256, 110, dq_iq3_s, q_iq3_s},
    {DType::MXFP4, 32, 17, dq_mxfp4, q_mxfp4},
};

const Codec& codec_of(DType t, size_t n) {
  for (const Codec& c : kCodecs)
    if (c.type == t) {
      if (n % c.values) throw std::invalid_argument("reference: row length is not a multiple of the block size");
      return c;
    }
  throw std::invalid_argument("reference: unsupported type id " + std::to_string(uint32_t(t)));
}

}  // namespace

size_t stored_bytes(DType t, size_t n) {
  const Codec& c = codec_of(t, n);
  return n / c.values * c.bytes;
}

void dequantize_row(DType t, const void* src, float* dst, size_t n) {
  const Codec& c = codec_of(t, n);
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n / c.values; ++i) c.dequantize(p + i * c.bytes, dst + i * c.values);
}

void quantize_row(DType t, const float* src, void* dst, size_t n) {
  const Codec& c = codec_of(t, n);
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < n / c.values; ++i) c.quantize(src + i * c.values, p + i * c.bytes);
}

std::vector<uint8_t> quantize(DType t, const float* src, size_t rows, size_t cols) {
  size_t row = stored_bytes(t, cols);
  std::vector<uint8_t> out(rows * row);
  for (size_t r = 0; r < rows; ++r) quantize_row(t, src + r * cols, out.data() + r * row, cols);
  return out;
}

void round_trip(DType t, float* x, size_t n) {
  if (t == DType::F32) return;
  const Codec& c = codec_of(t, n);
  std::vector<uint8_t> block(c.bytes);
  for (size_t i = 0; i < n; i += c.values) {
    c.quantize(x + i, block.data());
    c.dequantize(block.data(), x + i);
  }
}

std::vector<float> dequantize(DType t, const void* src, size_t rows, size_t cols) {
  size_t row = stored_bytes(t, cols);
  std::vector<float> out(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    dequantize_row(t, static_cast<const uint8_t*>(src) + r * row, out.data() + r * cols, cols);
  return out;
}

}  // namespace vkllm::ref
