// CACHE_T, the element type of a KV cache that a kernel writes in f32 -> f16 or f32: the variant
// is built with -DKV_F16 or -DKV_F32 (CMakeLists.txt). f16 rounding is the device's conversion.
#ifndef VKLLM_CACHE_TYPE_GLSL
#define VKLLM_CACHE_TYPE_GLSL
#if defined(KV_F16)
#extension GL_EXT_shader_16bit_storage : require
#extension GL_EXT_shader_explicit_arithmetic_types_float16 : require
#define CACHE_T float16_t
#elif defined(KV_F32)
#define CACHE_T float
#else
#error "build a KV-cache writer with -DKV_F16 or -DKV_F32"
#endif
#endif
