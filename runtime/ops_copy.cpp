// Entry point of the strided copy.
#include "ops_copy.h"

#include "check.h"
#include "context.h"

namespace vkllm::ops {

void copy_strided(Stream& s, BufferView src, BufferView dst, const push::CopyPush& p) {
  uint64_t n = uint64_t(p.rows) * p.cols * p.len;
  ENSURE(n < (1ull << 32), "copy_strided: more than 2^32 values");
  auto last = [&](uint32_t row_stride, uint32_t col_stride, uint32_t offset) {
    return (uint64_t(p.rows - 1) * row_stride + uint64_t(p.cols - 1) * col_stride + offset + p.len) * 4;
  };
  if (n == 0) return;
  ENSURE(last(p.src_row_stride, p.src_col_stride, p.src_offset) <= src.size &&
             last(p.dst_row_stride, p.dst_col_stride, p.dst_offset) <= dst.size,
         "copy_strided: the slices reach past the end of a buffer");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::copy_strided, {wg}, {.reads = {src}, .writes = {dst}}, p, grid(ceil_div(n, wg)));
}

}  // namespace vkllm::ops
