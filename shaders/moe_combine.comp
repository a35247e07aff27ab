#version 450
#extension GL_GOOGLE_include_directive : require
// x(n_tokens, dim) += sum_j weights[t, j] * y[t * n_used + j] + shared[t] * g[t], one thread per
// element; g = sigmoid(gate[t]) (Qwen2-MoE's shared-expert gate), or 1 without a gate. The
// experts' outputs y are (n_tokens * n_used, dim) in slot order; the sum runs in slot order.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const bool HAS_SHARED = false;
layout(constant_id = 2) const bool HAS_GATE = false;
layout(constant_id = 3) const bool ACCUMULATE = true;  // false: x = the sum (x_in unread)
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer Y { float y[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Shared { float shared_out[]; };  // bound always
layout(std430, binding = 3) readonly buffer Gate { float gate[]; };          // bound always
// x is bound twice, read then written, so the arena planner sees the update read the residual.
layout(std430, binding = 4) readonly buffer XIn { float x_in[]; };
layout(std430, binding = 5) writeonly buffer XOut { float x[]; };
layout(push_constant) uniform PushBlock { MoeCombinePush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n_tokens * p.dim) return;
  uint t = i / p.dim, d = i % p.dim;
  float sum = 0.0;
  for (uint j = 0; j < p.n_used; ++j) sum += w[t * p.n_used + j] * y[(t * p.n_used + j) * p.dim + d];
  if (HAS_SHARED) {
    float g = HAS_GATE ? 1.0 / (1.0 + exp(-clamp(gate[t], -80.0, 80.0))) : 1.0;
    sum += shared_out[i] * g;
  }
  x[i] = ACCUMULATE ? x_in[i] + sum : sum;
}
