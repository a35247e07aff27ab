// Gathering a step's tokens from sequences.
#include "engine/batch.h"

#include <algorithm>

namespace vkllm {

uint32_t Batch::add(uint32_t slot, Sequence& seq, bool whole) {
  std::span<const int32_t> pending = seq.pending_text();
  uint32_t n = uint32_t(std::min<size_t>(pending.size(), room()));
  if (n == 0 || (whole && n < pending.size())) return 0;
  chunks_.push_back(
      {.slot = slot, .pos0 = seq.n_cached(), .tokens = pending.first(n), .rope_shift = seq.rope_shift(mrope_)});
  owners_.push_back(&seq);
  tokens_ += n;
  return n;
}

void Batch::clear() {
  chunks_.clear();
  owners_.clear();
  tokens_ = 0;
}

}  // namespace vkllm
