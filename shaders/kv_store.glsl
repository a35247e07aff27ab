#version 450
#extension GL_GOOGLE_include_directive : require
// Body of the kv_store_<type> variants (CMakeLists.txt): writes this step's keys or values into
// the cache at each token's position. The variant passes KV_F16 or KV_F32, the cache type.
//   src: (n_tokens, src_token_stride) f32, head h of token t at t * src_token_stride + h * head_dim
//   pos: (n_tokens) int32
//   cache: (n_kv_heads, n_ctx, cache_head_dim) CACHE_T; columns cache_col .. + head_dim written
// Positions outside [0, n_ctx) are skipped (ops::kv_store cannot see them; the engine checks).
// MLA's latent row [c_kv(512); k_pe(64)] is one head of cache_head_dim 576, written by two calls.
// A second copy (V beside K in one buffer) may ride along: kv_store_part.glsl.
#include "grid.glsl"
#include "push.h"

#include "cache_type.glsl"  // CACHE_T: the variant's f16 or f32

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Pos { int pos[]; };
layout(std430, binding = 2) writeonly buffer Cache { CACHE_T cache[]; };
layout(push_constant) uniform PushBlock { KvStorePush p; };
#include "kv_store_part.glsl"

void main() {
  uint g = thread_index(WG);
  KvPart k = kv_part(g, 1u);
  if (g >= p.n_tokens * p.n_kv_heads * k.head_dim) return;
  uint d = g % k.head_dim, th = g / k.head_dim;
  uint h = th % p.n_kv_heads, t = th / p.n_kv_heads;
  int ps = pos[t];
  if (ps < 0 || uint(ps) >= p.n_ctx) return;
  uint dst = k.cache0 + (h * p.n_ctx + uint(ps)) * k.cache_head_dim + k.cache_col + d;
  cache[dst] = CACHE_T(src[k.src0 + t * k.src_stride + h * k.head_dim + d]);
}
