#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (embedding lookup) with F32 weights; the body is get_rows.glsl.
#define WTYPE_F32
#include "get_rows.glsl"
