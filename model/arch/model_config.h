// ModelConfig: the architecture and dimensions of a model, read from GGUF metadata and checked
// against the tensors. The common keys are read here (model_config.cpp); what only one
// architecture has is read by its file in model/arch/ (architecture.h).
#pragma once
#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "dtype.h"

namespace vkllm {

class GgufFile;
class GgufWriter;
struct Architecture;

// Hybrid: linear attention (Gated DeltaNet) in most layers, full attention in the rest
// (Qwen3.5/3.6); a model's attention_kind() is that of its full-attention layers.
enum class AttentionKind { MHA, GQA, MQA, MLA, Hybrid };
enum class RopeMode { Norm, Neox };  // pairs (2i, 2i+1) or (i, i + n_rot/2); docs/formats.md §3.2
enum class RopeScaling { None, Linear, Yarn };
enum class MlaLayout { None, Split, Fused };  // attn_k_b + attn_v_b (new files) or attn_kv_b (old)
// How an embedding model pools its tokens' hidden states into one vector (<arch>.pooling_type,
// the values of llama.cpp's llama_pooling_type); Unspecified: the file has no such key.
enum class Pooling : int32_t { Unspecified = -1, None = 0, Mean = 1, Cls = 2, Last = 3, Rank = 4 };

std::string_view to_string(AttentionKind k);
std::string_view to_string(RopeMode m);
std::string_view to_string(RopeScaling s);
std::string_view to_string(MlaLayout l);

struct RopeConfig {
  float theta = 10000.0f;  // freq_base
  uint32_t dim = 0;        // n_rot: rotated dims per head (MLA: the rope part of q and k)
  RopeMode mode = RopeMode::Norm;
  RopeScaling scaling = RopeScaling::None;
  float factor = 1.0f;        // freq_scale = 1 / factor
  uint32_t original_ctx = 0;  // training context the scaling starts from (yarn; 0: context_length)
  float attn_factor = 1.0f;   // rope.scaling.attn_factor
  // rope.scaling.yarn_log_multiplier as the file stores it: HF's mscale_all_dim (mistral3), or for
  // DeepSeek 0.1 * mscale_all_dim (docs/formats.md §5.4), which deepseek_yarn says.
  float yarn_log_multiplier = 0;
  bool deepseek_yarn = false;  // DeepSeek's YaRN: mscale = mscale_all_dim, and the query scale takes m^2
  float yarn_beta_fast = 32, yarn_beta_slow = 1;  // rope.scaling.yarn_beta_fast / _slow
  bool has_freq_factors = false;                  // rope_freqs.weight (dim/2 f32) divides theta_i (Llama 3.1+)
  // rope.dimension_sections (Qwen3.5's interleaved M-RoPE): for text, pairs of the 4th section
  // turn with position 0 and the others with the token's (ref::RopeSpec::sections). All 0: none.
  uint32_t sections[4] = {0, 0, 0, 0};
  bool sections_interleaved = false;

