#version 450
#extension GL_GOOGLE_include_directive : require
// kv_store into an f32 cache.
#define CACHE_T float
#include "kv_store.glsl"
