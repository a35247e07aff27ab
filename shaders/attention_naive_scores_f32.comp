#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, scores Q K^T with f32 K/V (body in attention_naive.glsl).
#define KV_T float
#define NAIVE_SCORES
#include "attention_naive.glsl"
