#version 450
#extension GL_GOOGLE_include_directive : require
// y = a + b, elementwise over n floats (the residual add). y may alias a.
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { AddPush p; };

void main() {
  // 2-D grid so n may exceed 65535 workgroups' worth of threads.
  uint i = (gl_WorkGroupID.y * gl_NumWorkGroups.x + gl_WorkGroupID.x) * WG + gl_LocalInvocationIndex;
  if (i < p.n) y[i] = a[i] + b[i];
}
