#version 450
#extension GL_GOOGLE_include_directive : require
// y = a + b elementwise (the residual add), or a(rows, dim) + b(dim) per row (biases).
#define OP(a, b) ((a) + (b))
#include "binary.glsl"
