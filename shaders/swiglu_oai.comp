#version 450
#extension GL_GOOGLE_include_directive : require
// gpt-oss's SwiGLU, elementwise over n floats (ggml's swiglu_oai):
//   g = min(gate, limit), u = clamp(up, -limit, limit), y = g * sigmoid(alpha * g) * (u + 1)
// gate and up may be two views of one buffer; y may alias either.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer G { float gate[]; };
layout(std430, binding = 1) readonly buffer U { float up[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { SwigluOaiPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  float g = min(gate[i], p.limit), u = clamp(up[i], -p.limit, p.limit);
  y[i] = g / (1.0 + exp(-p.alpha * g)) * (u + 1.0);
}
