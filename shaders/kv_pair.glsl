// K and V cache elements are read two at a time, as KV_PAIR, for each KV-cache type (one define
// per variant: KV_F16, KV_F32, KV_Q8_0, KV_Q4_0); kv_pair() gives a float pair's two values, and
// kv_read.glsl dequantises the quantised ones.
#ifndef VKLLM_KV_PAIR_GLSL
#define VKLLM_KV_PAIR_GLSL

#if defined(KV_F16)
#define KV_PAIR uint  // two f16 in a 32-bit word
vec2 kv_pair(uint w) { return unpackHalf2x16(w); }
#elif defined(KV_F32)
#define KV_PAIR vec2
vec2 kv_pair(vec2 w) { return w; }
#elif defined(KV_Q8_0) || defined(KV_Q4_0)
#define KV_PAIR uint  // the raw blocks; kv_read.glsl dequantises pairs from 16-bit words
#else
#error "build with -DKV_F16, -DKV_F32, -DKV_Q8_0 or -DKV_Q4_0"
#endif

#endif
