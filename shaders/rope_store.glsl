#version 450
#extension GL_GOOGLE_include_directive : require
// Rope and the KV-cache store in one dispatch, the body of the rope_store_<kv type> variants: q
// rotated in place as rope.comp does, k rotated and written straight into its cache rows instead
// of back into x, and v copied into its cache rows (what rope, then kv_store of k and v, do in
// two dispatches and one more pass over k; the results are the same bits). With QK_NORM each q
// and k head is first RMS-normed with its weight (qwen3's and gemma's attn_q_norm / attn_k_norm),
// which saves their two dispatches too.
//   pos: (n_tokens) int32 positions   ff: (rot_dim / 2) f32, bound only when HAS_FF
//   rows: (n_tokens) int32 cache rows (slot · n_ctx + position; rows outside [0, n_ctx) skipped)
//   q_norm, k_norm: (head_dim) f32 norm weights, bound only with QK_NORM
//   x: q heads (rope.n_heads) and k heads (rope.n_heads2 at rope.offset2) as RopePush lays them
//      out; v: v_head_dim values per (token, kv head) from v_offset, tokens v_token_stride apart
//   cache: K (n_heads2, n_ctx, cache_head_dim) from element 0, V (n_heads2, n_ctx, v_head_dim)
//          from element v_cache_offset, of CACHE_T (the variant's KV_F16 or KV_F32)
// Workgroups: one per (token, head) row of q and k (its threads stride over the row's pairs, and
// the norm is a workgroup sum), then WG values of v each.
#include "grid.glsl"
#include "push.h"

#include "cache_type.glsl"  // CACHE_T: the variant's f16 or f32

layout(constant_id = 0) const uint WG = 64;  // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const bool HAS_FF = false;
layout(constant_id = 3) const bool QK_NORM = false;
layout(local_size_x_id = 0) in;
shared float red[WG];
#include "common.glsl"

layout(std430, binding = 0) readonly buffer Pos { int pos[]; };
layout(std430, binding = 1) readonly buffer FF { float ff[]; };
layout(std430, binding = 2) readonly buffer Rows { int rows[]; };
layout(std430, binding = 3) readonly buffer QNorm { float q_norm[]; };
layout(std430, binding = 4) readonly buffer KNorm { float k_norm[]; };
layout(std430, binding = 5) buffer X { float x[]; };
layout(std430, binding = 6) writeonly buffer Cache { CACHE_T cache[]; };
layout(push_constant) uniform PushBlock { RopeStorePush p; };

#define RP p.rope
#include "rope_math.glsl"

// Element d of kv head h of the token whose cache row is `row`, in the K or V cache.
uint cache_at(uint base, uint h, int row, uint width, uint d) { return base + (h * p.n_ctx + uint(row)) * width + d; }

void store_v(uint g) {
  uint n_tokens = RP.n_rows / (RP.n_heads + RP.n_heads2);
  if (g >= n_tokens * RP.n_heads2 * p.v_head_dim) return;
  uint d = g % p.v_head_dim, th = g / p.v_head_dim, h = th % RP.n_heads2, t = th / RP.n_heads2;
  int row = rows[t];
  if (row < 0 || uint(row) >= p.n_ctx) return;
  cache[cache_at(p.v_cache_offset, h, row, p.v_head_dim, d)] =
      CACHE_T(x[p.v_offset + t * p.v_token_stride + h * p.v_head_dim + d]);
}

// Pair j of the row: its two elements (rope's pairing within rot_dim, neighbours past it).
uvec2 pair_at(uint j) {
  if (j >= RP.rot_half) return uvec2(2u * j, 2u * j + 1u);
  return RP.neox != 0u ? uvec2(j, j + RP.rot_half) : uvec2(2u * j, 2u * j + 1u);
}

void main() {
  uint group = group_index();
  if (group >= RP.n_rows) {  // the v workgroups: uniform, no barrier follows
    store_v((group - RP.n_rows) * WG + gl_LocalInvocationIndex);
    return;
  }
  uint heads = RP.n_heads + RP.n_heads2, t = group / heads, h = group % heads, half_head = RP.head_dim / 2;
  bool is_q = h < RP.n_heads;
  uint base = is_q ? t * RP.token_stride + h * RP.head_stride
                   : RP.offset2 + t * RP.token_stride2 + (h - RP.n_heads) * RP.head_stride;
  float scale = 1.0;
  if (QK_NORM) {  // every thread of the workgroup takes part (the sum has barriers)
    float ss = 0.0;
    for (uint d = gl_LocalInvocationIndex; d < RP.head_dim; d += WG) ss += x[base + d] * x[base + d];
    scale = inversesqrt(workgroup_sum(ss) / float(RP.head_dim) + p.norm_eps);
  }
  int r = rows[t];
  if (!is_q && (r < 0 || uint(r) >= p.n_ctx)) return;
  uint hk = h - RP.n_heads;
  for (uint j = gl_LocalInvocationIndex; j < half_head; j += WG) {
    uvec2 d = pair_at(j);
    float x0 = x[base + d.x], x1 = x[base + d.y];
    if (QK_NORM) {
      x0 *= scale * (is_q ? q_norm[d.x] : k_norm[d.x]);
      x1 *= scale * (is_q ? q_norm[d.y] : k_norm[d.y]);
    }
    float y0 = x0, y1 = x1;
    if (j < RP.rot_half) {  // beyond rot_dim: copied
      float s, c;
      rope_angle(j, rope_position(j, t), s, c);
      y0 = x0 * c - x1 * s;
      y1 = x0 * s + x1 * c;
    }
    if (is_q) {
      x[base + d.x] = y0;
      x[base + d.y] = y1;
    } else {
      cache[cache_at(0u, hk, r, p.cache_head_dim, d.x)] = CACHE_T(y0);
      cache[cache_at(0u, hk, r, p.cache_head_dim, d.y)] = CACHE_T(y1);
    }
  }
}
