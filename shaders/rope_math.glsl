// The rotary embedding's arithmetic (docs/formats.md §3.1, 3.4, 3.5), shared by rope.comp and
// rope_store.glsl. Included after the push block, with RP naming its RopePush (push_position.h),
// HAS_FF and, when HAS_FF, the factors' binding `ff`.
#ifndef VKLLM_ROPE_MATH_GLSL
#define VKLLM_ROPE_MATH_GLSL
#include "rope_sincos.glsl"

// Angle per unit position of pair i: base^(-2i/rot_dim) / ff_i, mixed between interpolation
// (freq_scale) and extrapolation (1) by YaRN's ramp; with ext_factor 0 that is plain freq_scale.
float pair_freq(uint i) {
  float r = 1.0, b = RP.theta_scale_hi;
  for (uint e = i; e != 0u; e >>= 1) {
    if ((e & 1u) != 0u) r *= b;
    b *= b;
  }
  float f = r * (1.0 + float(i) * RP.theta_scale_lo);
  float ramp = 1.0 - clamp((float(i) - RP.corr_low) / max(0.001, RP.corr_high - RP.corr_low), 0.0, 1.0);
  float m = ramp * RP.ext_factor;
  f *= (1.0 - m) * RP.freq_scale + m;
  if (HAS_FF) f /= ff[i];
  return f;
}

// The section (0 .. 3) of pair i of a sectioned rope (ref::rope_pair_section): with sections (s0,
// s1, s2, s3) pair i is in sector i % (s0 + .. + s3), the sections taking the sectors in turn, or
// interleaved (t h w t h w ..., each while it has pairs left; the rest is the 4th). 0 without sections.
uint pair_section(uint i) {
  uint all = RP.sec0 + RP.sec1 + RP.sec2 + RP.sec3;
  if (all == 0u) return 0u;
  uint sector = i % all;
  if (RP.interleaved != 0u) {
    uint k = sector % 3u;
    if (k == 0u && sector < 3u * RP.sec0) return 0u;
    if (k == 1u && sector < 3u * RP.sec1) return 1u;
    if (k == 2u && sector < 3u * RP.sec2) return 2u;
    return 3u;
  }
  return sector < RP.sec0 ? 0u : sector < RP.sec0 + RP.sec1 ? 1u : sector < RP.sec0 + RP.sec1 + RP.sec2 ? 2u : 3u;
}

// The position pair j of token t turns with: pos[t], but for a sectioned rope the position of its
// section (section_stride > 0), or 0 in the 4th section (text tokens).
int rope_position(uint j, uint t) {
  uint s = pair_section(j);
  if (RP.section_stride != 0u) return pos[s * RP.section_stride + t];
  return s == 3u ? 0 : pos[t];
}

// sin and cos (times mscale) of pair j's angle at position pos.
void rope_angle(uint j, int pos, out float s, out float c) {
  sin_cos(float(pos) * pair_freq(j), s, c);
  s *= RP.mscale, c *= RP.mscale;
}

#endif
