#version 450
#extension GL_GOOGLE_include_directive : require
// y = a * b elementwise, or a(rows, dim) * b(dim) per row (norm weights).
#define OP(a, b) ((a) * (b))
#include "binary.glsl"
