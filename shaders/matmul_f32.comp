#version 450
#extension GL_GOOGLE_include_directive : require
// Tiled prefill matrix product with F32 weights; the body is matmul.glsl.
#define WTYPE_F32
#include "matmul.glsl"
