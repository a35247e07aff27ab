#version 450
#extension GL_GOOGLE_include_directive : require
// Flash attention with f16 K/V (prefill and split-K decode); the body is flash_attn.glsl.
#extension GL_EXT_shader_16bit_storage : require
#define KV_T float16_t
#include "flash_attn.glsl"
