#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, scores Q K^T with f16 K/V (body in attention_naive.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define KV_T float16_t
#define NAIVE_SCORES
#include "attention_naive.glsl"
