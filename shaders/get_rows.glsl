#version 450
#extension GL_GOOGLE_include_directive : require
// Row gather (token embedding lookup), the body of the get_rows_<type> variants (CMakeLists.txt):
//   y(n_ids, K) f32 = rows ids[i] of the table, dequantised (push_matmul.h GetRowsPush).
// Workgroup (x, i) writes runs of 8 values x·WG .. of output row i; the K % 8 tail of float rows
// goes to workgroup x = 0. Bindings: 0 table (stored type), 1 ids int32, 2 y f32.
#extension GL_EXT_spirv_intrinsics : require
#include "push.h"
#include "quant.glsl"

// Values come out as stored, f32 subnormals too (MXFP4's scales 2^-127 and 2^-126 make them):
// DenormPreserve for 32-bit floats, which kernel.cpp takes out where the device lacks
// shaderDenormPreserveFloat32 (such a driver may flush them: docs/design.md, Numerics).
spirv_execution_mode(capabilities = [4464], 4459, 32);

layout(constant_id = 0) const uint WG = 128;
layout(local_size_x_id = 0) in;

layout(std430, binding = 1) readonly restrict buffer Ids { int ids[]; };
layout(std430, binding = 2) writeonly restrict buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { GetRowsPush p; };

void main() {
  quant_init(gl_LocalInvocationIndex, WG);
  uint i = gl_WorkGroupID.y, k8 = gl_WorkGroupID.x * WG + gl_LocalInvocationIndex;
  int id = ids[i];
  bool here = id >= int(p.row0) && id < int(p.row0 + p.n_rows);
  bool outside = id < 0 || id >= int(p.total_rows);
  if (!here && !(outside && p.row0 == 0)) return;  // another dispatch owns this row
  uint row_at = here ? uint(id - int(p.row0)) * row_size(p.K) : 0;
  uint out0 = i * p.K;
  if (k8 < p.K / 8) {
    vec4 lo = vec4(0.0), hi = vec4(0.0);
    if (here) dequant8(row_at, k8, lo, hi);
    for (uint j = 0; j < 4; ++j) {
      y[out0 + 8 * k8 + j] = lo[j];
      y[out0 + 8 * k8 + 4 + j] = hi[j];
    }
  }
#ifdef W_FLOAT
  uint k = (p.K & ~7u) + gl_LocalInvocationIndex;
  if (gl_WorkGroupID.x == 0 && k < p.K) y[out0 + k] = here ? dequant1(row_at, k) : 0.0;
#endif
}
