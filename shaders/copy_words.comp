#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// A plain copy of 16-byte words, dst[i] = src[i] for i < p.n_words: the device's copy bandwidth
// as kernels see it (vkllm-bench copy; a driver's vkCmdCopyBuffer may run on a copy engine that
// is slower than the shader cores). Workgroup g copies words g·WG·PER .. + WG·PER, each thread
// PER of them WG apart (neighbouring threads, neighbouring words), all loads before the stores.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;
const uint PER = 4;

layout(std430, binding = 0) readonly restrict buffer Src { uvec4 src[]; };
layout(std430, binding = 1) writeonly restrict buffer Dst { uvec4 dst[]; };
layout(push_constant) uniform PushBlock { CopyWordsPush p; };

void main() {
  uint base = group_index() * WG * PER + gl_LocalInvocationIndex;
  uvec4 w[PER];
  [[unroll]] for (uint j = 0; j < PER; ++j) {
    uint i = base + j * WG;
    if (i < p.n_words) w[j] = src[i];
  }
  [[unroll]] for (uint j = 0; j < PER; ++j) {
    uint i = base + j * WG;
    if (i < p.n_words) dst[i] = w[j];
  }
}
