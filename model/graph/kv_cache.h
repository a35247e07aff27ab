// KvCache: the keys and values of every past token, per attention layer, in the layout flash
// attention reads. MHA/GQA/MQA keep K and V per KV head; MLA keeps one compressed latent row per
// token. The linear-attention layers of hybrid models keep none (graph/recurrent_cache.h).
// The cache has `slots` of n_ctx tokens each, one per sequence that runs at the same time
// (vkllm serve --parallel); slot z holds rows z * n_ctx .. z * n_ctx + n_ctx - 1 of every head,
// so a token's row is slot * n_ctx + position (docs/decisions.md "Batches of sequences").
#pragma once
#include <cstdint>
#include <vector>

#include "arch/model_config.h"
#include "buffer.h"
#include "dtype.h"

namespace vkllm {

class KvCache {
 public:
  // type: F16 (default), F32, or Q8_0 / Q4_0 (rows of blocks of 32 values, quantised by kv_store
  // as they are written; head dims must be multiples of 32). n_ctx: tokens per slot.
  KvCache(const Context& ctx, const ModelConfig& config, uint32_t n_ctx, DType type = DType::F16, uint32_t slots = 1);

  // With R = slots * n_ctx rows per head:
  // MHA/GQA/MQA, per layer:  K (n_kv_heads, R, head_dim)   V (n_kv_heads, R, v_head_dim)
  // MLA, per layer: one row per token, (R, kv_lora_rank + rope_dim) = [c ; k_pe]; K is the
  // whole row and V is its first kv_lora_rank values (same buffer, row stride = row width).
  BufferView k(uint32_t layer) const;
  BufferView v(uint32_t layer) const;
  bool mla() const { return mla_; }
  uint32_t k_width() const { return k_width_; }  // values per K row (head_dim, or kv_lora + rope)
  uint32_t v_width() const { return v_width_; }  // values per V row
  uint32_t k_row_stride() const { return k_width_; }
  uint32_t v_row_stride() const { return mla_ ? k_width_ : v_width_; }
  uint32_t heads() const { return heads_; }  // KV heads (1 for MLA)

  uint32_t n_ctx() const { return n_ctx_; }  // tokens per slot
  uint32_t slots() const { return slots_; }
  uint32_t rows() const { return slots_ * n_ctx_; }  // rows per head, all slots
  DType type() const { return type_; }
  uint64_t bytes_per_token() const;  // all attention layers, as stored (ModelConfig::kv_bytes_per_token agrees)
  uint64_t bytes() const { return bytes_per_token() * rows(); }

 private:
  void check_type(const ModelConfig& c) const;
  uint64_t k_view_bytes() const;  // one layer's K (MLA: the latent rows)
  uint64_t v_view_bytes() const;

  const Buffer& layer(uint32_t l) const;
  bool mla_;
  uint32_t n_layers_, n_ctx_, slots_, heads_, k_width_, v_width_;
  DType type_;
  std::vector<Buffer> layers_;  // one buffer per attention layer: K then V (MLA: the latent rows)
  std::vector<int> buffer_of_;  // per layer its index into layers_; -1 for a linear-attention layer
};

}  // namespace vkllm
