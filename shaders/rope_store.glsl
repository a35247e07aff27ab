#version 450
#extension GL_GOOGLE_include_directive : require
// Rope and the KV-cache store in one dispatch, the body of the rope_store_<kv type> variants: q
// rotated in place as rope.comp does, k rotated and written straight into its cache rows instead
// of back into x, and v copied into its cache rows (what rope, then kv_store of k and v, do in
// two dispatches and one more pass over k; the results are the same bits).
//   pos: (n_tokens) int32 positions   ff: (rot_dim / 2) f32, bound only when HAS_FF
//   rows: (n_tokens) int32 cache rows (slot · n_ctx + position; rows outside [0, n_ctx) skipped)
//   x: q heads (rope.n_heads) and k heads (rope.n_heads2 at rope.offset2) as RopePush lays them
//      out; v: v_head_dim values per (token, kv head) from v_offset, tokens v_token_stride apart
//   cache: K (n_heads2, n_ctx, cache_head_dim) from word 0, V (n_heads2, n_ctx, v_head_dim) from
//          word v_cache_offset, of CACHE_T (the variant's KV_F16 or KV_F32)
// Threads: one per rope pair of q and k (rope.comp's), then one per value of v.
#include "grid.glsl"
#include "push.h"

#if defined(KV_F16)  // f32 -> f16 rounding is the device's conversion, as kv_store's
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define CACHE_T float16_t
#elif defined(KV_F32)
#define CACHE_T float
#else
#error "build rope_store.glsl with -DKV_F16 or -DKV_F32"
#endif

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool HAS_FF = false;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Pos { int pos[]; };
layout(std430, binding = 1) readonly buffer FF { float ff[]; };
layout(std430, binding = 2) readonly buffer Rows { int rows[]; };
layout(std430, binding = 3) buffer X { float x[]; };
layout(std430, binding = 4) writeonly buffer Cache { CACHE_T cache[]; };
layout(push_constant) uniform PushBlock { RopeStorePush p; };

#define RP p.rope
#include "rope_math.glsl"

// Element d of kv head h of the token whose cache row is `row`, in the K or V cache.
uint cache_at(uint base, uint h, int row, uint width, uint d) { return base + (h * p.n_ctx + uint(row)) * width + d; }

void store_v(uint g) {
  if (g >= p.rope.n_rows / (p.rope.n_heads + p.rope.n_heads2) * p.rope.n_heads2 * p.v_head_dim) return;
  uint d = g % p.v_head_dim, th = g / p.v_head_dim, h = th % p.rope.n_heads2, t = th / p.rope.n_heads2;
  int row = rows[t];
  if (row < 0 || uint(row) >= p.n_ctx) return;
  cache[cache_at(p.v_cache_offset, h, row, p.v_head_dim, d)] =
      CACHE_T(x[p.v_offset + t * p.v_token_stride + h * p.v_head_dim + d]);
}

void main() {
  uint g = thread_index(WG);
  uint half_head = RP.head_dim / 2, rope_threads = RP.n_rows * half_head;
  if (g >= rope_threads) {
    store_v(g - rope_threads);
    return;
  }
  uint row = g / half_head, j = g % half_head;
  uint heads = RP.n_heads + RP.n_heads2, t = row / heads, h = row % heads;
  bool is_q = h < RP.n_heads;
  uint base = is_q ? t * RP.token_stride + h * RP.head_stride
                   : RP.offset2 + t * RP.token_stride2 + (h - RP.n_heads) * RP.head_stride;
  uint d0 = j >= RP.rot_half ? 2u * j : RP.neox != 0u ? j : 2u * j;
  uint d1 = j >= RP.rot_half ? 2u * j + 1u : RP.neox != 0u ? j + RP.rot_half : 2u * j + 1u;
  float x0 = x[base + d0], x1 = x[base + d1], y0 = x0, y1 = x1;
  if (j < RP.rot_half) {  // beyond rot_dim: copied
    float s, c;
    rope_angle(j, rope_position(j, t), s, c);
    y0 = x0 * c - x1 * s;
    y1 = x0 * s + x1 * c;
  }
  if (is_q) {
    x[base + d0] = y0;
    x[base + d1] = y1;
    return;
  }
  int r = rows[t];
  if (r < 0 || uint(r) >= p.n_ctx) return;
  uint hk = h - RP.n_heads;
  cache[cache_at(0u, hk, r, p.cache_head_dim, d0)] = CACHE_T(y0);
  cache[cache_at(0u, hk, r, p.cache_head_dim, d1)] = CACHE_T(y1);
}
