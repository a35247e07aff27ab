#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention with f16 K/V (prefill and split-K decode); the body is flash_attn.glsl.
// Two f16 elements per 32-bit word.
#define KV_PAIR uint
vec2 kv_pair(uint w) { return unpackHalf2x16(w); }
#include "flash_attn.glsl"
