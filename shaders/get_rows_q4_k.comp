#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (embedding lookup) with Q4_K weights; the body is get_rows.glsl.
#define WTYPE_Q4_K
#include "get_rows.glsl"
