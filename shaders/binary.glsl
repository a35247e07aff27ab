// Body of the binary elementwise kernels: y[i] = OP(a[i], b[i % nb]), i < n. The including .comp
// defines OP(a, b). nb = n is the plain elementwise form; nb = dim broadcasts a row b(dim) over
// the rows of a(rows, dim). y may alias a.
#include "grid.glsl"
#include "push.h"

layout(constant_id = 0) const uint WG = 256;
layout(local_size_x_id = 0) in;

layout(std430, binding = 0) readonly buffer A { float a[]; };
layout(std430, binding = 1) readonly buffer B { float b[]; };
layout(std430, binding = 2) writeonly buffer Y { float y[]; };
layout(push_constant) uniform PushBlock { BinaryPush p; };

void main() {
  uint i = thread_index(WG);
  if (i >= p.n) return;
  uint j = p.nb == p.n ? i : i % p.nb;  // skip the division in the common elementwise case
  y[i] = OP(a[i], b[j]);
}
