// KV-cache allocation and its exact byte accounting.
#include "graph/kv_cache.h"

#include <fmt/format.h>

#include "align.h"
#include "context.h"
#include "error.h"
#include "stream.h"

namespace vkllm {

KvCache::KvCache(const Context& ctx, const ModelConfig& c, uint32_t n_ctx, DType type, uint32_t slots)
    : mla_(c.attention_kind() == AttentionKind::MLA), n_layers_(c.n_layers), n_ctx_(n_ctx), slots_(slots), type_(type) {
  ENSURE(n_ctx > 0, "the context length must be at least 1");
  ENSURE(slots > 0, "the KV cache needs at least one slot");
  ENSURE(uint64_t(n_ctx) * slots <= INT32_MAX, "the KV cache has more rows than positions can address");
  heads_ = mla_ ? 1 : c.n_kv_heads;
  k_width_ = mla_ ? c.mla.kv_lora_rank + c.mla.qk_rope_head_dim : c.head_dim;
  v_width_ = mla_ ? c.mla.kv_lora_rank : c.v_head_dim;
  check_type(c);
  uint64_t k_bytes = k_view_bytes();
  uint64_t v_bytes = mla_ ? 0 : v_view_bytes();
  uint64_t range = ctx.caps().max_storage_buffer_range;
  ENSURE(k_bytes <= range && v_bytes <= range,
         fmt::format("the KV cache of one layer needs {:.0f} MiB, more than this device binds at once "
                     "({:.0f} MiB); use a smaller context (--ctx){}",
                     std::max(k_bytes, v_bytes) / 1048576.0, range / 1048576.0,
                     slots > 1 ? " or fewer parallel slots (--parallel)" : ""));
  uint64_t v_offset = align_up(k_bytes, ctx.caps().binding_alignment());
  Stream zero(ctx);
  for (uint32_t l = 0; l < n_layers_; ++l) {
    buffer_of_.push_back(c.is_linear_layer(l) ? -1 : int(layers_.size()));
    if (c.is_linear_layer(l)) continue;
    layers_.emplace_back(ctx, v_bytes ? v_offset + v_bytes : k_bytes, Memory::Device, fmt::format("kv cache {}", l));
    zero.fill(layers_.back().view(), 0);  // unwritten positions read as 0, never NaN
  }
  zero.submit_wait();
}

const Buffer& KvCache::layer(uint32_t l) const {
  ENSURE(l < n_layers_ && buffer_of_[l] >= 0, fmt::format("layer {} has no KV cache (it is linear attention)", l));
  return layers_[buffer_of_[l]];
}

BufferView KvCache::k(uint32_t l) const { return layer(l).view(0, k_view_bytes()); }

BufferView KvCache::v(uint32_t l) const {
  if (mla_) return k(l);
  uint64_t bytes = v_view_bytes();
  const Buffer& b = layer(l);
  return b.view(b.size() - bytes, bytes);
}

uint64_t KvCache::bytes_per_token() const {
  uint64_t per_layer =
      mla_ ? row_bytes(type_, k_width_) : heads_ * (row_bytes(type_, k_width_) + row_bytes(type_, v_width_));
  return per_layer * layers_.size();
}

// --- the storage type and its byte accounting: rows of k_width_ / v_width_ values, each row
// whole blocks of 32 for Q8_0 / Q4_0 (docs/formats.md §7)

void KvCache::check_type(const ModelConfig& c) const {
  ENSURE(type_ == DType::F16 || type_ == DType::F32 || type_ == DType::Q8_0 || type_ == DType::Q4_0,
         fmt::format("the KV cache is stored as f16, f32, q8_0 or q4_0, not {}", info(type_).name));
  uint32_t block = info(type_).block_values;
  // MLA's latent row is written in two parts (c, then k_pe at column kv_lora_rank): both whole blocks.
  uint32_t part = mla_ ? c.mla.kv_lora_rank : v_width_;
  ENSURE(k_width_ % block == 0 && part % block == 0,
         fmt::format("a {} KV cache needs head dims that are multiples of {}; this model's {} are {} and {}",
                     info(type_).name, block, mla_ ? "latent and rope dims" : "K and V head dims",
                     mla_ ? c.mla.kv_lora_rank : k_width_, mla_ ? c.mla.qk_rope_head_dim : v_width_));
}

uint64_t KvCache::k_view_bytes() const { return uint64_t(heads_) * rows() * row_bytes(type_, k_width_); }
uint64_t KvCache::v_view_bytes() const { return uint64_t(heads_) * rows() * row_bytes(type_, v_width_); }

}  // namespace vkllm
