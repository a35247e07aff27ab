#version 450
#extension GL_GOOGLE_include_directive : require
// Body of the kv_store_q8_0 / kv_store_q4_0 variants (CMakeLists.txt): writes this step's keys or
// values into a quantised cache, one thread per 32-value block, quantised as ggml's reference
// quantisers do (so the CPU reference, reference/quant.cpp, stores the same bytes):
//   Q8_0: d = amax / 127, q = round half away from zero of x / d          (d, qs[32] int8)
//   Q4_0: d = (value of largest magnitude) / -8, q = min(15, trunc(x / d + 8.5)),
//         qs[j] = q[j] | q[j + 16] << 4                                   (d, qs[16])
// with 1/d from the f32 d and d stored as f16. Same push constants and layout as kv_store.glsl,
// in values: row (h, position) of the cache is cache_head_dim / 32 blocks; head_dim, cache_col
// and cache_head_dim are multiples of 32 (ops::kv_store checks). Blocks are written as 16-bit
// words (every block size is even).
#include "grid.glsl"
#include "push.h"

#extension GL_EXT_shader_16bit_storage : require

#if defined(KV_Q8_0)
const uint BLOCK16 = 17;  // 16-bit words per block
#elif defined(KV_Q4_0)
const uint BLOCK16 = 9;
#else
#error "build kv_store_quant.glsl with -DKV_Q8_0 or -DKV_Q4_0"
#endif

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Src { float src[]; };
layout(std430, binding = 1) readonly buffer Pos { int pos[]; };
layout(std430, binding = 2) writeonly buffer Cache { uint16_t cache[]; };
layout(push_constant) uniform PushBlock { KvStorePush p; };
#include "kv_store_part.glsl"

void main() {
  uint g = thread_index(WG);
  KvPart k = kv_part(g, 32u);
  uint blocks = k.head_dim / 32;
  if (g >= p.n_tokens * p.n_kv_heads * blocks) return;
  uint b = g % blocks, th = g / blocks;
  uint h = th % p.n_kv_heads, t = th / p.n_kv_heads;
  int ps = pos[t];
  if (ps < 0 || uint(ps) >= p.n_ctx) return;
  uint s0 = k.src0 + t * k.src_stride + h * k.head_dim + 32 * b;
  uint dst = k.cache0 + ((h * p.n_ctx + uint(ps)) * (k.cache_head_dim / 32) + k.cache_col / 32 + b) * BLOCK16;
  float x[32], amax = 0.0, mx = 0.0;
  for (uint j = 0; j < 32; ++j) {
    x[j] = src[s0 + j];
    if (abs(x[j]) > amax) amax = abs(x[j]), mx = x[j];
  }
#if defined(KV_Q8_0)
  float d = amax / 127.0, id = d != 0.0 ? 1.0 / d : 0.0;
  cache[dst] = uint16_t(packHalf2x16(vec2(d, 0.0)));
  for (uint j = 0; j < 32; j += 2) {
    vec2 v = vec2(x[j], x[j + 1]) * id;
    ivec2 q = ivec2(sign(v) * floor(abs(v) + 0.5));  // roundf: halves away from zero
    cache[dst + 1 + j / 2] = uint16_t((uint(q.x) & 255) | ((uint(q.y) & 255) << 8));
  }
#else
  float d = mx / -8.0, id = d != 0.0 ? 1.0 / d : 0.0;
  cache[dst] = uint16_t(packHalf2x16(vec2(d, 0.0)));
  for (uint j = 0; j < 16; j += 2) {
    uvec4 q = uvec4(min(vec4(15.0), vec4(x[j], x[j + 1], x[j + 16], x[j + 17]) * id + 8.5));  // >= 0.5: trunc
    cache[dst + 1 + j / 2] = uint16_t(q.x | (q.z << 4) | (q.y << 8) | (q.w << 12));
  }
#endif
}
