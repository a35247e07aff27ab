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

// dst = src, in 16-byte words (copy_words.comp): the copy bandwidth yardstick of vkllm-bench.
// Both views hold the same whole number of words (at most 2^32 - 1 of them); its reference is the
// source itself.
void copy_words(Stream& s, BufferView src, BufferView dst);

}  // namespace vkllm::ops
