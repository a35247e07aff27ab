#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (embedding lookup) with Q8_0 weights; the body is get_rows.glsl.
#define WTYPE_Q8_0
#include "get_rows.glsl"
