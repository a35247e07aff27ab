// Weights: every tensor of a model on the GPU in its stored type, packed into as few buffers as
// the device's allocation limits allow, plus the per-layer view the Transformer reads.
#pragma once
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <string>
#include <variant>
#include <vector>

#include "arch/model_config.h"
#include "arch/tensors.h"
#include "buffer.h"
#include "dtype.h"
#include "ops_moe.h"

namespace vkllm {

class GgufFile;
struct GgufTensor;

// One tensor in device memory: rows of `cols` values stored as `type` (ggml layout: ne[0] = cols
// contiguous, rows = ne[1]·ne[2]·ne[3]). Routed experts (ne = {cols, rows, n_experts}) have
// rows per expert and are held as slices of whole experts, each within one storage binding
// (an expert tensor may span buffers); `view` is then the first slice's.
struct Tensor {
  std::string name;
  DType type = DType::F32;
  uint32_t cols = 0;
  uint32_t rows = 0;
  BufferView view;
  uint32_t n_experts = 0;
  std::vector<ops::ExpertSlice> experts;
};

// One block's weights, grouped by part; null where the file has no such tensor (biases, q_lora).
struct AttentionWeights {                                                // standard attention: q/k/v/o per head
  const Tensor* norm = nullptr;                                          // (dim) f32
  const Tensor *q = nullptr, *k = nullptr, *v = nullptr;                 // (n_heads·head_dim | n_kv_heads·.., dim)
  const Tensor *q_bias = nullptr, *k_bias = nullptr, *v_bias = nullptr;  // f32
  const Tensor *q_norm = nullptr, *k_norm = nullptr;                     // (head_dim) f32, per-head RMSNorm
  const Tensor* out = nullptr;                                           // (dim, n_heads·v_head_dim)
  const Tensor* out_bias = nullptr;                                      // (dim) f32
  const Tensor* post_norm = nullptr;                                     // (dim) f32, of the block's output
  const Tensor* sinks = nullptr;                                         // (n_heads) f32, attention-sink logits
};
struct LatentAttentionWeights {  // multi-head latent attention (docs/formats.md §5), absorbed form
  const Tensor* norm = nullptr;  // (dim) f32
  const Tensor* q = nullptr;     // (H·hd, dim) when there is no q_lora
  const Tensor *q_a = nullptr, *q_a_norm = nullptr, *q_b = nullptr;  // (q_lora, dim), (q_lora), (H·hd, q_lora)
  const Tensor *kv_a = nullptr, *kv_a_norm = nullptr;                // (kv_lora + rope, dim), (kv_lora)
  const Tensor *k_b = nullptr, *v_b = nullptr;                       // (H; kv_lora, nope), (H; v_hd, kv_lora)
  const Tensor* out = nullptr;                                       // (dim, H·v_hd)
};
struct LinearAttentionWeights {                    // Gated DeltaNet (docs/formats.md §10)
  const Tensor* norm = nullptr;                    // (dim) f32
  const Tensor* qkv = nullptr;                     // (conv channels, dim): q | k | v, the conv's input
  const Tensor* z = nullptr;                       // (v_heads·s, dim): the output gate
  const Tensor* conv = nullptr;                    // (conv channels, kernel) f32
  const Tensor *dt = nullptr, *a = nullptr;        // (v_heads) f32: decay bias and rate
  const Tensor *beta = nullptr, *alpha = nullptr;  // (v_heads, dim)
  const Tensor* ssm_norm = nullptr;                // (s) f32, per value head
  const Tensor* out = nullptr;                     // (dim, v_heads·s)
};
struct Mamba2Weights {                                     // the Mamba-2 mixer (docs/formats.md §15)
  const Tensor* norm = nullptr;                            // (dim) f32, the block's attn_norm
  const Tensor* in = nullptr;                              // (2·inner + 2·groups·state + heads, dim): z | xBC | dt
  const Tensor *conv = nullptr, *conv_bias = nullptr;      // (conv channels, kernel), (conv channels) f32
  const Tensor *dt = nullptr, *a = nullptr, *d = nullptr;  // (heads) f32: dt's bias, A, the skip D
  const Tensor* ssm_norm = nullptr;                        // (groups, inner / groups) f32
  const Tensor* out = nullptr;                             // (dim, inner)
};
struct ShortConvWeights {        // LFM2's gated short conv (docs/formats.md §15.1)
  const Tensor* norm = nullptr;  // (dim) f32
  const Tensor* in = nullptr;    // (3·dim, dim): b | c | x
  const Tensor* taps = nullptr;  // (dim, kernel) f32
  const Tensor* out = nullptr;   // (dim, dim)
};
struct FfnWeights {                                              // gated feed-forward (no gate: up → act → down)
  const Tensor* norm = nullptr;                                  // (dim) f32
  const Tensor *gate = nullptr, *up = nullptr, *down = nullptr;  // (hidden, dim), (hidden, dim), (dim, hidden)
  const Tensor* post_norm = nullptr;                             // (dim) f32, of the block's output
  const Tensor *gate_bias = nullptr, *up_bias = nullptr;         // (hidden) f32 (llama, mistral3)
  const Tensor* down_bias = nullptr;                             // (dim) f32
};
struct MoeWeights {                             // mixture of experts (docs/formats.md §8)
  const Tensor* norm = nullptr;                 // (dim) f32
  const Tensor* router = nullptr;               // (n_experts, dim)
  const Tensor* router_bias = nullptr;          // (n_experts) f32 (gpt-oss)
  const Tensor* probs_bias = nullptr;           // (n_experts) f32, exp_probs_b
  const Tensor *gate = nullptr, *up = nullptr;  // experts × (F, dim)
  const Tensor* gate_up = nullptr;  // experts × (2F, dim): gate rows then up rows, for gate and up (fused layout)
  const Tensor* down = nullptr;     // experts × (dim, F)
  const Tensor *gate_bias = nullptr, *up_bias = nullptr;  // (n_experts, F) f32, per expert (gpt-oss)
  const Tensor* down_bias = nullptr;                      // (n_experts, dim) f32
  const Tensor *shared_gate = nullptr, *shared_up = nullptr, *shared_down = nullptr;  // the shared FFN
  const Tensor* shared_router = nullptr;  // (1, dim): sigmoid gate of the shared expert
  // gemma4: the router reads rmsnorm(x)/sqrt(dim)·router_scale; the experts read their own norm of
  // x and scale each output by down_scale[e]; the shared FFN's (norm) and the experts' outputs are
  // normed apart, summed and normed again (post_norm) before the residual add.
  const Tensor* router_scale = nullptr;  // (dim) f32
  const Tensor* down_scale = nullptr;    // (n_experts) f32
  const Tensor* expert_norm = nullptr;   // (dim) f32
  const Tensor *shared_post_norm = nullptr, *expert_post_norm = nullptr, *post_norm = nullptr;
  // Nemotron 3: the experts' input projected down to the latent width and their sum back up.
  const Tensor *latent_down = nullptr, *latent_up = nullptr;  // (latent, dim), (dim, latent)
};
struct LayerWeights {
  // As the block recipe says; Gated DeltaNet where ModelConfig::mixer says so (unused in FFN-only blocks).
  std::variant<AttentionWeights, LatentAttentionWeights, LinearAttentionWeights, Mamba2Weights, ShortConvWeights>
      attention;
  std::variant<FfnWeights, MoeWeights> ffn;  // ModelConfig::is_moe_layer
  // gemma4: the per-layer embedding's gate (per_layer_embd, dim), projection back (dim,
  // per_layer_embd) and its norm; the scalar on the layer's output. Null where absent.
  const Tensor *per_layer_gate = nullptr, *per_layer_proj = nullptr, *per_layer_norm = nullptr;
  const Tensor* out_scale = nullptr;
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

