#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with F32 weights; the body is matvec.glsl.
#define WTYPE_F32
#include "matvec.glsl"
