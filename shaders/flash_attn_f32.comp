#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention with f32 K/V (prefill and split-K decode); the body is flash_attn.glsl.
#define KV_T float
#include "flash_attn.glsl"
