// Batch: the tokens of one forward step gathered from running sequences (continuous batching):
// the scheduler adds the decode token of each sequence that has sampled, then prefill chunks of
// the ones still reading their prompt, up to a token budget. Each chunk remembers its sequence,
// so the step's logits rows go back to the right one.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "engine/sequence.h"
#include "graph/transformer.h"

namespace vkllm {

class Batch {
 public:
  // mrope: the model places image tokens on their grid (text after an image then turns at
  // shifted positions, Sequence::rope_shift).
  explicit Batch(uint32_t max_tokens, bool mrope = false) : max_tokens_(max_tokens), mrope_(mrope) {}

  // Adds as many of the sequence's pending text tokens (those before its next image) as the
  // budget leaves (all of them when `whole` and they fit, else none); returns how many. The
  // sequence must not change until the step has run.
  uint32_t add(uint32_t slot, Sequence& seq, bool whole = false);
  uint32_t tokens() const { return tokens_; }
  uint32_t room() const { return max_tokens_ - tokens_; }
  bool empty() const { return chunks_.empty(); }
  std::span<const SeqChunk> chunks() const { return chunks_; }
  Sequence& sequence(size_t chunk) const { return *owners_[chunk]; }
  void clear();

 private:
  uint32_t max_tokens_, tokens_ = 0;
  bool mrope_;
  std::vector<SeqChunk> chunks_;
  std::vector<Sequence*> owners_;
};

}  // namespace vkllm
