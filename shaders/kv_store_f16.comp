#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
// kv_store into an f16 cache (the default; f32 -> f16 rounding is the device's conversion).
#define CACHE_T float16_t
#include "kv_store.glsl"
