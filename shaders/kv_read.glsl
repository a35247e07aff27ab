// K/V element pairs for flash_attn.glsl's tile loader, for each KV-cache type: k_pair(i) and
// v_pair(i) are elements 2i and 2i + 1 of the K (V) binding, in the element numbering of the
// AttentionPush strides. The loader puts them into the shared-memory tile as f32, so a quantised
// cache is dequantised tile by tile as it is loaded, never copied whole.
// Quantised caches (Q8_0, Q4_0: docs/formats.md §2) number their values the same way: every row
// starts a block (head dims and strides are multiples of 32, ops_attention.cpp checks), so value
// e lies in block e / 32 at byte (e / 32) * block bytes. Blocks are read as 16-bit words through
// second declarations of bindings 1 and 2; a pair is one d and one word of quants. A kernel that
// reads only K (attention_probs.glsl) defines KV_READ_K_ONLY: no V declaration, no v_pair.
#ifndef VKLLM_KV_READ_GLSL
#define VKLLM_KV_READ_GLSL

#if defined(KV_Q8_0) || defined(KV_Q4_0)
#extension GL_EXT_shader_16bit_storage : require
layout(std430, binding = 1) readonly buffer K16 { uint16_t k16[]; };
#ifndef KV_READ_K_ONLY
layout(std430, binding = 2) readonly buffer V16 { uint16_t v16[]; };
#endif

#if defined(KV_Q8_0)
const uint KV_BLOCK16 = 17;  // d, qs[32] int8: value j of a block is byte j of the quants
// Values j, j + 1 (j even) of a block from its d and quant word j / 2.
vec2 kv_dequant(uint d, uint w, uint j) {
  return vec2(ivec2(uvec2(w << 24, w << 16)) >> 24) * unpackHalf2x16(d).x;
}
#else
const uint KV_BLOCK16 = 9;  // d, qs[16]: value j < 16 is the low nibble of byte j, j + 16 the high
vec2 kv_dequant(uint d, uint w, uint j) {
  uint s = j < 16 ? 0 : 4;
  return (vec2((uvec2(w, w >> 8) >> s) & 15) - 8.0) * unpackHalf2x16(d).x;
}
#endif
// The 16-bit word of value j (even) of a block: Q8_0 bytes j, j+1; Q4_0 bytes j % 16, j % 16 + 1.
uint kv_word(uint j) { return 1 + (KV_BLOCK16 == 17 ? j : j % 16) / 2; }

vec2 k_pair(uint i) {
  uint b = (2 * i) / 32 * KV_BLOCK16, j = (2 * i) % 32;
  return kv_dequant(uint(k16[b]), uint(k16[b + kv_word(j)]), j);
}
#ifndef KV_READ_K_ONLY
vec2 v_pair(uint i) {
  uint b = (2 * i) / 32 * KV_BLOCK16, j = (2 * i) % 32;
  return kv_dequant(uint(v16[b]), uint(v16[b + kv_word(j)]), j);
}
#endif
#else
vec2 k_pair(uint i) { return kv_pair(k[i]); }
#ifndef KV_READ_K_ONLY
vec2 v_pair(uint i) { return kv_pair(v[i]); }
#endif
#endif

#endif
