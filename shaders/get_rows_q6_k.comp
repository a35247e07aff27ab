#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (embedding lookup) with Q6_K weights; the body is get_rows.glsl.
#define WTYPE_Q6_K
#include "get_rows.glsl"
