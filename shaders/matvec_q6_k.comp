#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with Q6_K weights; the body is matvec.glsl.
#define WTYPE_Q6_K
#include "matvec.glsl"
