#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, output P V with f16 K/V (body in attention_naive.glsl).
#extension GL_EXT_shader_16bit_storage : require
#define KV_T float16_t
#define NAIVE_PV
#include "attention_naive.glsl"