  // The attn_factor the rope kernels take under YaRN (they multiply it by 1 + 0.1 ln(factor), as
  // ggml does): attn_factor alone without a log multiplier; with one, HF's mscale(factor, mscale) /
  // mscale(factor, mscale_all_dim) over that 1 + 0.1 ln(factor), as llama.cpp computes it (so
  // DeepSeek rotates with unit magnitude; docs/formats.md §3.5).
  double yarn_attn_factor() const;
};

// Scalars a family puts on the residual stream, the attention and the logits, each 0 where absent
// (x1; for attention 1/sqrt(head_dim)): Granite's four multipliers (granitehybrid, from the keys
// named below), and the gemmas' query scale, which their files imply (`attention`).
struct Multipliers {
  float embedding = 0;  // embedding_scale: the token embeddings times it
  float residual = 0;   // residual_scale: each block's mixer and FFN outputs times it, before their residual adds
  float attention = 0;  // attention.scale: the softmax scale instead of 1/sqrt(head_dim)
  float logit = 0;      // logit_scale: the logits divided by it
};

// Multi-head latent attention (DeepSeek-V2/V3, docs/formats.md §5).
struct MlaConfig {
  uint32_t q_lora_rank = 0;       // 0: a plain attn_q (V2-Lite); else attn_q_a -> norm -> attn_q_b
  uint32_t kv_lora_rank = 0;      // latent width c (512)
  uint32_t qk_nope_head_dim = 0;  // per-head key part without rope (128)
  uint32_t qk_rope_head_dim = 0;  // per-head rope part, one k_pe shared by all heads (64)
  uint32_t v_head_dim = 0;        // per-head value width (128)
  MlaLayout layout = MlaLayout::None;
};

// How a router turns its logits into expert scores (GGUF expert_gating_func; docs/formats.md §8).
// SoftmaxWeight (gpt-oss): the top-k are chosen by the raw logits, and their weights are the
// softmax over those k alone.
enum class MoeGating : uint32_t { Softmax = 1, Sigmoid = 2, SoftmaxWeight = 3 };
std::string_view to_string(MoeGating g);

// Mixture of experts (docs/formats.md §8): each MoE block routes every token to n_experts_used of
// n_experts gated FFNs of width expert_hidden_dim and adds their outputs, weighted by the router;
// shared experts (one FFN of width shared_hidden_dim) see every token.
struct MoeConfig {
  uint32_t n_experts = 0;  // 0: dense model
  uint32_t n_experts_used = 0;
  uint32_t n_shared_experts = 0;      // deepseek2: shared FFN width = n_shared_experts · expert_hidden_dim
  uint32_t expert_hidden_dim = 0;     // width of one routed expert
  uint32_t shared_hidden_dim = 0;     // width of the shared-expert FFN; 0: none
  uint32_t leading_dense_blocks = 0;  // blocks [0, this) are dense (deepseek2)
  MoeGating gating = MoeGating::Softmax;
  bool weights_norm = false;                 // divide the chosen weights by their sum
  float weights_scale = 1.0f;                // then multiply them by this (0 and 1: unchanged)
  uint32_t n_groups = 0, n_groups_used = 0;  // group-limited routing (DeepSeek-V3); 0: none
  bool probs_bias = false;                   // exp_probs_b: biases the choice only, not the weights (from the tensors)
  bool shared_gate = false;                  // ffn_gate_inp_shexp: a sigmoid gate on the shared expert (qwen2moe)
  // moe_latent_size (Nemotron 3): the experts run at this width, between ffn_latent_down and
  // ffn_latent_up projections; 0: at the model's.
  uint32_t latent_dim = 0;
};

// What mixes a block's tokens (docs/formats.md §15): attention over the KV cache; a recurrent
// mixer that keeps a constant state per sequence instead (Gated DeltaNet: Qwen3.5/3.6; Mamba-2:
// Nemotron-H, Granite 4.0-H; a gated short convolution: LFM2); or None, a block that is only an
// FFN (Nemotron-H's).
enum class Mixer : uint8_t { Attention, DeltaNet, Mamba2, ShortConv, None };
std::string_view to_string(Mixer m);  // "attention", "deltanet", "mamba2", "shortconv", "none"
// For messages: "linear attention", "a Mamba-2 state-space mixer", "an FFN-only block", ...
std::string_view describe(Mixer m);

// Gated DeltaNet linear attention (Qwen3.5/3.6 hybrids, docs/formats.md §10): the DeltaNet layers
// keep a fixed-size recurrent state per sequence instead of K/V per token.
struct LinearAttentionConfig {
  uint32_t conv_kernel = 0;  // ssm.conv_kernel: taps of the causal conv1d over q|k|v (4)
  uint32_t k_heads = 0;      // ssm.group_count
  uint32_t v_heads = 0;      // ssm.time_step_rank, a multiple of k_heads
  uint32_t head_dim = 0;     // ssm.state_size: values per key head and per value head (128)
  uint32_t key_dim() const { return k_heads * head_dim; }
  uint32_t value_dim() const { return v_heads * head_dim; }
  uint32_t conv_channels() const { return 2 * key_dim() + value_dim(); }  // q | k | v
  // f32 values one sequence keeps per linear layer: the conv's last conv_kernel - 1 inputs and a
  // head_dim x head_dim delta-rule state per value head.
  uint64_t state_floats() const {
    return uint64_t(conv_kernel - 1) * conv_channels() + uint64_t(v_heads) * head_dim * head_dim;
  }
};

// A Mamba-2 selective state-space mixer (docs/formats.md §15): heads of head_dim channels, each
// with a (head_dim x state) state, fed by groups of B and C rows shared by heads / groups heads.
struct Mamba2Config {
  uint32_t conv_kernel = 0;  // ssm.conv_kernel: taps of the causal conv1d over x|B|C (4)
  uint32_t inner = 0;        // ssm.inner_size: d_inner = heads · head_dim
  uint32_t state = 0;        // ssm.state_size: d_state (128)
  uint32_t heads = 0;        // ssm.time_step_rank
  uint32_t groups = 0;       // ssm.group_count: groups of B and C
  uint32_t head_dim() const { return heads ? inner / heads : 0; }
  uint32_t conv_channels() const { return inner + 2 * groups * state; }  // x | B | C
};

// A gated short convolution (LFM2): a causal conv of `kernel` taps over the model's width.
struct ShortConvConfig {
  uint32_t kernel = 0;  // shortconv.l_cache
};

// What one recurrent layer keeps per sequence, in f32: the conv's last inputs (conv_rows x
// conv_channels) and a second state (Gated DeltaNet: v_heads·s·s; Mamba-2: heads·head_dim·state;
// none for a short conv). All zero for an attention layer.
struct RecurrentState {
  uint32_t conv_rows = 0, conv_channels = 0;
  uint64_t state_floats = 0;
  uint64_t conv_floats() const { return uint64_t(conv_rows) * conv_channels; }
  uint64_t floats() const { return conv_floats() + state_floats; }
};

// Which of the tensor layouts llama.cpp's loader reads a file uses, where a family has more than one
// (docs/formats.md §13), from its tensors (read_tensor_flags); every layer alike.
struct TensorLayout {
  bool fused_qkv = false;           // attn_qkv: the q rows, then k, then v (standard attention layers)
  bool fused_qkv_bias = false;      // attn_qkv.bias for attn_q/k/v.bias (with fused_qkv and qkv_bias)
  bool fused_gate_up_exps = false;  // ffn_gate_up_exps: per expert its gate rows, then its up rows
};
// "fused QKV, fused expert gate/up" (what `vkllm info` prints), "" for the separate layout.
std::string layout_names(const TensorLayout& l);

// One layer's attention as it runs: its heads and head widths (gemma4's sliding and global layers
// differ), whether it rotates, and the layer whose KV cache it reads (itself, or for a shared-KV
// layer an earlier one; docs/formats.md §11).
struct LayerAttention {
  uint32_t n_heads = 0, n_kv_heads = 0, head_dim = 0, v_head_dim = 0;
  uint32_t kv_layer = 0;
  bool rotates = true;
};

struct ModelConfig {
  const Architecture* arch = nullptr;  // from the registry (architecture.h); never null once read
  std::string arch_name = "llama";     // general.architecture as written (the metadata key prefix)
  std::string name;                    // general.name; may be empty
  uint32_t dim = 0;                    // embedding_length: the residual width
  uint32_t n_layers = 0;
  uint32_t n_heads = 0;
  uint32_t n_kv_heads = 0;           // MLA: 1 (one latent per token serves every head)
  uint32_t head_dim = 0;             // query/key width per head (MLA: qk_nope + qk_rope)
  uint32_t v_head_dim = 0;           // value width per head
  std::vector<uint32_t> hidden_dim;  // (n_layers) FFN width of each layer
  uint32_t vocab_size = 0;
  uint32_t seq_len = 0;    // context_length the model was trained for
  float norm_eps = 1e-5f;  // RMSNorm epsilon
  RopeConfig rope;
  bool qkv_bias = false;         // attn_q/k/v.bias (required by some architectures, optional in others)
  bool tied_embeddings = false;  // no output.weight: logits use token_embd
  MlaConfig mla;
  MoeConfig moe;
  // Sliding-window attention: layer l with swa_layers[l] set sees only its last sliding_window
  // keys and rotates with rope_swa (gemma2/3; docs/formats.md §9). Empty: every layer is global.
  uint32_t sliding_window = 0;
  std::vector<uint8_t> swa_layers;
  RopeConfig rope_swa;
  float attn_softcap = 0;   // > 0: scores become cap·tanh(score / cap) before the softmax
  float final_softcap = 0;  // > 0: likewise for the output logits
  Multipliers multipliers;
  // Each block's mixer and whether it has an FFN after it (Nemotron-H: attention-only and
  // Mamba-2-only blocks have none). Empty: attention and an FFN in every block.
  std::vector<Mixer> mixers;        // (n_layers)
  std::vector<uint8_t> ffn_layers;  // (n_layers) 0: no FFN
  LinearAttentionConfig linear;     // the DeltaNet layers'
  Mamba2Config ssm;                 // the Mamba-2 layers'
  ShortConvConfig short_conv;       // the short-conv layers'
  // Per-layer attention shapes (docs/formats.md §11). Sliding-window layers may have head widths of
  // their own (attention.key_length_swa; 0: head_dim / v_head_dim) and attention.head_count_kv may
  // be an array (kv_heads; empty: n_kv_heads in every layer). The last n_kv_shared_layers layers
  // keep no KV: each reads the cache of the last earlier layer of its kind (sliding or global).
  // In global layers of an attention_k_eq_v model V is K's projection (no attn_v).
  uint32_t head_dim_swa = 0, v_head_dim_swa = 0;
  std::vector<uint32_t> kv_heads;
  uint32_t n_kv_shared_layers = 0;
  bool attention_k_eq_v = false;
  bool kv_in_shared_layers = false;  // shared-KV layers carry attn_k (and attn_v, attn_k_norm), unused
  std::vector<uint8_t> nope_layers;  // (n_layers) 1: the layer applies no rope (smollm3); empty: none
  // Llama 4's attention temperature (mistral3): each query is scaled by
  // 1 + beta·ln(floor(pos / length) + 1) after rope. beta 0: off.
  float attn_temperature_beta = 0;
  uint32_t attn_temperature_length = 0;
  bool attn_out_bias = false;  // attn_output.bias (required by some families, optional in others)
  bool ffn_bias = false;       // ffn_gate/up/down.bias of the dense FFN (llama, mistral3: when the file has them)
  bool output_bias = false;    // output.bias on the logits (qwen2: when the file has it)
  TensorLayout layout;
  // gemma4 E models: a second table of per_layer_embd values per layer and token, projected and
  // gated into each layer's output (docs/formats.md §11); 0: none.
  uint32_t per_layer_embd = 0;
  bool layer_out_scale = false;  // layer_output_scale: one scalar per layer times its output (gemma4)
  // Multi-token-prediction blocks after the n_layers of the trunk (nextn_predict_layers; block_count
  // counts them): their tensors are checked and loaded from the file but not run.
  uint32_t n_nextn_layers = 0;
  Pooling pooling = Pooling::Unspecified;  // pooling_type: what the file says embeddings are

