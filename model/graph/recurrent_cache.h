// RecurrentCache: the memory of the recurrent layers of hybrid models (Gated DeltaNet, Mamba-2, a
// short conv), beside the KV cache. A sequence keeps, per recurrent layer, the conv's last
// kernel - 1 inputs and, where the mixer has one, a second state (Gated DeltaNet: one s x s
// delta-rule state per value head; Mamba-2: a head_dim x d_state state per head), in f32, sized
// by ModelConfig::recurrent_state: a constant size whatever its length. Like the KV cache it has
// one slot per sequence that runs at once (vkllm serve --parallel).
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

  // The live states of every slot for recurrent layer l: conv (slots, kernel - 1, channels) and
  // the second state (slots, ModelConfig::recurrent_state(l).state_floats; DeltaNet: v_heads, s,
  // s; Mamba-2: heads, head_dim, d_state), f32. A layer without a second state has no state().
  BufferView conv(uint32_t layer) const;
  BufferView state(uint32_t layer) const;
  uint32_t slots() const { return slots_; }

  // Exact bytes of one sequence's state over all recurrent layers (ModelConfig agrees), and of the
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
    int buffer = -1;                             // index into buffers_; -1 for a layer without recurrent state
    uint64_t conv_floats = 0, state_floats = 0;  // per sequence
  };
  // The (slot, part) region of a layer's buffer: its conv states of 2·slots, then (aligned) its
  // second states of 2·slots; checkpoint slots follow the live ones.
  BufferView part(uint32_t layer, bool second, uint32_t slot, uint32_t count) const;
  uint64_t state_offset(const Layer& l) const;

  uint32_t slots_;
  uint64_t alignment_, bytes_per_sequence_ = 0;
  std::vector<Layer> layers_;
  std::vector<Buffer> buffers_;  // per recurrent layer
  std::vector<uint32_t> saved_;  // per slot: tokens its checkpoint covers
};

}  // namespace vkllm
