#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with BF16 weights; the body is matmul.glsl.
#define WTYPE_BF16
#include "matmul.glsl"
