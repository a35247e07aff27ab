#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with Q5_K weights; the body is matvec.glsl.
#define WTYPE_Q5_K
#include "matvec.glsl"
