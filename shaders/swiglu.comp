#version 450
#extension GL_GOOGLE_include_directive : require
// SwiGLU gate: y = silu(gate) * up = gate / (1 + exp(-gate)) * up, elementwise over n floats.
// gate and up may be two views of one buffer (a fused gate|up projection); y may alias either.
#include "activation.glsl"
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer G { float gate[]; };
layout(std430, binding = 1) readonly buffer U { float up[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { UnaryPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  y[i] = silu(gate[i]) * up[i];
}
