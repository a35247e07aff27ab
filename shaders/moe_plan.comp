#version 450
#extension GL_GOOGLE_include_directive : require
// Groups the (token, slot) pairs by the expert they were routed to and lists the tiles the
// expert-product kernels take, one workgroup (layout of the plan: push_moe.h MoePlanPush):
//   1. count the pairs of each expert (atomics), 2. one thread turns counts into offsets and
//   cuts each expert's pairs into tiles of `tile`, 3. scatter the pair ids.
// The order of pairs within an expert depends on the atomics, but no result does: each pair's
// products are computed alone (the kernels never sum across pairs).
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Ids { int ids[]; };  // (n_pairs)
layout(std430, binding = 1) coherent buffer Plan { int plan[]; };
layout(push_constant) uniform PushBlock { MoePlanPush p; };

void sync() {
  memoryBarrierBuffer();
  barrier();
}

void main() {
  uint tid = gl_LocalInvocationIndex, E = p.n_experts;
  uint counts = 0, offsets = E, cursor = 2 * E, pairs = 3 * E, tiles = 3 * E + p.n_pairs;
  for (uint e = tid; e < E; e += WG) plan[counts + e] = 0, plan[cursor + e] = 0;
  sync();
  for (uint q = tid; q < p.n_pairs; q += WG) atomicAdd(plan[counts + uint(ids[q])], 1);
  sync();
  if (tid == 0) {
    uint at = 0, t = 0;
    for (uint e = 0; e < E; ++e) {
      uint c = uint(plan[counts + e]);
      plan[offsets + e] = int(at);
      for (uint i = 0; i < c; i += p.tile, ++t) plan[tiles + 2 * t] = int(e), plan[tiles + 2 * t + 1] = int(at + i);
      at += c;
    }
    for (; t < p.max_tiles; ++t) plan[tiles + 2 * t] = -1, plan[tiles + 2 * t + 1] = 0;
  }
  sync();
  for (uint q = tid; q < p.n_pairs; q += WG) {
    uint e = uint(ids[q]);
    int slot = atomicAdd(plan[cursor + e], 1);
    plan[pairs + uint(plan[offsets + e]) + uint(slot)] = int(q);
  }
}
