#version 450
#extension GL_GOOGLE_include_directive : require
// Expert matrix-vector products (mixture of experts), the body of the matvec_id_<type> variants
// (CMakeLists.txt): y(n_pairs, M) row p = W[expert of p] (M, K) · x row p / x_div, reading only
// the chosen experts' weights (push_moe.h MatmulIdPush; runtime/ops_moe.h).
// matvec.glsl's scheme (its comment explains RT, TK and the reductions), with workgroup (tile,
// row group in y and z): a tile is up to NT pairs routed to one expert (moe_plan.comp lists them),
// so each unit of that expert's weights is dequantised once for all of them. Decode (one token)
// has one pair per chosen expert; prefill on CPU drivers fills the tiles. The tile is x, the
// fastest grid dimension, as in matmul_id.glsl (why: there).
// Bindings: 0 w (stored type: the experts expert0 .. expert1 - 1), 1 x f32, 2 plan int32, 3 y f32.
#include "grid.glsl"
#include "push.h"
#include "quant.glsl"

#extension GL_KHR_shader_subgroup_basic : require
#extension GL_KHR_shader_subgroup_arithmetic : enable

layout(constant_id = 0) const uint WG = 128;              // a power of two
layout(constant_id = 1) const bool USE_SUBGROUP = true;
layout(constant_id = 2) const uint ROWS = 2;              // rows per workgroup, a power of two
layout(constant_id = 3) const uint NT = 1;                // pairs per tile
layout(constant_id = 4) const bool ALIGNED = false;       // K % 8 == 0 and x_row_stride % 4 == 0
layout(constant_id = 5) const uint RT = 1;                // rows per thread, divides ROWS
const bool WIDE_LOADS = false;                            // (quant_unit.glsl)
layout(local_size_x_id = 0) in;
#include "quant_unit.glsl"

layout(std430, binding = 1) readonly restrict buffer X { float x[]; };
layout(std430, binding = 1) readonly restrict buffer X4 { vec4 x4[]; };
layout(std430, binding = 2) readonly restrict buffer Plan { int plan[]; };
layout(std430, binding = 3) writeonly restrict buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { MatmulIdPush p; };
#include "moe_tile.glsl"

const uint TK = WG * RT / ROWS;  // threads per row group, a power of two
const uint UV = UNIT / 4;        // vec4s per unit
shared float red[RT * NT * WG];
float acc[RT * NT];  // row i, pair n at i·NT + n (global: see matvec.glsl)
uint tile_pair[NT];       // this tile's pairs; past n_valid they repeat the last (never stored)
uint n_valid, expert;

vec4 load_x4(uint i) { return ALIGNED ? x4[i >> 2] : vec4(x[i], x[i + 1], x[i + 2], x[i + 3]); }

uint x_at(uint n, uint k) { return tile_pair[n] / p.x_div * p.x_row_stride + k; }

uint row_start(uint row, uint i) { return (expert * p.M + min(row + i, p.M - 1)) * row_size(p.K); }

void store(uint row, uint n, float v) {
  if (n < n_valid) y[y_at(tile_pair[n], row)] = v;
}

// acc[i·NT + n] += unit u of row + i · unit u of pair n's x (matvec.glsl's accumulate).
void accumulate(uint row, uint u) {
  if (NT <= RT) {
    vec4 xs[NT * UV], v[UV];
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q) xs[n * UV + q] = load_x4(x_at(n, unit_k(u, q)));
    for (uint i = 0; i < RT; ++i) {
      dequant_unit(row_start(row, i), u, v);
      for (uint n = 0; n < NT; ++n)
        for (uint q = 0; q < UV; ++q) acc[i * NT + n] += dot(v[q], xs[n * UV + q]);
    }
  } else {
    vec4 ws[RT * UV], v[UV];
    for (uint i = 0; i < RT; ++i) {
      dequant_unit(row_start(row, i), u, v);
      for (uint q = 0; q < UV; ++q) ws[i * UV + q] = v[q];
    }
    for (uint n = 0; n < NT; ++n)
      for (uint q = 0; q < UV; ++q) {
        vec4 xv = load_x4(x_at(n, unit_k(u, q)));
        for (uint i = 0; i < RT; ++i) acc[i * NT + n] += dot(ws[i * UV + q], xv);
      }
  }
}

void main() {
  quant_init(gl_LocalInvocationIndex, WG);  // before any return: it has a barrier
  bool sg = USE_SUBGROUP && TK > 1 && TK % gl_SubgroupSize == 0;
  uint t = sg ? gl_SubgroupID * gl_SubgroupSize + gl_SubgroupInvocationID : gl_LocalInvocationIndex;
  uint r = t / TK * RT, j = t % TK;
  uint row0 = (gl_WorkGroupID.z * gl_NumWorkGroups.y + gl_WorkGroupID.y) * ROWS;
  uint first;
  if (row0 >= p.M || !read_tile(gl_WorkGroupID.x, NT, expert, first, n_valid)) return;  // uniform
  for (uint n = 0; n < NT; ++n) tile_pair[n] = uint(plan[first + min(n, n_valid - 1)]);
  uint row = row0 + r;
  if (TK == 1 && row >= p.M) return;  // no barriers follow when TK == 1

  for (uint i = 0; i < RT * NT; ++i) acc[i] = 0.0;
  uint n_units = p.K / UNIT;
  for (uint u = j; u < n_units; u += TK) accumulate(row, u);
#ifdef W_FLOAT
  for (uint k = n_units * UNIT + j; k < p.K; k += TK)  // the ragged K % UNIT tail of float rows
    for (uint i = 0; i < RT; ++i) {
      float w = dequant1(row_start(row, i), k);
      for (uint n = 0; n < NT; ++n) acc[i * NT + n] += w * x[x_at(n, k)];
    }
#endif

  if (TK == 1) {
    for (uint i = 0; i < RT; ++i)
      if (row + i < p.M)
        for (uint n = 0; n < NT; ++n) store(row + i, n, acc[i * NT + n]);
    return;
  }
  if (sg) {
    for (uint i = 0; i < RT * NT; ++i) {
      float s = subgroupAdd(acc[i]);
      if (gl_SubgroupInvocationID == 0) red[i * WG + gl_SubgroupID] = s;
    }
    barrier();
    uint per_group = TK / gl_SubgroupSize, g = t / TK;
    if (j == 0)
      for (uint i = 0; i < RT * NT; ++i) {
        float s = 0.0;
        for (uint k = 0; k < per_group; ++k) s += red[i * WG + g * per_group + k];
        acc[i] = s;
      }
  } else {
    for (uint i = 0; i < RT * NT; ++i) red[i * WG + t] = acc[i];
    barrier();
    for (uint s = TK / 2; s > 0; s >>= 1) {
      if (j < s)
        for (uint i = 0; i < RT * NT; ++i) red[i * WG + t] += red[i * WG + t + s];
      barrier();
    }
    for (uint i = 0; i < RT * NT; ++i) acc[i] = red[i * WG + t];
  }
  if (j == 0)
    for (uint i = 0; i < RT; ++i)
      if (row + i < p.M)
        for (uint n = 0; n < NT; ++n) store(row + i, n, acc[i * NT + n]);
}
