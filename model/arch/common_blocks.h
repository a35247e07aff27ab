// What several families share: the hyperparameters and tensor names of standard (per-head q/k/v/o)
// attention and of the gated feed-forward block. A family's file composes its catalogue from these.
#pragma once
#include <cstdint>

namespace vkllm {

class GgufFile;
class GgufWriter;
class TensorCatalogue;
struct KeyPrefix;
struct ModelConfig;

// attention.key_length / value_length (default dim / heads), rope.dimension_count (default the
// head dim).
void read_standard_heads(const GgufFile& f, const KeyPrefix& k, ModelConfig& c);
void write_standard_heads(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c);

// attn_norm, attn_q/k/v (+ biases when c.qkv_bias), attn_output.
void add_standard_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// ffn_norm, ffn_gate, ffn_up, ffn_down.
void add_gated_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t);
// A standard block: standard attention, then the gated FFN (llama, mistral, qwen2).
void add_standard_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t);

}  // namespace vkllm
