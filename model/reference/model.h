// ref::Model: the whole forward pass on the CPU, written from the math with the ref:: ops, the
// specification the GPU Transformer is tested against. MLA runs in the naive (non-absorbed) form
// of docs/formats.md §5.2, so it also checks the GPU's absorbed decode. Weights are dequantised
// to f32 layer by layer as they are used; nothing is cached, so it serves any model size (slowly).
// Tensors are found by role through the architecture's catalogue, never by a name spelled here.
#pragma once
#include <cstdint>
#include <functional>
#include <span>
#include <string_view>
#include <vector>

#include "arch/model_config.h"
#include "arch/tensors.h"

namespace vkllm {
class GgufFile;
}

namespace vkllm::ref {

// Sees each named activation of a forward (rows tokens of `width` floats) as it is computed: the
// same names, at the same points, as the GPU graph's taps (graph/transformer.h Tap).
using TapFn = std::function<void(int layer, std::string_view name, std::span<const float> values, size_t width)>;

class Model {
 public:
  Model(const GgufFile& file, const ModelConfig& config);
  // Logits (n_tokens, vocab) of every position of a sequence that starts at position 0.
  std::vector<float> forward(std::span<const int32_t> tokens, const TapFn& tap = {}) const;

 private:
  std::vector<float> weight(TensorRole role, int layer = kGlobal) const;  // dequantised to f32
  // Rows [row0, row0 + rows) of a tensor (an expert's slice of a 3-D one), dequantised.
  std::vector<float> weight_rows(TensorRole role, int layer, size_t row0, size_t rows) const;
  const float* optional(TensorRole role, int layer, std::vector<float>& storage) const;
  bool has(TensorRole role, int layer) const { return catalogue_.find(role, layer) != nullptr; }
  void emit(int layer, std::string_view name, const std::vector<float>& v, size_t width) const;
  void qkv(const std::vector<float>& h, uint32_t layer, size_t n, std::vector<float>& q, std::vector<float>& k,
           std::vector<float>& v) const;
  std::vector<float> gated(const std::vector<float>& gate, const std::vector<float>& up, const std::vector<float>& down,
                           const std::vector<float>& h, size_t n) const;
  void moe_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void attend(std::vector<float>& x, uint32_t layer, const std::vector<float>& q, const std::vector<float>& k,
              const std::vector<float>& v, size_t n, size_t kv_heads) const;
  void attention_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void mla_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void ffn_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  void rope(float* x, size_t n, size_t heads, size_t head_dim, size_t offset, size_t token_stride,
            uint32_t layer) const;

  const GgufFile& file_;
  const ModelConfig& c_;
  TensorCatalogue catalogue_;
  std::vector<float> freq_factors_;     // rope_freqs (rot/2) or empty
  mutable const TapFn* tap_ = nullptr;  // during forward()
};

}  // namespace vkllm::ref
