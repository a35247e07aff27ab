// Entry points of the elementwise and row kernels.
#include "ops_elementwise.h"

#include "context.h"
#include "push.h"

namespace vkllm::ops {

void add(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n) {
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::add, {wg}, {.reads = {a, b}, .writes = {y}}, push::AddPush{n}, grid(ceil_div(n, wg)));
}

void rmsnorm(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps) {
  const Profile& p = s.context().profile();
  s.dispatch(spirv::rmsnorm, {p.wg_size, p.subgroup_ops}, {.reads = {x, w}, .writes = {y}},
             push::RmsnormPush{rows, dim, eps}, grid(rows));
}

}  // namespace vkllm::ops
