#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (embedding lookup) with BF16 weights; the body is get_rows.glsl.
#define WTYPE_BF16
#include "get_rows.glsl"
