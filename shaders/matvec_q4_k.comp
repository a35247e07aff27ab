#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with Q4_K weights; the body is matvec.glsl.
#define WTYPE_Q4_K
#include "matvec.glsl"
