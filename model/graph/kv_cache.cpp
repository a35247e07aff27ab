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
  ENSURE(type == DType::F16 || type == DType::F32, "the KV cache is stored as f16 or f32");
  ENSURE(n_ctx > 0, "the context length must be at least 1");
  ENSURE(slots > 0, "the KV cache needs at least one slot");
  ENSURE(uint64_t(n_ctx) * slots <= INT32_MAX, "the KV cache has more rows than positions can address");
  heads_ = mla_ ? 1 : c.n_kv_heads;
  k_width_ = mla_ ? c.mla.kv_lora_rank + c.mla.qk_rope_head_dim : c.head_dim;
  v_width_ = mla_ ? c.mla.kv_lora_rank : c.v_head_dim;
  uint64_t elem = type == DType::F16 ? 2 : 4;
  uint64_t k_bytes = uint64_t(heads_) * rows() * k_width_ * elem;
  uint64_t v_bytes = mla_ ? 0 : uint64_t(heads_) * rows() * v_width_ * elem;
  uint64_t range = ctx.caps().max_storage_buffer_range;
  ENSURE(k_bytes <= range && v_bytes <= range,
         fmt::format("the KV cache of one layer needs {:.0f} MiB, more than this device binds at once "
                     "({:.0f} MiB); use a smaller context (--ctx){}",
                     std::max(k_bytes, v_bytes) / 1048576.0, range / 1048576.0,
                     slots > 1 ? " or fewer parallel slots (--parallel)" : ""));
  uint64_t v_offset = align_up(k_bytes, ctx.caps().binding_alignment());
  Stream zero(ctx);
  for (uint32_t l = 0; l < n_layers_; ++l) {
    layers_.emplace_back(ctx, v_bytes ? v_offset + v_bytes : k_bytes, Memory::Device, fmt::format("kv cache {}", l));
    zero.fill(layers_.back().view(), 0);  // unwritten positions read as 0, never NaN
  }
  zero.submit_wait();
}

BufferView KvCache::k(uint32_t layer) const {
  uint64_t elem = type_ == DType::F16 ? 2 : 4;
  return layers_.at(layer).view(0, uint64_t(heads_) * rows() * k_width_ * elem);
}

BufferView KvCache::v(uint32_t layer) const {
  if (mla_) return k(layer);
  uint64_t elem = type_ == DType::F16 ? 2 : 4;
  uint64_t bytes = uint64_t(heads_) * rows() * v_width_ * elem;
  const Buffer& b = layers_.at(layer);
  return b.view(b.size() - bytes, bytes);
}

uint64_t KvCache::bytes_per_token() const {
  uint64_t elem = type_ == DType::F16 ? 2 : 4;
  uint64_t per_layer = mla_ ? k_width_ : uint64_t(heads_) * (k_width_ + v_width_);
  return per_layer * elem * n_layers_;
}

}  // namespace vkllm
