// Reference codecs of the K-quants (256-value super-blocks), byte by byte from docs/formats.md
// §2.1-2.2 (ggml-common.h layouts, ggml-quants.c formulas). The quantisers round to nearest with
// per-group scales from the group's range (quant.h), no search.
#include <cstring>

#include "reference/quant_codec.h"

namespace vkllm::ref::codec {

namespace {

// The 6-bit scale and min of sub-block i (0..7) of a Q4_K/Q5_K super-block (docs/formats.md §2).
void scale_min_k4(const uint8_t* s, int i, int& sc, int& mn) {
  if (i < 4) {
    sc = s[i] & 63, mn = s[i + 4] & 63;
  } else {
    sc = (s[i + 4] & 15) | (s[i - 4] >> 6) << 4;
    mn = (s[i + 4] >> 4) | (s[i] >> 6) << 4;
  }
}

// Q2_K and Q3_K share the value order: value e = 128h + 32j + l takes 2 bits at shift 2j of
// qs[32h + l] and the scale of its 16-value group e/16.
int two_bits(const uint8_t* qs, int e) { return qs[32 * (e / 128) + e % 32] >> (2 * (e % 128 / 32)) & 3; }
void put_two_bits(uint8_t* qs, int e, int q) { qs[32 * (e / 128) + e % 32] |= uint8_t(q << (2 * (e % 128 / 32))); }

// Q3_K's sixteen 6-bit scales in 12 bytes: the low 4 bits of scale i are nibble i/8 of s[i%8],
// the high 2 bits are bits 2(i/4) of s[8 + i%4].
int q3_scale(const uint8_t* s, int i) {
  return (s[i % 8] >> (4 * (i / 8)) & 15) | (s[8 + i % 4] >> (2 * (i / 4)) & 3) << 4;
}

}  // namespace

// --- dequantisation

void dq_q2_k(const uint8_t* b, float* y) {
  const uint8_t *sc = b, *qs = b + 16;
  float d = f16_at(b + 80), dmin = f16_at(b + 82);
  for (int e = 0; e < 256; ++e) y[e] = d * (sc[e / 16] & 15) * two_bits(qs, e) - dmin * (sc[e / 16] >> 4);
}

void dq_q3_k(const uint8_t* b, float* y) {
  const uint8_t *hmask = b, *qs = b + 32, *s = b + 96;
  float d = f16_at(b + 108);
  for (int e = 0; e < 256; ++e) {
    int high = hmask[e % 32] >> (e / 32) & 1;  // bit 4h + j of hmask[l]
    y[e] = d * (q3_scale(s, e / 16) - 32) * (two_bits(qs, e) - (high ? 0 : 4));
  }
}

// Q4_K (five_bit = false) and Q5_K (true): value e uses nibble of qs[32c + l], c = e/64, l = e%32.
static void dq_k4(const uint8_t* b, float* y, bool five_bit) {
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
void dq_q4_k(const uint8_t* b, float* y) { dq_k4(b, y, false); }
void dq_q5_k(const uint8_t* b, float* y) { dq_k4(b, y, true); }

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

// --- quantisation

// Q2_K: per 16-value group y = d·sc·q − dmin·mn, q in 0..3, from the group's range [min(0, lo), hi].
void q_q2_k(const float* x, uint8_t* b) {
  float scale[16], min[16], max_scale = 0, max_min = 0;
  for (int g = 0; g < 16; ++g) {
    const float* xs = x + 16 * g;
    float lo = std::min(0.0f, *std::min_element(xs, xs + 16)), hi = *std::max_element(xs, xs + 16);
    scale[g] = (hi - lo) / 3, min[g] = -lo;
    max_scale = std::max(max_scale, scale[g]), max_min = std::max(max_min, min[g]);
  }
  float d = put_scale(b + 80, max_scale / 15), dmin = put_scale(b + 82, max_min / 15);
  int sc[16], mn[16];
  for (int g = 0; g < 16; ++g) {
    sc[g] = d ? nearest(scale[g] / d, 0, 15) : 0, mn[g] = dmin ? nearest(min[g] / dmin, 0, 15) : 0;
    b[g] = uint8_t(sc[g] | mn[g] << 4);
  }
  uint8_t* qs = b + 16;
  std::memset(qs, 0, 64);
  for (int e = 0; e < 256; ++e) {
    float step = d * sc[e / 16];
    put_two_bits(qs, e, step ? nearest((x[e] + dmin * mn[e / 16]) / step, 0, 3) : 0);
  }
}

// Q3_K: per 16-value group y = d·(S − 32)·q, q in −4..3, the group's largest magnitude at q = −4.
void q_q3_k(const float* x, uint8_t* b) {
  float scale[16], max_scale = 0;
  for (int g = 0; g < 16; ++g) {
    scale[g] = signed_max_of(x + 16 * g, 16) / -4;
    max_scale = std::max(max_scale, std::fabs(scale[g]));
  }
  float d = put_scale(b + 108, max_scale / 31);
  std::memset(b, 0, 108);
  int sc[16];
  for (int i = 0; i < 16; ++i) {
    sc[i] = d ? nearest(scale[i] / d, -32, 31) : 0;
    int S = sc[i] + 32;
    b[96 + i % 8] |= uint8_t((S & 15) << (4 * (i / 8)));
    b[96 + 8 + i % 4] |= uint8_t((S >> 4) << (2 * (i / 4)));
  }
  for (int e = 0; e < 256; ++e) {
    float step = d * sc[e / 16];
    int q = (step ? nearest(x[e] / step, -4, 3) : 0) + 4;  // 0..7: 2 bits in qs, bit 2 in hmask
    put_two_bits(b + 32, e, q & 3);
    b[e % 32] |= uint8_t((q >> 2) << (e / 32));
  }
}

// Q4_K (levels 15) and Q5_K (levels 31).
static void q_k4(const float* x, uint8_t* b, bool five_bit) {
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
void q_q4_k(const float* x, uint8_t* b) { q_k4(x, b, false); }
void q_q5_k(const float* x, uint8_t* b) { q_k4(x, b, true); }

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

}  // namespace vkllm::ref::codec
