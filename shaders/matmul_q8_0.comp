#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with Q8_0 weights; the body is matmul.glsl.
#define WTYPE_Q8_0
#include "matmul.glsl"
