// RecurrentCache: the memory of the linear-attention (Gated DeltaNet) layers of hybrid models,
// beside the KV cache. A sequence keeps, per linear layer, the conv's last kernel - 1 inputs and
// one s x s delta-rule state per value head, in f32: a constant size whatever its length. Like the
// KV cache it has one slot per sequence that runs at once (vkllm serve --parallel).
//
// A recurrent state cannot be cut back to an earlier position as a KV cache can, so each slot also
// has a checkpoint: a copy of its state saved at some length (the end of a turn) that a later
// sequence extending the same tokens resumes from (Engine::truncate, the scheduler's prefix reuse).
// A sequence that starts at position 0 starts from a zero state: the kernels never read it then.
#pragma once
#include <cstdint>
#include <vector>

#include "arch/model_config.h"
#include "buffer.h"

namespace vkllm {

class Context;
class Stream;

class RecurrentCache {
 public:
  RecurrentCache(const Context& ctx, const ModelConfig& config, uint32_t slots);

  // The live states of every slot for linear layer l: conv (slots, kernel - 1, channels) and
  // delta (slots, v_heads, s, s), f32.
  BufferView conv(uint32_t layer) const;
  BufferView delta(uint32_t layer) const;
  uint32_t slots() const { return slots_; }

  // Exact bytes of one sequence's state over all linear layers (ModelConfig agrees), and of the
  // whole cache: every slot's live state and its checkpoint.
  uint64_t bytes_per_sequence() const { return bytes_per_sequence_; }
  uint64_t bytes() const { return 2 * bytes_per_sequence_ * slots_; }

  // Copies slot's live state into its checkpoint, which then stands for the first n tokens.
  void save(Stream& s, uint32_t slot, uint32_t n);
  // Copies the checkpoint back into the live state; the slot then holds checkpoint(slot) tokens.
  void restore(Stream& s, uint32_t slot) const;
  // How many tokens slot's checkpoint covers; 0 when it has none.
  uint32_t checkpoint(uint32_t slot) const { return saved_.at(slot); }
  void forget(uint32_t slot) { saved_.at(slot) = 0; }

 private:
  struct Layer {
    int buffer = -1;  // index into buffers_; -1 for an attention layer
  };
  uint64_t conv_bytes(uint32_t slots) const;   // the conv part of `slots` states of one layer
  uint64_t delta_bytes(uint32_t slots) const;  // the delta part
  uint64_t delta_offset() const;               // where the delta part starts in a layer's buffer
  // The (slot, part) region of a layer's buffer; checkpoint slots follow the live ones.
  BufferView part(uint32_t layer, bool delta, uint32_t slot, uint32_t count) const;

  uint32_t slots_;
  uint64_t conv_floats_, delta_floats_;  // per sequence and layer
  uint64_t alignment_, bytes_per_sequence_ = 0;
  std::vector<Layer> layers_;
  std::vector<Buffer> buffers_;  // per linear layer: conv of 2·slots, then delta of 2·slots
  std::vector<uint32_t> saved_;  // per slot: tokens its checkpoint covers
};

}  // namespace vkllm
