#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with F16 weights; the body is matmul.glsl.
#define WTYPE_F16
#include "matmul.glsl"
