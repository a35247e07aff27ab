// Reference dequantisers and quantisers, byte by byte from docs/formats.md §2 (ggml-common.h layouts).
// Block geometry is restated here (kCodecs) on purpose instead of taken from runtime/dtype.cpp.
#include "reference/quant.h"

#include <algorithm>
#include <bit>
#include <cmath>
#include <cstring>
#include <stdexcept>
#include <string>

namespace vkllm::ref {

// --- f16 / bf16

float half_to_float(uint16_t h) {
  uint32_t sign = uint32_t(h >> 15) << 31, exp = (h >> 10) & 31, man = h & 1023;
  if (exp == 31) return std::bit_cast<float>(sign | 0x7F800000u | man << 13);  // inf / NaN
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

// --- helpers

namespace {

uint16_t le16(const uint8_t* p) { return uint16_t(p[0] | p[1] << 8); }
float f16_at(const uint8_t* p) { return half_to_float(le16(p)); }
void put16(uint8_t* p, uint16_t v) { p[0] = uint8_t(v), p[1] = uint8_t(v >> 8); }

// The 6-bit scale and min of sub-block i (0..7) of a Q4_K/Q5_K super-block (docs/formats.md §2).
void scale_min_k4(const uint8_t* s, int i, int& sc, int& mn) {
  if (i < 4) {
    sc = s[i] & 63, mn = s[i + 4] & 63;
  } else {
    sc = (s[i + 4] & 15) | (s[i - 4] >> 6) << 4;
    mn = (s[i + 4] >> 4) | (s[i] >> 6) << 4;
  }
}

// --- dequantisation, one block each; y has the block's values

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

void dq_q5_0(const uint8_t* b, float* y) {
  float d = f16_at(b);
  uint32_t h = b[2] | b[3] << 8 | b[4] << 16 | uint32_t(b[5]) << 24;
  const uint8_t* qs = b + 6;
  for (int j = 0; j < 16; ++j) {
    y[j] = (int((qs[j] & 15) | ((h >> j) & 1) << 4) - 16) * d;
    y[j + 16] = (int((qs[j] >> 4) | ((h >> (j + 16)) & 1) << 4) - 16) * d;
  }
}

void dq_q8_0(const uint8_t* b, float* y) {
  float d = f16_at(b);
  for (int j = 0; j < 32; ++j) y[j] = int8_t(b[2 + j]) * d;
}

// Q4_K (five_bit = false) and Q5_K (true): value e uses nibble of qs[32c + l], c = e/64, l = e%32.
void dq_k4(const uint8_t* b, float* y, bool five_bit) {
  float d = f16_at(b), dmin = f16_at(b + 2);
  const uint8_t* s = b + 4;
  const uint8_t* qh = b + 16;
  const uint8_t* qs = five_bit ? b + 48 : b + 16;
  for (int e = 0; e < 256; ++e) {
    int i = e / 32, c = e / 64, l = e % 32, sc, mn;
    scale_min_k4(s, i, sc, mn);
    int q = e % 64 < 32 ? qs[32 * c + l] & 15 : qs[32 * c + l] >> 4;
    if (five_bit && (qh[l] >> i & 1)) q += 16;  // bit 2c for the low half, 2c+1 for the high half
    y[e] = d * sc * q - dmin * mn;
  }
}

void dq_q6_k(const uint8_t* b, float* y) {
  const uint8_t* ql = b;
  const uint8_t* qh = b + 128;
  const int8_t* sc = reinterpret_cast<const int8_t*>(b + 192);
  float d = f16_at(b + 208);
  for (int h = 0; h < 2; ++h) {
    const uint8_t* L = ql + 64 * h;
    const uint8_t* Q = qh + 32 * h;
    for (int l = 0; l < 32; ++l) {
      int q[4] = {(L[l] & 15) | (Q[l] & 3) << 4, (L[l + 32] & 15) | (Q[l] >> 2 & 3) << 4,
                  (L[l] >> 4) | (Q[l] >> 4 & 3) << 4, (L[l + 32] >> 4) | (Q[l] >> 6 & 3) << 4};
      for (int g = 0; g < 4; ++g) {
        int e = 128 * h + 32 * g + l;
        y[e] = d * sc[e / 16] * (q[g] - 32);
      }
    }
  }
}

void dq_f32(const uint8_t* b, float* y) { std::memcpy(y, b, 4); }
void dq_f16(const uint8_t* b, float* y) { *y = half_to_float(le16(b)); }
void dq_bf16(const uint8_t* b, float* y) { *y = bf16_to_float(le16(b)); }
void dq_q4_k(const uint8_t* b, float* y) { dq_k4(b, y, false); }
void dq_q5_k(const uint8_t* b, float* y) { dq_k4(b, y, true); }

// --- quantisation, one block each (round to nearest; see quant.h)

float amax_of(const float* x, int n) {
  float a = 0;
  for (int i = 0; i < n; ++i) a = std::max(a, std::fabs(x[i]));
  return a;
}

int nearest(float v, int lo, int hi) { return std::clamp(int(std::lround(v)), lo, hi); }

// Stores d as f16 and returns the value the dequantiser will see.
float put_scale(uint8_t* p, float d) {
  put16(p, float_to_half(d));
  return f16_at(p);
}

void q_q8_0(const float* x, uint8_t* b) {
  float d = put_scale(b, amax_of(x, 32) / 127);
  for (int j = 0; j < 32; ++j) b[2 + j] = uint8_t(int8_t(d ? nearest(x[j] / d, -127, 127) : 0));
}

void q_q4_0(const float* x, uint8_t* b) {
  float d = put_scale(b, amax_of(x, 32) / 7);
  auto q = [&](int j) { return d ? nearest(x[j] / d + 8, 0, 15) : 8; };
  for (int j = 0; j < 16; ++j) b[2 + j] = uint8_t(q(j) | q(j + 16) << 4);
}

void q_q4_1(const float* x, uint8_t* b) {
  float lo = *std::min_element(x, x + 32), hi = *std::max_element(x, x + 32);
  float d = put_scale(b, (hi - lo) / 15), m = put_scale(b + 2, lo);
  auto q = [&](int j) { return d ? nearest((x[j] - m) / d, 0, 15) : 0; };
  for (int j = 0; j < 16; ++j) b[4 + j] = uint8_t(q(j) | q(j + 16) << 4);
}

void q_q5_0(const float* x, uint8_t* b) {
  float d = put_scale(b, amax_of(x, 32) / 15);
  uint32_t h = 0;
  for (int j = 0; j < 16; ++j) {
    int q0 = d ? nearest(x[j] / d + 16, 0, 31) : 16, q1 = d ? nearest(x[j + 16] / d + 16, 0, 31) : 16;
    b[6 + j] = uint8_t((q0 & 15) | (q1 & 15) << 4);
    h |= uint32_t(q0 >> 4) << j | uint32_t(q1 >> 4) << (j + 16);
  }
  for (int k = 0; k < 4; ++k) b[2 + k] = uint8_t(h >> 8 * k);
}

// Q4_K (levels 15) and Q5_K (levels 31).
void q_k4(const float* x, uint8_t* b, bool five_bit) {
  int levels = five_bit ? 31 : 15;
  float scale[8], min[8], max_scale = 0, max_min = 0;
  for (int i = 0; i < 8; ++i) {
    const float* xs = x + 32 * i;
    float lo = std::min(0.0f, *std::min_element(xs, xs + 32)), hi = *std::max_element(xs, xs + 32);
    scale[i] = (hi - lo) / levels, min[i] = -lo;
    max_scale = std::max(max_scale, scale[i]), max_min = std::max(max_min, min[i]);
  }
  float d = put_scale(b, max_scale / 63), dmin = put_scale(b + 2, max_min / 63);
  int sc[8], mn[8];
  for (int i = 0; i < 8; ++i)
    sc[i] = d ? nearest(scale[i] / d, 0, 63) : 0, mn[i] = dmin ? nearest(min[i] / dmin, 0, 63) : 0;
  uint8_t* s = b + 4;
  for (int i = 0; i < 4; ++i) {
    s[i] = uint8_t(sc[i] | (sc[i + 4] >> 4) << 6);
    s[i + 4] = uint8_t(mn[i] | (mn[i + 4] >> 4) << 6);
    s[i + 8] = uint8_t((sc[i + 4] & 15) | (mn[i + 4] & 15) << 4);
  }
  uint8_t* qh = b + 16;
  uint8_t* qs = five_bit ? b + 48 : b + 16;
  std::memset(qs, 0, 128);
  if (five_bit) std::memset(qh, 0, 32);
  for (int e = 0; e < 256; ++e) {
    int i = e / 32, c = e / 64, l = e % 32;
    float step = d * sc[i];
    int q = step ? nearest((x[e] + dmin * mn[i]) / step, 0, levels) : 0;
    qs[32 * c + l] |= uint8_t(e % 64 < 32 ? q & 15 : (q & 15) << 4);
    if (five_bit) qh[l] |= uint8_t((q >> 4) << i);
  }
}

void q_q6_k(const float* x, uint8_t* b) {
  float group[16], max_group = 0;
  for (int g = 0; g < 16; ++g) group[g] = amax_of(x + 16 * g, 16) / 31, max_group = std::max(max_group, group[g]);
  float d = put_scale(b + 208, max_group / 127);
  int8_t* sc = reinterpret_cast<int8_t*>(b + 192);
  for (int g = 0; g < 16; ++g) sc[g] = int8_t(d ? nearest(group[g] / d, -127, 127) : 0);
  std::memset(b, 0, 192);
  for (int e = 0; e < 256; ++e) {
    float step = d * sc[e / 16];
    int q = step ? nearest(x[e] / step + 32, 0, 63) : 32;
    int h = e / 128, g = e % 128 / 32, l = e % 32;
    b[64 * h + l + 32 * (g & 1)] |= uint8_t((q & 15) << 4 * (g >> 1));  // ql: nibble g>>1
    b[128 + 32 * h + l] |= uint8_t((q >> 4) << 2 * g);                  // qh: bits 2g, 2g+1
  }
}

void q_f32(const float* x, uint8_t* b) { std::memcpy(b, x, 4); }
void q_f16(const float* x, uint8_t* b) { put16(b, float_to_half(*x)); }
void q_bf16(const float* x, uint8_t* b) { put16(b, float_to_bf16(*x)); }
void q_q4_k(const float* x, uint8_t* b) { q_k4(x, b, false); }
void q_q5_k(const float* x, uint8_t* b) { q_k4(x, b, true); }

// --- the table: geometry and codec of each type

struct Codec {
  DType type;
  size_t values, bytes;  // per block
  void (*dequantize)(const uint8_t* block, float* y);
  void (*quantize)(const float* x, uint8_t* block);
};

constexpr Codec kCodecs[] = {
    {DType::F32, 1, 4, dq_f32, q_f32},        {DType::F16, 1, 2, dq_f16, q_f16},
    {DType::BF16, 1, 2, dq_bf16, q_bf16},     {DType::Q4_0, 32, 18, dq_q4_0, q_q4_0},
    {DType::Q4_1, 32, 20, dq_q4_1, q_q4_1},   {DType::Q5_0, 32, 22, dq_q5_0, q_q5_0},
    {DType::Q8_0, 32, 34, dq_q8_0, q_q8_0},   {DType::Q4_K, 256, 144, dq_q4_k, q_q4_k},
    {DType::Q5_K, 256, 176, dq_q5_k, q_q5_k}, {DType::Q6_K, 256, 210, dq_q6_k, q_q6_k},
};

const Codec& codec(DType t, size_t n) {
  for (const Codec& c : kCodecs)
    if (c.type == t) {
      if (n % c.values) throw std::invalid_argument("reference: row length is not a multiple of the block size");
      return c;
    }
  throw std::invalid_argument("reference: unsupported type id " + std::to_string(uint32_t(t)));
}

}  // namespace

size_t stored_bytes(DType t, size_t n) {
  const Codec& c = codec(t, n);
  return n / c.values * c.bytes;
}

void dequantize_row(DType t, const void* src, float* dst, size_t n) {
  const Codec& c = codec(t, n);
  const uint8_t* p = static_cast<const uint8_t*>(src);
  for (size_t i = 0; i < n / c.values; ++i) c.dequantize(p + i * c.bytes, dst + i * c.values);
}

void quantize_row(DType t, const float* src, void* dst, size_t n) {
  const Codec& c = codec(t, n);
  uint8_t* p = static_cast<uint8_t*>(dst);
  for (size_t i = 0; i < n / c.values; ++i) c.quantize(src + i * c.values, p + i * c.bytes);
}

std::vector<uint8_t> quantize(DType t, const float* src, size_t rows, size_t cols) {
  size_t row = stored_bytes(t, cols);
  std::vector<uint8_t> out(rows * row);
  for (size_t r = 0; r < rows; ++r) quantize_row(t, src + r * cols, out.data() + r * row, cols);
  return out;
}

std::vector<float> dequantize(DType t, const void* src, size_t rows, size_t cols) {
  size_t row = stored_bytes(t, cols);
  std::vector<float> out(rows * cols);
  for (size_t r = 0; r < rows; ++r)
    dequantize_row(t, static_cast<const uint8_t*>(src) + r * row, out.data() + r * cols, cols);
  return out;
}

}  // namespace vkllm::ref
