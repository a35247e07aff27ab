#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention with f32 K/V (prefill and split-K decode); the body is flash_attn.glsl.
#define KV_PAIR vec2
vec2 kv_pair(vec2 w) { return w; }
#include "flash_attn.glsl"
