// Helpers shared by kernels: workgroup reductions that work for any subgroup size (lavapipe
// has 8, NVIDIA 32, AMD 32 or 64) with or without subgroup arithmetic.
#ifndef VKLLM_COMMON_GLSL
#define VKLLM_COMMON_GLSL

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : enable

uint ceil_div(uint a, uint b) { return (a + b - 1) / b; }

// A kernel using the reductions declares, before including this file:
//   layout(constant_id = 0) const uint WG = 256;        // threads per workgroup (local_size_x_id = 0)
//   layout(constant_id = 1) const bool USE_SUBGROUP = true;
//   shared float red[WG];
// Every invocation of the workgroup must call the reduction (it contains barriers).

float workgroup_sum(float v) {
  if (USE_SUBGROUP) {
    v = subgroupAdd(v);
    uint n_sub = gl_NumSubgroups;
    if (gl_SubgroupInvocationID == 0) red[gl_SubgroupID] = v;
    barrier();
    float total = 0.0;
    for (uint i = 0; i < n_sub; ++i) total += red[i];
    barrier();
    return total;
  }
  red[gl_LocalInvocationIndex] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationIndex < s) red[gl_LocalInvocationIndex] += red[gl_LocalInvocationIndex + s];
    barrier();
  }
  float total = red[0];
  barrier();
  return total;
}

float workgroup_max(float v) {
  if (USE_SUBGROUP) {
    v = subgroupMax(v);
    uint n_sub = gl_NumSubgroups;
    if (gl_SubgroupInvocationID == 0) red[gl_SubgroupID] = v;
    barrier();
    float m = red[0];
    for (uint i = 1; i < n_sub; ++i) m = max(m, red[i]);
    barrier();
    return m;
  }
  red[gl_LocalInvocationIndex] = v;
  barrier();
  for (uint s = WG / 2; s > 0; s >>= 1) {
    if (gl_LocalInvocationIndex < s)
      red[gl_LocalInvocationIndex] = max(red[gl_LocalInvocationIndex], red[gl_LocalInvocationIndex + s]);
    barrier();
  }
  float m = red[0];
  barrier();
  return m;
}

#endif
