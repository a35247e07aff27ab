// CPU reference for the position-indexed ops: rotary embedding (docs/formats.md §3.1-3.5), Llama-3
// frequency factors, and the KV-cache store. Written from the formulas, in double.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "dtype.h"

namespace vkllm::ref {

struct RopeSpec {
  size_t n_tokens = 0, n_heads = 0;
  size_t head_dim = 0;  // per head: the first rot_dim elements rotate, the rest pass through
  size_t rot_dim = 0;
  bool neox = false;  // pairs (i, i + rot_dim/2) instead of (2i, 2i+1)
  double theta_base = 10000;
  double freq_scale = 1;  // 1 / linear scaling factor
  // YaRN: off when ext_factor is 0
  double ext_factor = 0, attn_factor = 1;
  double n_ctx_orig = 0, beta_fast = 32, beta_slow = 1;
  size_t token_stride = 0, head_stride = 0;  // elements; 0: contiguous (n_tokens, n_heads, head_dim)
  // Sectioned rope of text tokens (Qwen3.5's interleaved M-RoPE): pair i belongs to section
  // i % (sections[0] + .. + sections[3]), the sections counted in turn, or interleaved (t h w t h w
  // ..., each while it has pairs left; the rest is the 4th). Pairs of the 4th section turn with
  // position 0, as llama.cpp gives text tokens; the other three with the token's position. All 0:
  // no sections.
  uint32_t sections[4] = {0, 0, 0, 0};
  bool interleaved = false;
  // > 0: pos holds every section's positions, section s of token t at pos[s · section_stride + t]
  // (M-RoPE of image tokens: time, row, column; ops::RopeParams::section_stride).
  size_t section_stride = 0;
};

// The section (0 .. 3) pair i of a sectioned rope belongs to; 0 without sections.
uint32_t rope_pair_section(const RopeSpec& spec, size_t i);
// Whether pair i of a sectioned rope turns with position 0 (it is in the 4th section).
bool rope_pair_is_fourth_section(const RopeSpec& spec, size_t i);

// y = x with each head's first rot_dim elements rotated: pair i at position p turns by
//   theta_i = p base^(-2i/rot_dim) / ff_i, interpolated by freq_scale and (with YaRN) a ramp.
// ff (rot_dim/2) may be null. Elements outside the heads are left as they are in y.
void rope(float* y, const float* x, const int32_t* pos, const float* ff, const RopeSpec& spec);

// Llama-3.1/3.2 rope_freqs (docs/formats.md §3.4): n_rot/2 factors that divide theta_i.
std::vector<float> llama3_rope_freq_factors(size_t rot_dim, double base, double factor, double low_freq_factor,
                                            double high_freq_factor, double n_ctx_orig);

// The value an f32 becomes when stored as IEEE f16 (round to nearest even; overflow to inf).
float round_to_f16(float v);

// cache(n_kv_heads, n_ctx, cache_head_dim): head h of token t, src[t * src_token_stride +
// h * head_dim + d] for d < head_dim, goes to cache[h][pos[t]][cache_col + d] as the cache type
// stores it (ref::round_trip: f16 rounding, or Q8_0/Q4_0 blocks of 32 along the row, which then
// needs head_dim and cache_col to be multiples of 32); the cache holds the values read back.
// Positions outside [0, n_ctx) are skipped.
void kv_store(float* cache, const float* src, const int32_t* pos, size_t n_tokens, size_t n_kv_heads, size_t head_dim,
              size_t n_ctx, size_t src_token_stride, size_t cache_head_dim, size_t cache_col, DType type);

}  // namespace vkllm::ref
