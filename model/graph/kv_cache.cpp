// KV-cache allocation and its exact byte accounting.
#include "graph/kv_cache.h"

#include <fmt/format.h>

#include <algorithm>

#include "align.h"
#include "context.h"
#include "error.h"
#include "stream.h"

namespace vkllm {

namespace {

KvCache::Geometry geometry_of(const ModelConfig& c, uint32_t layer) {
  if (c.attention_kind() == AttentionKind::MLA)
    return {1, c.mla.kv_lora_rank + c.mla.qk_rope_head_dim, c.mla.kv_lora_rank};
  LayerAttention a = c.attention_of(layer);
  return {a.n_kv_heads, a.head_dim, a.v_head_dim};
}

}  // namespace

std::vector<KvCache::Geometry> KvCache::geometries(const ModelConfig& c) {
  std::vector<Geometry> out;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (c.has_attention(l) && std::find(out.begin(), out.end(), geometry_of(c, l)) == out.end())
      out.push_back(geometry_of(c, l));
  return out;
}

KvCache::KvCache(const Context& ctx, const ModelConfig& c, uint32_t n_ctx, DType type, uint32_t slots)
    : mla_(c.attention_kind() == AttentionKind::MLA), n_layers_(c.n_layers), n_ctx_(n_ctx), slots_(slots), type_(type) {
  ENSURE(n_ctx > 0, "the context length must be at least 1");
  ENSURE(slots > 0, "the KV cache needs at least one slot");
  ENSURE(uint64_t(n_ctx) * slots <= INT32_MAX, "the KV cache has more rows than positions can address");
  geometry_.resize(n_layers_);
  for (uint32_t l = 0; l < n_layers_; ++l) mixers_.push_back(c.mixer(l));
  for (uint32_t l = 0; l < n_layers_; ++l) {
    if (!c.has_attention(l)) continue;
    geometry_[l] = geometry_of(c, l);
    check_type(c, geometry_[l]);
  }
  uint64_t range = ctx.caps().max_storage_buffer_range;
  Stream zero(ctx);
  buffer_of_.assign(n_layers_, -1);
  for (uint32_t l = 0; l < n_layers_; ++l) {
    if (!c.has_attention(l)) continue;
    if (!c.has_kv(l)) {  // a shared-KV layer: its source comes earlier and has a buffer
      buffer_of_[l] = buffer_of_[c.kv_layer(l)];
      continue;
    }
    const Geometry& g = geometry_[l];
    uint64_t k_bytes = k_view_bytes(g), v_bytes = mla_ ? 0 : v_view_bytes(g);
    ENSURE(k_bytes <= range && v_bytes <= range,
           fmt::format("the KV cache of one layer needs {:.0f} MiB, more than this device binds at once "
                       "({:.0f} MiB); use a smaller context (--ctx){}",
                       std::max(k_bytes, v_bytes) / 1048576.0, range / 1048576.0,
                       slots > 1 ? " or fewer parallel slots (--parallel)" : ""));
    uint64_t v_offset = align_up(k_bytes, ctx.caps().binding_alignment());
    buffer_of_[l] = int(layers_.size());
    layers_.emplace_back(ctx, v_bytes ? v_offset + v_bytes : k_bytes, Memory::Device, fmt::format("kv cache {}", l));
    zero.fill(layers_.back().view(), 0);  // unwritten positions read as 0, never NaN
  }
  zero.submit_wait();
}

const KvCache::Geometry& KvCache::geometry(uint32_t l) const {
  ENSURE(l < n_layers_, fmt::format("layer {} is not one of the {} layers", l, n_layers_));
  ENSURE(buffer_of_[l] >= 0, fmt::format("layer {} has no KV cache (it is {})", l, describe(mixers_[l])));
  return geometry_[l];
}

std::vector<KvCache::Geometry> KvCache::geometries() const {
  std::vector<Geometry> out;
  for (uint32_t l = 0; l < n_layers_; ++l)
    if (buffer_of_[l] >= 0 && std::find(out.begin(), out.end(), geometry_[l]) == out.end()) out.push_back(geometry_[l]);
  return out;
}

const Buffer& KvCache::layer(uint32_t l) const {
  geometry(l);  // checks that it has one
  return layers_[buffer_of_[l]];
}

BufferView KvCache::k(uint32_t l) const { return layer(l).view(0, k_view_bytes(geometry(l))); }

BufferView KvCache::v(uint32_t l) const {
  if (mla_) return k(l);
  uint64_t bytes = v_view_bytes(geometry(l));
  const Buffer& b = layer(l);
  return b.view(b.size() - bytes, bytes);
}

uint64_t KvCache::bytes_per_token() const {
  uint64_t bytes = 0;
  for (uint32_t l = 0; l < n_layers_; ++l) {
    if (buffer_of_[l] < 0 || (l > 0 && std::count(buffer_of_.begin(), buffer_of_.begin() + l, buffer_of_[l])))
      continue;  // linear, or a shared-KV layer (its source counted it)
    const Geometry& g = geometry_[l];
    bytes += mla_ ? row_bytes(type_, g.k_width) : g.heads * (row_bytes(type_, g.k_width) + row_bytes(type_, g.v_width));
  }
  return bytes;
}

// --- the storage type and its byte accounting: rows of k_width / v_width values, each row
// whole blocks of 32 for Q8_0 / Q4_0 (docs/formats.md §7)

void KvCache::check_type(const ModelConfig& c, const Geometry& g) const {
  ENSURE(type_ == DType::F16 || type_ == DType::F32 || type_ == DType::Q8_0 || type_ == DType::Q4_0,
         fmt::format("the KV cache is stored as f16, f32, q8_0 or q4_0, not {}", info(type_).name));
  uint32_t block = info(type_).block_values;
  // MLA's latent row is written in two parts (c, then k_pe at column kv_lora_rank): both whole blocks.
  uint32_t part = mla_ ? c.mla.kv_lora_rank : g.v_width;
  ENSURE(g.k_width % block == 0 && part % block == 0,
         fmt::format("a {} KV cache needs head dims that are multiples of {}; this model's {} are {} and {}",
                     info(type_).name, block, mla_ ? "latent and rope dims" : "K and V head dims",
                     mla_ ? c.mla.kv_lora_rank : g.k_width, mla_ ? c.mla.qk_rope_head_dim : g.v_width));
}

uint64_t KvCache::k_view_bytes(const Geometry& g) const {
  return uint64_t(g.heads) * rows() * row_bytes(type_, g.k_width);
}
uint64_t KvCache::v_view_bytes(const Geometry& g) const {
  return uint64_t(g.heads) * rows() * row_bytes(type_, g.v_width);
}

}  // namespace vkllm
