#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with Q8_0 weights; the body is matvec.glsl.
#define WTYPE_Q8_0
#include "matvec.glsl"
