#version 450
#extension GL_GOOGLE_include_directive : require
// Average pooling of a grid of rows over k x k blocks (the gemma projectors' pooling): one thread
// per output value, the block's k² values summed in f32 in row-major order, then divided by k².
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { PoolPush p; };

void main() {
  uint i = thread_index(WG);
  uint ox = p.px / p.k, oy = p.py / p.k;
  if (i >= ox * oy * p.n) return;
  uint c = i % p.n, cell = i / p.n, X = cell % ox, Y = cell / ox;
  float s = 0.0;
  for (uint dy = 0u; dy < p.k; ++dy)
    for (uint dx = 0u; dx < p.k; ++dx) s += x[((Y * p.k + dy) * p.px + X * p.k + dx) * p.n + c];
  y[i] = s / float(p.k * p.k);
}
