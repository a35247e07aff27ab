// Weights: every tensor of a model on the GPU in its stored type, packed into as few buffers as
// the device's allocation limits allow, plus the per-layer view the Transformer reads.
#pragma once
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <unordered_map>
#include <vector>

#include "buffer.h"
#include "config.h"
#include "dtype.h"

namespace vkllm {

class GgufFile;

// One tensor in device memory: rows of `cols` values stored as `type` (ggml layout: ne[0] = cols
// contiguous, rows = ne[1]·ne[2]·ne[3]).
struct Tensor {
  std::string name;
  DType type = DType::F32;
  uint32_t cols = 0;
  uint32_t rows = 0;
  BufferView view;
};

// Pointers into Weights for one block; null where the architecture has no such tensor.
struct LayerWeights {
  const Tensor* attn_norm = nullptr;                                  // (dim) f32
  const Tensor *wq = nullptr, *wk = nullptr, *wv = nullptr;           // (n_heads·head_dim | n_kv_heads·.., dim)
  const Tensor *bq = nullptr, *bk = nullptr, *bv = nullptr;           // qwen2 biases, f32
  const Tensor* wo = nullptr;                                         // (dim, n_heads·v_head_dim)
  // MLA (deepseek2)
  const Tensor *wq_a = nullptr, *q_a_norm = nullptr, *wq_b = nullptr;  // (q_lora, dim), (q_lora), (H·hd, q_lora)
  const Tensor *wkv_a = nullptr, *kv_a_norm = nullptr;                // (kv_lora + rope, dim), (kv_lora)
  const Tensor *wk_b = nullptr, *wv_b = nullptr;                      // (H; kv_lora, nope), (H; v_hd, kv_lora)
  const Tensor* ffn_norm = nullptr;                                   // (dim) f32
  const Tensor *w_gate = nullptr, *w_up = nullptr, *w_down = nullptr;  // (hidden, dim), (hidden, dim), (dim, hidden)
};

struct LoadProgress {
  uint64_t bytes_done = 0, bytes_total = 0;
};

class Weights {
 public:
  // Tensors are packed into buffers of at most max_buffer_bytes (and the device's limits); a
  // tensor larger than that gets a buffer of its own.
  Weights(const Context& ctx, const GgufFile& file, const ModelConfig& config,
          const std::function<void(const LoadProgress&)>& progress = {}, uint64_t max_buffer_bytes = 1ull << 30);

  const Tensor& get(const std::string& name) const;
  const Tensor* find(const std::string& name) const;
  const Tensor& token_embd() const { return *token_embd_; }
  const Tensor& output_norm() const { return *output_norm_; }
  const Tensor& output() const { return *output_; }  // token_embd when the embeddings are tied
  const Tensor* rope_freqs() const { return rope_freqs_; }
  const LayerWeights& layer(uint32_t i) const { return layers_.at(i); }
  uint64_t device_bytes() const { return device_bytes_; }
  size_t buffer_count() const { return buffers_.size(); }

 private:
  struct Source {  // a tensor as it will be uploaded: bytes from the file or converted at load
    Tensor tensor;
    const std::byte* data;
    std::vector<std::byte> converted;
  };
  std::vector<Source> collect(const GgufFile& file, const ModelConfig& config) const;
  void upload(const Context& ctx, std::vector<Source>& sources,
              const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes);
  void bind_layers(const ModelConfig& config);

  std::vector<Buffer> buffers_;  // weights packed back to back, each buffer within the limits
  std::unordered_map<std::string, Tensor> tensors_;
  const Tensor *token_embd_ = nullptr, *output_norm_ = nullptr, *output_ = nullptr, *rope_freqs_ = nullptr;
  std::vector<LayerWeights> layers_;
  uint64_t device_bytes_ = 0;
};

}  // namespace vkllm
