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

// Whether pair i belongs to the 4th section of a sectioned rope (ref::rope_pair_is_fourth_section):
// with sections (s0, s1, s2, s3) pair i is in sector i % (s0 + .. + s3), the sections taking the
// sectors in turn, or interleaved (t h w t h w ..., each while it has pairs left; the rest is the 4th).
bool fourth_section(uint i) {
  uint all = RP.sec0 + RP.sec1 + RP.sec2 + RP.sec3;
  if (all == 0u) return false;
  uint sector = i % all;
  if (RP.interleaved != 0u) {
    uint k = sector % 3u;
    return !((k == 0u && sector < 3u * RP.sec0) || (k == 1u && sector < 3u * RP.sec1) ||
             (k == 2u && sector < 3u * RP.sec2));
  }
  return sector >= RP.sec0 + RP.sec1 + RP.sec2;
}

// sin and cos (times mscale) of pair j's angle at position pos; the 4th section of a sectioned
// rope turns by position 0 (text tokens).
void rope_angle(uint j, int pos, out float s, out float c) {
  float position = fourth_section(j) ? 0.0 : float(pos);
  sin_cos(position * pair_freq(j), s, c);
  s *= RP.mscale, c *= RP.mscale;
}

#endif
