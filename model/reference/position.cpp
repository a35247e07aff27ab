// Reference rope, Llama-3 frequency factors and KV-cache store.
#include "reference/position.h"

#include <algorithm>
#include <cmath>
#include <numbers>

#include "reference/quant.h"

namespace vkllm::ref {

namespace {

constexpr double kPi = std::numbers::pi;

// YaRN's ramp over pair indices (docs/formats.md §3.5): 1 below `low` (keep the original frequency,
// extrapolate), 0 above `high` (interpolate), linear between.
double yarn_ramp(const RopeSpec& s, size_t i) {
  auto corr = [&](double rotations) {
    return s.rot_dim * std::log(s.n_ctx_orig / (2 * kPi * rotations)) / (2 * std::log(s.theta_base));
  };
  double low = std::max(0.0, std::floor(corr(s.beta_fast)));
  double high = std::min(double(s.rot_dim) - 1, std::ceil(corr(s.beta_slow)));
  return 1 - std::clamp((double(i) - low) / std::max(0.001, high - low), 0.0, 1.0);
}

}  // namespace

uint32_t rope_pair_section(const RopeSpec& s, size_t i) {
  const uint32_t* n = s.sections;
  size_t all = size_t(n[0]) + n[1] + n[2] + n[3];
  if (all == 0) return 0;
  size_t sector = i % all;
  if (s.interleaved) {
    for (uint32_t k = 0; k < 3; ++k)
      if (sector % 3 == k && sector < 3 * size_t(n[k])) return k;
    return 3;
  }
  return sector < n[0] ? 0 : sector < size_t(n[0]) + n[1] ? 1 : sector < size_t(n[0]) + n[1] + n[2] ? 2 : 3;
}

bool rope_pair_is_fourth_section(const RopeSpec& s, size_t i) {
  return (s.sections[0] + s.sections[1] + s.sections[2] + s.sections[3]) > 0 && rope_pair_section(s, i) == 3;
}

void rope(float* y, const float* x, const int32_t* pos, const float* ff, const RopeSpec& s) {
  size_t head_stride = s.head_stride ? s.head_stride : s.head_dim;
  size_t token_stride = s.token_stride ? s.token_stride : s.n_heads * head_stride;
  bool yarn = s.ext_factor != 0;
  double mscale = s.attn_factor * (yarn ? 1 + 0.1 * std::log(1 / s.freq_scale) : 1.0);
  size_t half = s.rot_dim / 2;
  for (size_t t = 0; t < s.n_tokens; ++t)
    for (size_t h = 0; h < s.n_heads; ++h) {
      const float* xh = x + t * token_stride + h * head_stride;
      float* yh = y + t * token_stride + h * head_stride;
      for (size_t d = s.rot_dim; d < s.head_dim; ++d) yh[d] = xh[d];
      for (size_t i = 0; i < half; ++i) {
        double p = s.section_stride                    ? double(pos[rope_pair_section(s, i) * s.section_stride + t])
                   : rope_pair_is_fourth_section(s, i) ? 0.0
                                                       : double(pos[t]);
        double extrap = p * std::pow(s.theta_base, -2.0 * i / s.rot_dim) / (ff ? ff[i] : 1.0);
        double interp = s.freq_scale * extrap;
        double mix = yarn ? yarn_ramp(s, i) * s.ext_factor : 0.0;
        double theta = interp * (1 - mix) + extrap * mix;
        size_t a = s.neox ? i : 2 * i, b = s.neox ? i + half : 2 * i + 1;
        double x0 = xh[a], x1 = xh[b], c = std::cos(theta) * mscale, sn = std::sin(theta) * mscale;
        yh[a] = float(x0 * c - x1 * sn);
        yh[b] = float(x0 * sn + x1 * c);
      }
    }
}

std::vector<float> llama3_rope_freq_factors(size_t rot_dim, double base, double factor, double low_freq_factor,
                                            double high_freq_factor, double n_ctx_orig) {
  std::vector<float> out(rot_dim / 2);
  double low_wavelen = n_ctx_orig / low_freq_factor, high_wavelen = n_ctx_orig / high_freq_factor;
  for (size_t i = 0; i < out.size(); ++i) {
    double freq = std::pow(base, -2.0 * i / rot_dim);
    double wavelen = 2 * kPi / freq;
    if (wavelen < high_wavelen) {
      out[i] = 1;
    } else if (wavelen > low_wavelen) {
      out[i] = float(factor);
    } else {
      double smooth = (n_ctx_orig / wavelen - low_freq_factor) / (high_freq_factor - low_freq_factor);
      out[i] = float(1 / ((1 - smooth) / factor + smooth));
    }
  }
  return out;
}

float round_to_f16(float v) {
  if (!std::isfinite(v)) return v;
  double a = std::fabs(v);
  if (a >= 65520) return std::copysign(INFINITY, v);  // halfway to the next binade rounds up
  // f16 has 10 fraction bits; below 2^-14 the spacing stays 2^-24 (subnormals).
  int e = a > 0 ? std::max(std::ilogb(a), -14) : -14;
  double step = std::ldexp(1.0, e - 10);
  return float(std::copysign(std::nearbyint(a / step) * step, v));  // nearbyint: ties to even
}

void kv_store(float* cache, const float* src, const int32_t* pos, size_t n_tokens, size_t n_kv_heads, size_t head_dim,
              size_t n_ctx, size_t src_token_stride, size_t cache_head_dim, size_t cache_col, DType type) {
  for (size_t t = 0; t < n_tokens; ++t) {
    if (pos[t] < 0 || size_t(pos[t]) >= n_ctx) continue;
    for (size_t h = 0; h < n_kv_heads; ++h) {
      float* row = &cache[(h * n_ctx + pos[t]) * cache_head_dim + cache_col];
      std::copy_n(&src[t * src_token_stride + h * head_dim], head_dim, row);
      round_trip(type, row, head_dim);
    }
  }
}

}  // namespace vkllm::ref
