// ref::Model: the whole forward pass on the CPU, written from the math with the ref:: ops, the
// specification the GPU Transformer is tested against. Hybrid models run their recurrent layers
// (Gated DeltaNet) token by token per sequence. MLA runs in the naive (non-absorbed) form
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

// What one sequence has cached so far: per attention layer the keys (n, kv heads · dk) and values
// (n, kv heads · dv) of its n tokens, f32, token-major (MLA: decompressed per head, the naive
// form); per recurrent layer the conv's last inputs and its second state (DeltaNet's delta-rule
// state, Mamba-2's SSM state; ModelConfig::recurrent_state). A fresh KvState is an empty sequence.
class KvState {
 public:
  size_t size() const { return n_; }

 private:
  friend class Model;
  std::vector<std::vector<float>> k_, v_;
  std::vector<std::vector<float>> conv_, ssm_;  // (kernel - 1, channels), the second state
  size_t n_ = 0;
};

// One sequence's share of a batch: tokens that continue it at position state->size().
struct Chunk {
  KvState* state = nullptr;
  std::span<const int32_t> tokens;
};

// The biases of a gated FFN's three products (gpt-oss's experts); each may be null.
struct FfnBiases {
  const float *gate = nullptr, *up = nullptr, *down = nullptr;
};

class Model {
 public:
  // kv_type: what the attention sees of each cached K/V row, as the GPU's KV cache stores it
  // (ref::round_trip: F32 exact, F16 rounded, Q8_0/Q4_0 quantised and read back).
  Model(const GgufFile& file, const ModelConfig& config, DType kv_type = DType::F32);
  // Logits (n_tokens, vocab) of every position of a sequence that starts at position 0; `tap`
  // sees the named activations on the way.
  std::vector<float> forward(std::span<const int32_t> tokens, const TapFn& tap = {}) const;
  // One step of several sequences (distinct states): every matmul over all tokens of the batch,
  // attention per sequence over its own keys, causal by its own positions. Appends each chunk's
  // keys and values to its state; returns the logits of every token, (tokens, vocab), in batch order.
  std::vector<float> forward(std::span<const Chunk> batch, const TapFn& tap = {}) const;
  // The softmax probabilities of every head of `layer` over a sequence from position 0, as its
  // attention weighs the keys (MLA: over the decompressed per-head keys, the naive form):
  // (heads, n, n) f32, [head][query][key], 0 for keys after the query. Runs layers 0 .. layer.
  std::vector<float> attention_probabilities(std::span<const int32_t> tokens, uint32_t layer) const;
  // The final-normed hidden states (n_tokens, dim) of a sequence from position 0: what the
  // output projection would read (embeddings pool them).
  std::vector<float> hidden_states(std::span<const int32_t> tokens) const;

 private:
  // The batch being run: chunks in order, each token's absolute position, the chunks' offsets.
  struct Step {
    std::span<const Chunk> chunks;
    std::vector<int32_t> pos;
    std::vector<size_t> first;  // batch index of each chunk's first token
    size_t n = 0;
    int capture_layer = -1;               // the layer whose probabilities go to `probs` (one chunk)
    std::vector<float>* probs = nullptr;  // (heads, n, n)
    bool hidden = false;                  // stop after the final norm (hidden_states)
  };
  // forward(batch), or with step.capture_layer set only up to that layer's attention.
  std::vector<float> run(std::span<const Chunk> batch, Step& step, const TapFn& tap) const;
  std::vector<float> weight(TensorRole role, int layer = kGlobal) const;  // dequantised to f32
  // Rows [row0, row0 + rows) of a tensor (an expert's slice of a 3-D one), dequantised.
  std::vector<float> weight_rows(TensorRole role, int layer, size_t row0, size_t rows) const;
  const float* optional(TensorRole role, int layer, std::vector<float>& storage) const;
  bool has(TensorRole role, int layer) const { return catalogue_.find(role, layer) != nullptr; }
  void emit(int layer, std::string_view name, const std::vector<float>& v, size_t width) const;
  // x += a block's output (times Granite's residual multiplier, where the model has one; out is
  // scaled in place).
  void add_residual(std::vector<float>& x, std::vector<float>& out) const;
  void qkv(const std::vector<float>& h, uint32_t layer, size_t n, std::vector<float>& q, std::vector<float>& k,
           std::vector<float>& v) const;
  // down(act(gate·h) ⊙ up·h) for n rows of h (any width); an empty gate: down(act(up·h)).
  std::vector<float> gated(const std::vector<float>& gate, const std::vector<float>& up, const std::vector<float>& down,
                           const std::vector<float>& h, size_t n, const FfnBiases& biases = {}) const;
  std::vector<float> experts(const std::vector<float>& h, const std::vector<int32_t>& ids, uint32_t layer,
                             size_t n) const;
  void moe_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  // gate: (n, H·vd) or null; the attention output is scaled by sigmoid(gate) before projecting.
  void attend(std::vector<float>& x, uint32_t layer, const std::vector<float>& q, const std::vector<float>& k,
              const std::vector<float>& v, const Step& step, size_t kv_heads,
              const std::vector<float>* gate = nullptr) const;
  void mixer_block(std::vector<float>& x, uint32_t layer, const Step& step) const;  // as the layer's Mixer says
  void attention_block(std::vector<float>& x, uint32_t layer, const Step& step) const;
  void linear_block(std::vector<float>& x, uint32_t layer, const Step& step) const;      // model_linear.cpp
  void mamba2_block(std::vector<float>& x, uint32_t layer, const Step& step) const;      // model_mamba.cpp
  void short_conv_block(std::vector<float>& x, uint32_t layer, const Step& step) const;  // model_short_conv.cpp
  void mla_block(std::vector<float>& x, uint32_t layer, const Step& step) const;
  void ffn_block(std::vector<float>& x, uint32_t layer, size_t n) const;
  // gemma4: every layer's per-layer inputs (n, n_layers, P) of the tokens and the embeddings x;
  // after layer l, its share added to x, then x times the layer's output scale (model_ffn.cpp).
  std::vector<float> per_layer_inputs(std::span<const int32_t> tokens, const std::vector<float>& x) const;
  void layer_output(std::vector<float>& x, uint32_t layer, const std::vector<float>& per_layer, size_t n) const;
  void rope(float* x, const Step& step, size_t heads, size_t head_dim, size_t offset, size_t token_stride,
            uint32_t layer) const;

  const GgufFile& file_;
  const ModelConfig& c_;
  TensorCatalogue catalogue_;
  std::vector<float> freq_factors_;  // rope_freqs (rot/2) or empty
  DType kv_type_;
  mutable const TapFn* tap_ = nullptr;  // during forward()
};

}  // namespace vkllm::ref
