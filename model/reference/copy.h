// CPU reference for the strided copy: the same index formula as ops::copy_strided, in loops.
#pragma once
#include <cstddef>

namespace vkllm::ref {

struct CopySpec {
  size_t rows = 0, cols = 0, len = 0;
  size_t src_row_stride = 0, src_col_stride = 0, src_offset = 0;
  size_t dst_row_stride = 0, dst_col_stride = 0, dst_offset = 0;
};

void copy_strided(float* dst, const float* src, const CopySpec& s);

}  // namespace vkllm::ref
