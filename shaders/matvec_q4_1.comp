#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with Q4_1 weights; the body is matvec.glsl.
#define WTYPE_Q4_1
#include "matvec.glsl"
