// What several families share: the hyperparameters and tensor names of standard (per-head q/k/v/o)
// attention and of the gated feed-forward block. A family's file composes its catalogue from these.
#pragma once
#include <cstdint>
#include <string_view>
#include <vector>

#include "arch/architecture.h"

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;
struct ModelConfig;

// llama.cpp's llama block (src/models/llama.cpp; mistral3.cpp reads the same tensors): standard
// attention with optional q/k/v and output-projection biases, Q/K/V optionally in one attn_qkv,
// adjacent-pair rope, a SiLU-gated FFN with optional biases (docs/formats.md §13).
BlockRecipe llama_recipe();
// The LongRoPE factors llama.cpp reads for llama, mistral3 and phi3, which vkllm does not run.
std::vector<UnrunTensor> longrope_factors();

// attention.key_length / value_length (default dim / heads), rope.dimension_count (default the
// head dim).
void read_standard_heads(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_standard_heads(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);

// Families whose recurrent blocks are those with attention.head_count_kv 0 (lfm2, granitehybrid):
// each block's mixer (`recurrent` there, else attention), the attention blocks' KV heads as the
// model's (the others keep their 0, which only marks the kind); and the writer's side,
// write_standard_heads with head_count_kv 0 in every block without attention.
void read_mixers_by_kv_heads(ModelConfig& c, Mixer recurrent);
void write_heads_by_mixer(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
// Granite's multipliers (c.multipliers: embedding_scale, residual_scale, attention.scale,
// logit_scale), each optional; written where non-zero.
void read_multipliers(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_multipliers(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);

// The q, k and v projections of q, k and v rows: attn_q/k/v, or with c.layout.fused_qkv one attn_qkv;
// their biases when c.qkv_bias: attn_q/k/v.bias, or with c.layout.fused_qkv_bias one attn_qkv.bias
// (docs/formats.md §13).
void add_qkv(const ModelConfig& c, uint32_t l, TensorCatalogue& t, uint64_t q, uint64_t k, uint64_t v);
// attn_norm, the q/k/v projections (add_qkv), attn_output (+ its bias when c.attn_out_bias).
void add_standard_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// The FFN's norm (`norm`), ffn_gate, ffn_up, ffn_down (+ their biases when c.ffn_bias).
// Multi-token-prediction blocks (l >= n_layers) take the last layer's width.
void add_gated_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t, std::string_view norm = "ffn_norm.weight");
// A standard block: standard attention, then the gated FFN (llama, mistral, qwen2).
void add_standard_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// attn_q_norm, attn_k_norm: one RMSNorm weight of head_dim shared by the heads (qwen3, gemma3).
void add_qk_norm(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// The routed experts' gate and up matrices: ffn_gate_exps and ffn_up_exps (3-D, expert e is slice
// e), or with c.layout.fused_gate_up_exps one ffn_gate_up_exps (expert e: F gate rows, F up rows).
void add_gate_up_exps(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// A mixture-of-experts FFN (docs/formats.md §8): ffn_norm, the router ffn_gate_inp, exp_probs_b
// when c.moe.probs_bias, the routed experts ffn_down_exps and add_gate_up_exps,
// and when c.moe.shared_hidden_dim > 0 the shared expert ffn_{gate,up,down}_shexp, gated by
// ffn_gate_inp_shexp when c.moe.shared_gate.
void add_moe_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t, std::string_view norm = "ffn_norm.weight");
// The routing llama.cpp passes for several families whatever the file says: `gating` scores, the
// chosen experts' weights divided by their sum (norm_w = true), no scale.
void normalised_routing(MoeConfig& m, MoeGating gating = MoeGating::Softmax);
// The expert keys the MoE families share: expert_feed_forward_length (default: feed_forward_length /
// expert_used_count, as llama.cpp), for files with experts.
void read_expert_width(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_expert_width(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);

// Which layers use the sliding window: attention.sliding_window_pattern as an array (one bool or
// integer per layer, non-zero = sliding) or a period n (layer l slides unless l % n == n - 1,
// llama.cpp's set_swa_pattern), else default_period (docs/formats.md §9.3).
void read_swa_pattern(const GgufFile& f, const KeyPrefix& k, ModelConfig& c, uint32_t default_period);
// Writes attention.sliding_window and the pattern as an array of bools.
void write_swa(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
// A gemma block: standard attention with a norm of its output (post_attention_norm), optional
// q/k head norms, and the gated FFN with a norm of its output (post_ffw_norm).
void add_gemma_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t, bool qk_norm);

}  // namespace vkllm
