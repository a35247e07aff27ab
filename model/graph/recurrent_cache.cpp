// Recurrent-state buffers of the linear-attention layers, their byte accounting and checkpoints.
#include "graph/recurrent_cache.h"

#include <fmt/format.h>

#include "align.h"
#include "context.h"
#include "error.h"
#include "stream.h"

namespace vkllm {

RecurrentCache::RecurrentCache(const Context& ctx, const ModelConfig& c, uint32_t slots)
    : slots_(slots), alignment_(ctx.caps().binding_alignment()), saved_(slots, 0) {
  ENSURE(slots > 0, "the recurrent cache needs at least one slot");
  const LinearAttentionConfig& a = c.linear;
  conv_floats_ = uint64_t(a.conv_kernel - 1) * a.conv_channels();
  delta_floats_ = uint64_t(a.v_heads) * a.head_dim * a.head_dim;
  uint64_t range = ctx.caps().max_storage_buffer_range;
  ENSURE(delta_bytes(slots) <= range,
         fmt::format("the recurrent state of one layer needs {:.0f} MiB for {} slots, more than this device binds at "
                     "once ({:.0f} MiB); use fewer parallel slots (--parallel)",
                     delta_bytes(slots) / 1048576.0, slots, range / 1048576.0));
  Stream zero(ctx);
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    layers_.push_back({c.is_linear_layer(l) ? int(buffers_.size()) : -1});
    if (!c.is_linear_layer(l)) continue;
    bytes_per_sequence_ += 4 * (conv_floats_ + delta_floats_);
    buffers_.emplace_back(ctx, delta_offset() + delta_bytes(2 * slots), Memory::Device,
                          fmt::format("recurrent state {}", l));
    zero.fill(buffers_.back().view(), 0);
  }
  zero.submit_wait();
  ENSURE(bytes_per_sequence_ == c.recurrent_bytes_per_sequence(), "recurrent state bytes disagree with the config");
}

uint64_t RecurrentCache::conv_bytes(uint32_t slots) const { return 4 * conv_floats_ * slots; }
uint64_t RecurrentCache::delta_bytes(uint32_t slots) const { return 4 * delta_floats_ * slots; }
uint64_t RecurrentCache::delta_offset() const { return align_up(conv_bytes(2 * slots_), alignment_); }

BufferView RecurrentCache::part(uint32_t l, bool delta, uint32_t slot, uint32_t count) const {
  ENSURE(l < layers_.size() && layers_[l].buffer >= 0, fmt::format("layer {} has no recurrent state", l));
  const Buffer& b = buffers_[layers_[l].buffer];
  return delta ? b.view(delta_offset() + delta_bytes(slot), delta_bytes(count))
               : b.view(conv_bytes(slot), conv_bytes(count));
}

BufferView RecurrentCache::conv(uint32_t l) const { return part(l, false, 0, slots_); }
BufferView RecurrentCache::delta(uint32_t l) const { return part(l, true, 0, slots_); }

void RecurrentCache::save(Stream& s, uint32_t slot, uint32_t n) {
  ENSURE(slot < slots_, fmt::format("slot {} is not one of the {} slots", slot, slots_));
  for (uint32_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l].buffer < 0) continue;
    for (bool delta : {false, true}) s.copy(part(l, delta, slot, 1), part(l, delta, slots_ + slot, 1));
  }
  saved_[slot] = n;
}

void RecurrentCache::restore(Stream& s, uint32_t slot) const {
  ENSURE(slot < slots_ && saved_[slot] > 0, fmt::format("slot {} has no checkpoint", slot));
  for (uint32_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l].buffer < 0) continue;
    for (bool delta : {false, true}) s.copy(part(l, delta, slots_ + slot, 1), part(l, delta, slot, 1));
  }
}

}  // namespace vkllm
