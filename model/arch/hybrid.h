// What the hybrid families share (qwen35, qwen35moe; docs/formats.md §10): Gated DeltaNet linear
// attention in most layers, gated full attention in the rest, and multi-token-prediction blocks
// after the trunk. Their keys, their checks and their tensor names.
#pragma once
#include <cstdint>
#include <vector>

#include "arch/architecture.h"

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;
struct ModelConfig;

// ssm.{conv_kernel, inner_size, state_size, time_step_rank, group_count}; which layers are linear
// (attention.recurrent_layers, one bool per block, else every layer but each
// full_attention_interval-th, default 4); rope.dimension_sections (required, 4 entries;
// interleaved M-RoPE, which these families use).
void read_hybrid(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_hybrid(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);
void validate_hybrid(const ModelConfig& c);

// Block l's attention part: attn_norm, then for a linear layer attn_qkv, attn_gate, ssm_conv1d,
// ssm_dt.bias, ssm_a, ssm_beta, ssm_alpha, ssm_norm, ssm_out, else gated attention (q of 2·head_dim
// rows per head, k and v, as add_qkv lays them out; attn_output, attn_q_norm, attn_k_norm). A
// multi-token-prediction block (l >= n_layers) is gated attention plus nextn.eh_proj, enorm,
// hnorm and shared_head_norm. The FFN's norm is post_attention_norm (kFfnNorm).
void add_hybrid_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
inline constexpr const char* kHybridFfnNorm = "post_attention_norm.weight";

// What a multi-token-prediction block may have that llama.cpp reads and vkllm does not: its own
// embeddings and output head (the blocks are loaded, not run).
std::vector<UnrunTensor> nextn_own_head();

}  // namespace vkllm
