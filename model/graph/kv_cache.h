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

  // With R = slots * n_ctx rows per head, per layer l with its own heads and widths:
  // MHA/GQA/MQA:  K (heads(l), R, k_width(l))   V (heads(l), R, v_width(l))
  // MLA: one row per token, (R, kv_lora_rank + rope_dim) = [c ; k_pe]; K is the whole row and V
  // is its first kv_lora_rank values (same buffer, row stride = row width).
  // A shared-KV layer (ModelConfig::kv_layer) gets the views of the layer whose cache it reads.
  BufferView k(uint32_t layer) const;
  BufferView v(uint32_t layer) const;
  bool mla() const { return mla_; }
  uint32_t heads(uint32_t layer) const { return geometry(layer).heads; }      // KV heads (1 for MLA)
  uint32_t k_width(uint32_t layer) const { return geometry(layer).k_width; }  // values per K row
  uint32_t v_width(uint32_t layer) const { return geometry(layer).v_width; }  // values per V row
  uint32_t k_row_stride(uint32_t layer) const { return k_width(layer); }
  uint32_t v_row_stride(uint32_t layer) const { return mla_ ? k_width(layer) : v_width(layer); }
  // The distinct (heads, k_width, v_width) of the layers with attention, for planning.
  struct Geometry {
    uint32_t heads = 0, k_width = 0, v_width = 0;
    bool operator==(const Geometry&) const = default;
  };
  std::vector<Geometry> geometries() const;
  // The same, from the model's configuration alone (what a cache of this model will hold).
  static std::vector<Geometry> geometries(const ModelConfig& config);

  uint32_t n_ctx() const { return n_ctx_; }  // tokens per slot
  uint32_t slots() const { return slots_; }
  uint32_t rows() const { return slots_ * n_ctx_; }  // rows per head, all slots
  DType type() const { return type_; }
  uint64_t bytes_per_token() const;  // the layers that store K/V, as stored (ModelConfig::kv_bytes_per_token agrees)
  uint64_t bytes() const { return bytes_per_token() * rows(); }

 private:
  const Geometry& geometry(uint32_t layer) const;
  void check_type(const ModelConfig& c, const Geometry& g) const;
  uint64_t k_view_bytes(const Geometry& g) const;  // one layer's K (MLA: the latent rows)
  uint64_t v_view_bytes(const Geometry& g) const;

  const Buffer& layer(uint32_t l) const;
  bool mla_;
  uint32_t n_layers_, n_ctx_, slots_;
  std::vector<Mixer> mixers_;  // each layer's, for messages
  DType type_;
  std::vector<Geometry> geometry_;  // per layer (linear-attention layers: zeros)
  std::vector<Buffer> layers_;      // one buffer per layer that stores K/V: K then V (MLA: the latent rows)
  std::vector<int> buffer_of_;      // per layer its index into layers_; -1 for a linear-attention layer
};

}  // namespace vkllm
