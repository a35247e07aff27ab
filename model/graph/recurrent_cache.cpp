// Recurrent-state buffers of the recurrent layers, their byte accounting and checkpoints.
#include "graph/recurrent_cache.h"

#include <fmt/format.h>
#include <algorithm>

#include "align.h"
#include "context.h"
#include "error.h"
#include "stream.h"

namespace vkllm {

RecurrentCache::RecurrentCache(const Context& ctx, const ModelConfig& c, uint32_t slots)
    : slots_(slots), alignment_(ctx.caps().binding_alignment()), saved_(slots, 0) {
  ENSURE(slots > 0, "the recurrent cache needs at least one slot");
  uint64_t range = ctx.caps().max_storage_buffer_range;
  Stream zero(ctx);
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    RecurrentState r = c.recurrent_state(l);
    Layer& layer = layers_.emplace_back(Layer{-1, r.conv_floats(), r.state_floats});
    if (!c.is_recurrent_layer(l)) continue;
    uint64_t widest = 4 * std::max(r.conv_floats(), r.state_floats) * slots;
    ENSURE(widest <= range,
           fmt::format("the recurrent state of layer {} needs {:.0f} MiB for {} slots, more than this device binds at "
                       "once ({:.0f} MiB); use fewer parallel slots (--parallel)",
                       l, widest / 1048576.0, slots, range / 1048576.0));
    layer.buffer = int(buffers_.size());
    bytes_per_sequence_ += 4 * r.floats();
    buffers_.emplace_back(ctx, state_offset(layer) + std::max<uint64_t>(4, 4 * r.state_floats * 2 * slots),
                          Memory::Device, fmt::format("recurrent state {}", l));
    zero.fill(buffers_.back().view(), 0);
  }
  zero.submit_wait();
  ENSURE(bytes_per_sequence_ == c.recurrent_bytes_per_sequence(), "recurrent state bytes disagree with the config");
}

uint64_t RecurrentCache::state_offset(const Layer& l) const {
  return align_up(4 * l.conv_floats * 2 * slots_, alignment_);
}

BufferView RecurrentCache::part(uint32_t l, bool second, uint32_t slot, uint32_t count) const {
  ENSURE(l < layers_.size() && layers_[l].buffer >= 0, fmt::format("layer {} has no recurrent state", l));
  const Layer& layer = layers_[l];
  const Buffer& b = buffers_[layer.buffer];
  if (!second) return b.view(4 * layer.conv_floats * slot, 4 * layer.conv_floats * count);
  ENSURE(layer.state_floats > 0, fmt::format("layer {} keeps no state beside its conv's", l));
  return b.view(state_offset(layer) + 4 * layer.state_floats * slot, 4 * layer.state_floats * count);
}

BufferView RecurrentCache::conv(uint32_t l) const { return part(l, false, 0, slots_); }
BufferView RecurrentCache::state(uint32_t l) const { return part(l, true, 0, slots_); }

void RecurrentCache::save(Stream& s, uint32_t slot, uint32_t n) {
  ENSURE(slot < slots_, fmt::format("slot {} is not one of the {} slots", slot, slots_));
  for (uint32_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l].buffer < 0) continue;
    s.copy(part(l, false, slot, 1), part(l, false, slots_ + slot, 1));
    if (layers_[l].state_floats) s.copy(part(l, true, slot, 1), part(l, true, slots_ + slot, 1));
  }
  saved_[slot] = n;
}

void RecurrentCache::restore(Stream& s, uint32_t slot) const {
  ENSURE(slot < slots_ && saved_[slot] > 0, fmt::format("slot {} has no checkpoint", slot));
  for (uint32_t l = 0; l < layers_.size(); ++l) {
    if (layers_[l].buffer < 0) continue;
    s.copy(part(l, false, slots_ + slot, 1), part(l, false, slot, 1));
    if (layers_[l].state_floats) s.copy(part(l, true, slots_ + slot, 1), part(l, true, slot, 1));
  }
}

}  // namespace vkllm
