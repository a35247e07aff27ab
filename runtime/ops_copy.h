// Layout moves: strided copies of f32 slices between buffers (see ops.h for the conventions).
#pragma once
#include "buffer.h"
#include "push.h"
#include "stream.h"

namespace vkllm::ops {

// For r < rows, c < cols, i < len (floats):
//   dst[r·dst_row_stride + c·dst_col_stride + dst_offset + i] = src[r·src_row_stride + c·src_col_stride + src_offset +
//   i]
// e.g. the 64 rope values of every (token, head) of an MLA query into a packed buffer.
void copy_strided(Stream& s, BufferView src, BufferView dst, const push::CopyPush& p);

}  // namespace vkllm::ops
