// Entry points of the copies: strided f32 slices, and whole buffers in 16-byte words.
#include "ops_copy.h"

#include <fmt/format.h>

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

void copy_words(Stream& s, BufferView src, BufferView dst) {
  ENSURE(src.size == dst.size && src.size % 16 == 0,
         fmt::format("copy_words: {} and {} bytes: the same whole number of 16-byte words", src.size, dst.size));
  uint64_t n = src.size / 16;
  ENSURE(n < (1ull << 32), "copy_words: more than 2^32 - 1 words");
  if (n == 0) return;
  constexpr uint32_t kWordsPerThread = 4;  // copy_words.comp's PER
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::copy_words, {wg}, {.reads = {src}, .writes = {dst}}, push::CopyWordsPush{.n_words = uint32_t(n)},
             grid(ceil_div(n, uint64_t(wg) * kWordsPerThread)));
}

}  // namespace vkllm::ops
