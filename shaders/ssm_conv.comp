#version 450
#extension GL_GOOGLE_include_directive : require
#extension GL_EXT_control_flow_attributes : require
// Depthwise causal conv1d (+ bias with BIAS, SiLU with SILU) over every sequence of a step, continuing from the state of
// each sequence's slot (ref::ssm_conv). Workgroup (x, y) = (block of WG channels, sequence y);
// one thread per channel walks the sequence's tokens with the K-tap window in registers:
//   u = state ++ x,  y[t][c] = silu(sum_j w[c][j] u[t + j][c]),  state = the last K-1 rows of u.
//   x: token t at t * token_stride + c   w: (channels, K)   step: StepParams per sequence
//   state: (slots, K - 1, channels), read (unless pos0 = 0: zeros) and written   y: (n_tokens, channels)
#include "activation.glsl"
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(constant_id = 1) const uint K = 4;  // taps, at least 2
layout(constant_id = 2) const bool BIAS = false;
layout(constant_id = 3) const bool SILU = true;
// LFM2's gated short conv: token t's row holds b, c and x (channels each); the conv runs over
// b * x (the state keeps those products) and y = c * conv.
layout(constant_id = 4) const bool GATED = false;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer X { float x[]; };
layout(std430, binding = 1) readonly buffer W { float w[]; };
layout(std430, binding = 2) readonly buffer Step { StepParams seqs[]; };
layout(std430, binding = 3) readonly buffer Bias { float bias[]; };  // (channels), bound when unused
layout(std430, binding = 4) buffer State { float state[]; };
layout(std430, binding = 5) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { SsmConvPush p; };

void main() {
  uint c = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex, seq = gl_WorkGroupID.y;
  if (c >= p.channels || seq >= p.n_seqs) return;
  uint token0 = 0;
  for (uint s = 0; s < seq; ++s) token0 += seqs[s].n_tokens;
  StepParams sp = seqs[seq];
  if (sp.n_tokens == 0 || token0 >= p.n_tokens || sp.slot >= p.slots) return;
  uint n = min(sp.n_tokens, p.n_tokens - token0);

  float taps[K], win[K - 1];  // win: the previous K - 1 inputs, oldest first
  [[unroll]] for (uint j = 0; j < K; ++j) taps[j] = w[c * K + j];
  uint st = sp.slot * (K - 1) * p.channels + c;
  [[unroll]] for (uint j = 0; j < K - 1; ++j) win[j] = sp.pos0 == 0 ? 0.0 : state[st + j * p.channels];
  for (uint t = 0; t < n; ++t) {
    uint r = (token0 + t) * p.token_stride + c;
    float xt = GATED ? x[r] * x[r + 2 * p.channels] : x[r];
    float sum = 0.0;
    [[unroll]] for (uint j = 0; j < K - 1; ++j) sum += taps[j] * win[j];
    sum += taps[K - 1] * xt;
    if (BIAS) sum += bias[c];
    if (SILU) sum = silu(sum);
    y[(token0 + t) * p.channels + c] = GATED ? x[r + p.channels] * sum : sum;
    [[unroll]] for (uint j = 0; j + 1 < K - 1; ++j) win[j] = win[j + 1];
    win[K - 2] = xt;
  }
  [[unroll]] for (uint j = 0; j < K - 1; ++j) state[st + j * p.channels] = win[j];
}
