#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// The Mamba-2 selective scan token by token (ref::ssm_scan), for decode and any number of tokens.
// Per (sequence, head h) the state is a P x N matrix S (row i a value of the head, column n a
// state index) at state[((slot * heads + h) * P + i) * N + n]; head h reads group h / GROUP of B
// and C. Per token, with dt' = softplus(dt + dt_bias[h]) and decay = e^(dt' A[h]):
//   S[i][n] = decay S[i][n] + B[n] x[i] dt',   y[i] = (S[i] . C + D[h] x[i]) silu(z[i])
// Work split: workgroup (x, y, z) = (block of R = WG / T rows, head, sequence). T threads share a
// row, thread c owning columns c, c + T, ... (NC = N / T of them, in registers); their partial
// sums meet in shared memory (a tree over the T threads of each row).
//   xbc: the conv output, token t's x at t * x_stride (heads of P), B at b_offset, C at c_offset
//   proj: the input projection, token t's dt at t * dt_stride + dt_offset, z at ... + z_offset
//   dt_bias, a, d: (heads)   step: StepParams per sequence
//   state: (slots, heads, P, N), read (unless pos0 = 0: zeros) and written   y: (n_tokens, heads, P)
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 128;
layout(constant_id = 1) const uint P = 64;    // values per head
layout(constant_id = 2) const uint N = 128;   // state size
layout(constant_id = 3) const uint T = 16;    // threads per row: a power of two dividing N and WG
layout(constant_id = 4) const uint GROUP = 1; // heads per group of B and C
layout(constant_id = 5) const bool GATE = true;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer XBC { float xbc[]; };
layout(std430, binding = 1) readonly buffer Proj { float proj[]; };
layout(std430, binding = 2) readonly buffer DtBias { float dt_bias[]; };
layout(std430, binding = 3) readonly buffer A { float a[]; };
layout(std430, binding = 4) readonly buffer D { float d[]; };
layout(std430, binding = 5) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 6) buffer State { float state[]; };
layout(std430, binding = 7) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { SsmScanPush p; };

#include "activation.glsl"
#include "delta_rule.glsl"

const uint R = WG / T, NC = N / T;
shared float red[WG];

void main() {
  uint tid = gl_LocalInvocationIndex, il = tid / T, c = tid % T;
  uint i = gl_WorkGroupID.x * R + il, h = gl_WorkGroupID.y;
  Seq sq = find_seq(gl_WorkGroupID.z, 1);
  if (sq.n == 0) return;  // uniform across the workgroup
  bool live = i < P;      // rows past P (a last partial block) only join the barriers
  uint row = h * P + (live ? i : 0), st = (sq.slot * p.heads * P + row) * N;
  uint g = (h / GROUP) * N;
  float s[NC];
  [[unroll]] for (uint e = 0; e < NC; ++e) s[e] = sq.pos0 == 0 || !live ? 0.0 : state[st + c + e * T];
  float dtb = dt_bias[h], ah = a[h], dh = d[h];

  for (uint t = 0; t < sq.n; ++t) {
    uint tok = sq.token0 + t, xr = tok * p.x_stride, pr = tok * p.dt_stride;
    float dt = softplus(proj[pr + p.dt_offset + h] + dtb);
    float decay = exp(dt * ah);
    float xv = xbc[xr + row], xdt = xv * dt;
    float part = 0.0;
    [[unroll]] for (uint e = 0; e < NC; ++e) {
      uint n = g + c + e * T;
      s[e] = s[e] * decay + xbc[xr + p.b_offset + n] * xdt;
      part += s[e] * xbc[xr + p.c_offset + n];
    }
    red[tid] = part;
    barrier();
    [[unroll]] for (uint off = T / 2; off > 0; off >>= 1) {
      if (c < off) red[tid] += red[tid + off];
      barrier();
    }
    float sum = red[il * T];
    barrier();  // red is rewritten by the next token
    if (live && c == 0) {
      float v = sum + dh * xv;
      y[tok * p.heads * P + row] = GATE ? v * silu(proj[pr + p.z_offset + row]) : v;
    }
  }
  if (live) [[unroll]] for (uint e = 0; e < NC; ++e) state[st + c + e * T] = s[e];
}
