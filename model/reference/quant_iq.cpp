// Reference codecs of the non-linear types IQ4_NL, IQ4_XS and IQ3_S, byte by byte from
// docs/formats.md §2.4 (ggml-common.h layouts and tables, ggml-quants.c formulas). The quantisers
// take the scale from the block's largest magnitude and pick the nearest table entry (IQ3_S: the
// nearest of the 512 grid points, by squared distance), no search over scales.
#include <cstring>
#include <limits>

#include "reference/iq3s_grid.h"
#include "reference/quant_codec.h"

namespace vkllm::ref::codec {

namespace {

// IQ4_NL / IQ4_XS: a 4-bit code selects one of these 16 values (ggml's kvalues_iq4nl).
constexpr int8_t kIq4Values[16] = {-127, -104, -83, -65, -49, -35, -22, -10, 1, 13, 25, 38, 53, 69, 89, 113};

int nearest_iq4(float v) {
  int best = 0;
  for (int i = 1; i < 16; ++i)
    if (std::fabs(v - kIq4Values[i]) < std::fabs(v - kIq4Values[best])) best = i;
  return best;
}

// 32 values from 16 bytes of nibbles: value j is the low nibble of qs[j], value j + 16 the high one.
void dq_iq4_32(const uint8_t* qs, float d, float* y) {
  for (int j = 0; j < 16; ++j) y[j] = d * kIq4Values[qs[j] & 15], y[j + 16] = d * kIq4Values[qs[j] >> 4];
}
void q_iq4_32(const float* x, float d, uint8_t* qs) {
  auto code = [&](int j) { return d ? nearest_iq4(x[j] / d) : 8; };
  for (int j = 0; j < 16; ++j) qs[j] = uint8_t(code(j) | code(j + 16) << 4);
}

// IQ4_XS's 6-bit scale of sub-block ib: low 4 bits from scales_l, high 2 bits from scales_h.
int iq4_xs_scale(const uint8_t* b, int ib) {
  return (b[4 + ib / 2] >> (4 * (ib % 2)) & 15) | (le16(b + 2) >> (2 * ib) & 3) << 4;
}

uint8_t grid_byte(int index, int j) { return uint8_t(kIq3sGrid[index] >> (8 * j)); }

int nearest_grid(const float* t) {  // t: four magnitudes in grid units
  int best = 0;
  float best_err = std::numeric_limits<float>::max();
  for (int i = 0; i < 512; ++i) {
    float err = 0;
    for (int j = 0; j < 4; ++j) err += (t[j] - grid_byte(i, j)) * (t[j] - grid_byte(i, j));
    if (err < best_err) best_err = err, best = i;
  }
  return best;
}

}  // namespace

// --- IQ4_NL: d, qs[16]

void dq_iq4_nl(const uint8_t* b, float* y) { dq_iq4_32(b + 2, f16_at(b), y); }

void q_iq4_nl(const float* x, uint8_t* b) { q_iq4_32(x, put_scale(b, signed_max_of(x, 32) / -127), b + 2); }

// --- IQ4_XS: d, scales_h (u16), scales_l[4], qs[128]; sub-block ib of 32 values has scale d·(ls − 32)

void dq_iq4_xs(const uint8_t* b, float* y) {
  float d = f16_at(b);
  for (int ib = 0; ib < 8; ++ib) dq_iq4_32(b + 8 + 16 * ib, d * (iq4_xs_scale(b, ib) - 32), y + 32 * ib);
}

void q_iq4_xs(const float* x, uint8_t* b) {
  float scale[8], max_scale = 0;
  for (int ib = 0; ib < 8; ++ib) {
    scale[ib] = signed_max_of(x + 32 * ib, 32) / -127;
    max_scale = std::max(max_scale, std::fabs(scale[ib]));
  }
  float d = put_scale(b, max_scale / 31);
  uint16_t scales_h = 0;
  std::memset(b + 4, 0, 4);
  for (int ib = 0; ib < 8; ++ib) {
    int ls = (d ? nearest(scale[ib] / d, -32, 31) : 0) + 32;
    b[4 + ib / 2] |= uint8_t((ls & 15) << (4 * (ib % 2)));
    scales_h |= uint16_t((ls >> 4) << (2 * ib));
    q_iq4_32(x + 32 * ib, d * (ls - 32), b + 8 + 16 * ib);
  }
  put16(b + 2, scales_h);
}

// --- IQ3_S: d, qs[64], qh[8], signs[32], scales[4]. Value e of sub-block s = e/32, 8-group g = e/8:
// magnitude = byte e%4 of grid[qs[2g + h] | bit (2(g%4) + h) of qh[s] << 8], h = e/4 % 2;
// negative when bit e%8 of signs[g] is set; scale d·(1 + 2·nibble s%2 of scales[s/2]).

void dq_iq3_s(const uint8_t* b, float* y) {
  const uint8_t *qs = b + 2, *qh = b + 66, *signs = b + 74, *scales = b + 106;
  float d = f16_at(b);
  for (int e = 0; e < 256; ++e) {
    int s = e / 32, g = e / 8, h = e / 4 % 2;
    int index = qs[2 * g + h] | (qh[s] >> (2 * (g % 4) + h) & 1) << 8;
    float db = d * (1 + 2 * (scales[s / 2] >> (4 * (s % 2)) & 15));
    float v = db * grid_byte(index, e % 4);
    y[e] = signs[g] >> (e % 8) & 1 ? -v : v;
  }
}

void q_iq3_s(const float* x, uint8_t* b) {
  float step[8], max_step = 0;
  for (int s = 0; s < 8; ++s) step[s] = amax_of(x + 32 * s, 32) / 15, max_step = std::max(max_step, step[s]);
  float d = put_scale(b, max_step / 31);
  std::memset(b + 2, 0, 108);
  uint8_t *qs = b + 2, *qh = b + 66, *signs = b + 74, *scales = b + 106;
  for (int s = 0; s < 8; ++s) {
    int sc = d ? nearest((step[s] / d - 1) / 2, 0, 15) : 0;
    scales[s / 2] |= uint8_t(sc << (4 * (s % 2)));
    float db = d * (1 + 2 * sc);
    for (int q4 = 8 * s; q4 < 8 * s + 8; ++q4) {  // groups of 4 values: q4 = 2g + h
      float t[4];
      for (int j = 0; j < 4; ++j) {
        float v = x[4 * q4 + j];
        t[j] = db ? std::fabs(v) / db : 0;
        if (v < 0) signs[q4 / 2] |= uint8_t(1 << (4 * (q4 % 2) + j));
      }
      int index = nearest_grid(t), g = q4 / 2, h = q4 % 2;
      qs[q4] = uint8_t(index);
      qh[s] |= uint8_t((index >> 8) << (2 * (g % 4) + h));
    }
  }
}

}  // namespace vkllm::ref::codec
