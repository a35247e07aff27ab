#version 450
#extension GL_GOOGLE_include_directive : require
// Naive attention, output P V with f32 K/V (body in attention_naive.glsl).
#define KV_T float
#define NAIVE_PV
#include "attention_naive.glsl"
