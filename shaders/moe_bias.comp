#version 450
#extension GL_GOOGLE_include_directive : require
// A bias per expert (gpt-oss's expert biases, llama.cpp's add_id): y(n_pairs, M) row p +=
// bias row ids[p], one thread per element.
//   bias: (n_experts, M) f32   ids: (n_pairs) int32, each pair's expert   y: (n_pairs, M) f32
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer B { float bias[]; };
layout(std430, binding = 1) readonly buffer Ids { int ids[]; };
layout(std430, binding = 2) buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { MoeBiasPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n_pairs * p.M) return;
  uint pair = i / p.M;
  y[i] += bias[uint(ids[pair]) * p.M + i % p.M];
}
