#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with Q4_K weights; the body is matmul.glsl.
#define WTYPE_Q4_K
#include "matmul.glsl"
