#version 450
#extension GL_GOOGLE_include_directive : require
// Decode matrix-vector product with BF16 weights; the body is matvec.glsl.
#define WTYPE_BF16
#include "matvec.glsl"
