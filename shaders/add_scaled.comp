#version 450
#extension GL_GOOGLE_include_directive : require
// y = a + b * s elementwise over n floats: a block's output b, scaled, added to the residual a
// (Granite's residual multiplier). y may alias a.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { ScalePush p; };

void main() {
  uint i = thread_index(WG);
  if (i < p.n) y[i] = a[i] + b[i] * p.s;
}
