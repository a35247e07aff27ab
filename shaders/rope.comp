#version 450
#extension GL_GOOGLE_include_directive : require
// Rotary position embedding (docs/formats.md §3.1, 3.4, 3.5): rotates the first rot_dim elements of every
// head of every token by angles set by the token's position; the rest of the head is copied.
//   x: rows (token t, head h) at t * token_stride + h * head_stride, head_dim elements each, and
//      for a second tensor (k beside q) heads n_heads.. at offset2 + t * token_stride2 + ...
//   pos: (n_tokens) int32   ff: (rot_dim / 2) f32 frequency factors, bound only when HAS_FF
//   (the ops:: entry binds pos in its place otherwise)   y: laid out as x, may alias x
// One thread per pair. Pair i of NORM rope is (2i, 2i+1), of NEOX rope (i, i + rot_dim/2):
//   (x0, x1) -> (x0 cos - x1 sin, x0 sin + x1 cos) * mscale.
// Sectioned rope (Qwen3.5's M-RoPE for text): pairs of the 4th section turn with position 0.
// Accuracy: the angle pos * freq_i reaches thousands of radians, so each step avoids the f32
// pitfalls that cost more than the final rounding of the angle: freq_i comes from squaring the
// host's base^(-2/rot_dim) (not exp2 of a large argument), the angle is reduced by a three-part
// pi/2, and sin/cos are polynomials on [-pi/4, pi/4] (the same result on every vendor).
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool HAS_FF = false;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer Pos { int pos[]; };
layout(std430, binding = 2) readonly buffer FF { float ff[]; };
layout(std430, binding = 3) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { RopePush p; };

// Angle per unit position of pair i: base^(-2i/rot_dim) / ff_i, mixed between interpolation
// (freq_scale) and extrapolation (1) by YaRN's ramp; with ext_factor 0 that is plain freq_scale.
float pair_freq(uint i) {
  float r = 1.0, b = p.theta_scale_hi;
  for (uint e = i; e != 0u; e >>= 1) {
    if ((e & 1u) != 0u) r *= b;
    b *= b;
  }
  float f = r * (1.0 + float(i) * p.theta_scale_lo);
  float ramp = 1.0 - clamp((float(i) - p.corr_low) / max(0.001, p.corr_high - p.corr_low), 0.0, 1.0);
  float m = ramp * p.ext_factor;
  f *= (1.0 - m) * p.freq_scale + m;
  if (HAS_FF) f /= ff[i];
  return f;
}

const float PIO2_HI = 1.5703125;            // 8 significant bits: k * PIO2_HI is exact for k < 2^16
const float PIO2_MID = 4.838267923e-4;      // pi/2 - PIO2_HI, rounded
const float PIO2_LO = 2.563282919e-12;      // the rest

// sin and cos of a: a = k pi/2 + r with |r| <= pi/4, then Cephes' minimax polynomials.
void sin_cos(float a, out float s, out float c) {
  float k = roundEven(a * 0.63661977236758134);
  precise float r = ((a - k * PIO2_HI) - k * PIO2_MID) - k * PIO2_LO;
  float z = r * r;
  float sr = ((-1.9515295891e-4 * z + 8.3321608736e-3) * z - 1.6666654611e-1) * z * r + r;
  float cr = ((2.443315711809948e-5 * z - 1.388731625493765e-3) * z + 4.166664568298827e-2) * z * z - 0.5 * z + 1.0;
  int q = int(k) & 3;  // quadrant (two's complement keeps this right for negative k)
  s = q == 0 ? sr : q == 1 ? cr : q == 2 ? -sr : -cr;
  c = q == 0 ? cr : q == 1 ? -sr : q == 2 ? -cr : sr;
}

// Whether pair i belongs to the 4th section of a sectioned rope (ref::rope_pair_is_fourth_section):
// with sections (s0, s1, s2, s3) pair i is in sector i % (s0 + .. + s3), the sections taking the
// sectors in turn, or interleaved (t h w t h w ..., each while it has pairs left; the rest is the 4th).
bool fourth_section(uint i) {
  uint all = p.sec0 + p.sec1 + p.sec2 + p.sec3;
  if (all == 0u) return false;
  uint sector = i % all;
  if (p.interleaved != 0u) {
    uint k = sector % 3u;
    return !((k == 0u && sector < 3u * p.sec0) || (k == 1u && sector < 3u * p.sec1) ||
             (k == 2u && sector < 3u * p.sec2));
  }
  return sector >= p.sec0 + p.sec1 + p.sec2;
}

void main() {
  uint g = thread_index(WG);
  uint half_head = p.head_dim / 2;
  if (g >= p.n_rows * half_head) return;
  uint row = g / half_head, j = g % half_head;
  uint heads = p.n_heads + p.n_heads2, t = row / heads, h = row % heads;
  uint base = h < p.n_heads ? t * p.token_stride + h * p.head_stride
                            : p.offset2 + t * p.token_stride2 + (h - p.n_heads) * p.head_stride;
  if (j >= p.rot_half) {  // beyond rot_dim: copied, two elements per thread
    uint d = 2u * j;
    y[base + d] = x[base + d];
    y[base + d + 1u] = x[base + d + 1u];
    return;
  }
  uint d0 = p.neox != 0u ? j : 2u * j;
  uint d1 = p.neox != 0u ? j + p.rot_half : 2u * j + 1u;
  float s, c;
  float position = fourth_section(j) ? 0.0 : float(pos[t]);  // text tokens: the 4th section turns by 0
  sin_cos(position * pair_freq(j), s, c);
  s *= p.mscale, c *= p.mscale;
  float x0 = x[base + d0], x1 = x[base + d1];
  y[base + d0] = x0 * c - x1 * s;
  y[base + d1] = x0 * s + x1 * c;
}