  const Architecture& architecture() const;
  AttentionKind attention_kind() const;
  bool is_moe_layer(uint32_t layer) const;
  // Block l's mixer (a multi-token-prediction block past n_layers: attention).
  Mixer mixer(uint32_t layer) const { return layer < mixers.size() ? mixers[layer] : Mixer::Attention; }
  bool has_attention(uint32_t layer) const { return mixer(layer) == Mixer::Attention; }
  bool is_recurrent_layer(uint32_t layer) const {
    Mixer m = mixer(layer);
    return m == Mixer::DeltaNet || m == Mixer::Mamba2 || m == Mixer::ShortConv;
  }
  bool has_ffn(uint32_t layer) const { return layer >= ffn_layers.size() || ffn_layers[layer]; }
  bool has_mixer(Mixer m) const;  // some block has it
  bool hybrid() const;            // some block keeps a recurrent state
  uint32_t n_attention_layers() const;
  uint32_t n_recurrent_layers() const;
  // What recurrent layer l keeps per sequence (zero for any other).
  RecurrentState recurrent_state(uint32_t layer) const;
  bool is_swa_layer(uint32_t layer) const { return layer < swa_layers.size() && swa_layers[layer]; }
  uint32_t window(uint32_t layer) const { return is_swa_layer(layer) ? sliding_window : 0; }
  const RopeConfig& rope_of(uint32_t layer) const { return is_swa_layer(layer) ? rope_swa : rope; }
  bool rotates(uint32_t layer) const { return !(layer < nope_layers.size() && nope_layers[layer]); }
  // Layer l's attention shape and the layer whose cache it reads.
  LayerAttention attention_of(uint32_t layer) const;
  uint32_t kv_layer(uint32_t layer) const;
  bool has_kv(uint32_t layer) const { return has_attention(layer) && kv_layer(layer) == layer; }
  // The widest query (heads · head dim), key and value rows of any attention layer.
  uint32_t max_q_width() const;
  uint32_t max_kv_width() const;
  uint32_t max_width(uint32_t (*heads)(const LayerAttention&)) const;
  // Exact KV-cache bytes per token over the layers that keep K/V, stored as `kv` (rows of each
  // layer's head dim per KV head; MLA: one row of kv_lora_rank + rope dim per layer).
  uint64_t kv_bytes_per_token(DType kv = DType::F16) const;
  // What layer l's K and V rows of one token take, whether it stores them or reads a shared cache.
  uint64_t layer_kv_bytes_per_token(uint32_t layer, DType kv = DType::F16) const;
  // The bytes per token the shared-KV layers do not store (gemma4).
  uint64_t shared_kv_saving_per_token(DType kv = DType::F16) const;
  // Exact bytes of recurrent state one sequence keeps over the recurrent layers (f32, any context
  // length): 0 for a model without them.
  uint64_t recurrent_bytes_per_sequence() const;
  // The softmax scale of attention: multipliers.attention when set, else 1/sqrt(head_dim); DeepSeek under
  // YaRN multiplies it by m^2, m = 1 + yarn_log_multiplier·ln(factor) (the HF formula,
  // docs/formats.md §5.4). Layer l's head dim where it differs (gemma4 sets the multiplier).
  double attention_scale(uint32_t layer = 0) const;
  // Throws vkllm::Error when the dimensions are inconsistent or unsupported.
  void validate() const;

  // Reads the metadata, takes tensor-dependent flags (tied output, rope factors, biases) from the
  // tensor table, validates, and checks every tensor's name and shape. A file without tensors
  // (vocab-only / metadata-only) is read from its metadata alone. Errors: "<file>: <what>".
  static ModelConfig from_gguf(const GgufFile& f);
};

// "3, 7, 11": the layers that have attention (not a recurrent mixer), for messages.
std::string attention_layers(const ModelConfig& c);

// Writes the metadata keys from_gguf reads (general.architecture included).
void write_config(GgufWriter& w, const ModelConfig& c);

}  // namespace vkllm
