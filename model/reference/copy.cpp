// Reference strided copy.
#include "reference/copy.h"

namespace vkllm::ref {

void copy_strided(float* dst, const float* src, const CopySpec& s) {
  for (size_t r = 0; r < s.rows; ++r)
    for (size_t c = 0; c < s.cols; ++c)
      for (size_t i = 0; i < s.len; ++i)
        dst[r * s.dst_row_stride + c * s.dst_col_stride + s.dst_offset + i] =
            src[r * s.src_row_stride + c * s.src_col_stride + s.src_offset + i];
}

}  // namespace vkllm::ref