  // A tensor by role (and layer for block tensors); null when the file has none.
  const Tensor* find(TensorRole role, int layer = kGlobal) const;
  const Tensor& token_embd() const { return *token_embd_; }
  const Tensor& output_norm() const { return *output_norm_; }
  const Tensor& output() const { return *output_; }  // token_embd when the embeddings are tied
  const Tensor* rope_freqs() const { return rope_freqs_; }
  const Tensor* output_bias() const { return output_bias_; }  // (vocab) f32, or null
  const Tensor* per_layer_embd() const { return find(TensorRole::PerLayerTokenEmbd); }
  const LayerWeights& layer(uint32_t i) const { return layers_.at(i); }
  uint64_t device_bytes() const { return device_bytes_; }
  size_t buffer_count() const { return buffers_.size(); }
  // Host-visible staging memory the upload held while loading (0 on unified memory), freed since.
  uint64_t staging_bytes() const { return staging_bytes_; }

 private:
  struct Source {  // a tensor as it will be uploaded: bytes from the file or converted at load
    Tensor tensor;
    TensorRole role;
    int layer;
    const std::byte* data;
    std::vector<std::byte> converted;
    uint32_t expert0 = 0;  // a slice of routed experts: its first (tensor.n_experts: all of them)
    uint32_t slice_experts = 0;
  };
  void add_experts(std::vector<Source>& out, Source s, uint64_t max_buffer_bytes, uint64_t max_binding) const;
  static bool add_fused_parts(std::vector<Source>& out, const Source& s, const ModelConfig& c);
  std::vector<Source> collect(const GgufFile& file, const ModelConfig& config, uint64_t max_buffer_bytes,
                              uint64_t max_binding) const;
  void upload(const Context& ctx, std::vector<Source>& sources,
              const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes);
  void bind_layers(const ModelConfig& config);

  std::vector<Buffer> buffers_;                           // weights packed back to back, each buffer within the limits
  std::map<std::pair<int, TensorRole>, Tensor> tensors_;  // by (layer, role)
  const Tensor *token_embd_ = nullptr, *output_norm_ = nullptr, *output_ = nullptr, *rope_freqs_ = nullptr;
  const Tensor* output_bias_ = nullptr;
  std::vector<LayerWeights> layers_;
  uint64_t device_bytes_ = 0, staging_bytes_ = 0;
};

// Throws an Error naming the first tensor whose type the kernels cannot read (with the list
// they can, from ops::weight_types()); called before anything is uploaded.
void check_weight_types(const GgufFile& file);
// Every such tensor, for `vkllm info`.
std::vector<const GgufTensor*> unsupported_weights(const GgufFile& file);

}  // namespace vkllm
