// ref::Model: the whole forward pass on the CPU, written from the math with the ref:: ops, the
// specification the GPU Transformer is tested against. MLA runs in the naive (non-absorbed) form
// of docs/formats.md §5.2, so it also checks the GPU's absorbed decode. Weights are dequantised
// to f32 layer by layer as they are used; nothing is cached, so it serves any model size (slowly).
// Tensors are found by role through the architecture's catalogue, never by a name spelled here.
#pragma once
#include <cstdint>
#include <span>
#include <vector>

#include "arch/model_config.h"
#include "arch/tensors.h"

namespace vkllm {
class GgufFile;
}

namespace vkllm::ref {

class Model {
 public:
  // kv_type: what the attention sees of each cached K/V row, as the GPU's KV cache stores it
  // (ref::round_trip: F32 exact, F16 rounded, Q8_0/Q4_0 quantised and read back).
  Model(const GgufFile& file, const ModelConfig& config, DType kv_type = DType::F32);
  // Logits (n_tokens, vocab) of every position of a sequence that starts at position 0.
  std::vector<float> forward(std::span<const int32_t> tokens) const;

 private:
  std::vector<float> weight(TensorRole role, int layer = kGlobal) const;  // dequantised to f32
  const float* optional(TensorRole role, int layer, std::vector<float>& storage) const;
  void attend(std::vector<float>& x, uint32_t layer, const std::vector<float>& q, const std::vector<float>& k,
              const std::vector<float>& v, size_t n, size_t kv_heads) const;
  void attention_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void mla_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void ffn_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void rope(float* x, size_t n, size_t heads, size_t head_dim, size_t offset, size_t token_stride) const;

  const GgufFile& file_;
  const ModelConfig& c_;
  TensorCatalogue catalogue_;
  std::vector<float> freq_factors_;  // rope_freqs (rot/2) or empty
  DType kv_type_;
};

}  // namespace vkllm::ref
