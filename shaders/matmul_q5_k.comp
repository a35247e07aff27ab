#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with Q5_K weights; the body is matmul.glsl.
#define WTYPE_Q5_K
#include "matmul.glsl"
