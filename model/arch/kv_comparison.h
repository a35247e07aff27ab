// What each attention kind would keep in the KV cache per token at one model's dimensions (its
// layers, query heads and head dims): the comparison `vkllm info` and GET /v1/info report next to
// what the model itself caches (docs/design.md "Attention kinds and KV buffers").
#pragma once
#include <cstdint>
#include <vector>

#include "arch/model_config.h"
#include "dtype.h"

namespace vkllm {

struct KvKindCost {
  AttentionKind kind;
  uint32_t kv_heads = 0;            // K/V heads cached (MLA: 1, the latent row)
  uint32_t latent = 0, rope = 0;    // MLA: the row's kv_lora_rank and rope dims
  uint64_t bytes_per_token = 0;     // over the layers that cache K/V, stored as the given type
  uint32_t attention_layers = 0;    // layers that cache K/V (hybrid: the full-attention ones)
  uint64_t bytes_per_sequence = 0;  // hybrid: the linear layers' state, f32, whatever the length
};

// MHA, GQA, MQA, MLA, hybrid in that order. MHA caches every head's K (head_dim) and V (v_head_dim);
// GQA the model's own KV heads when it is GQA, else the largest divisor g >= 2 of the heads with
// at least 4 (else 2) query heads per KV head (32 heads: 8), or 1 when there is none; MQA one
// head; MLA one latent row per layer, the model's own when it is MLA, else DeepSeek-V2's
// proportions (kv_lora_rank 4 head dims, rope dims half a head dim: 512 + 64 for 128).
// Hybrid: Qwen3.5's pattern, a GQA layer (the GQA heads above) every 4th layer (at least one) and Gated DeltaNet
// in the others, whose state per sequence is the model's own when it is hybrid, else one value
// head per query head and one key head per GQA head, all of head_dim, with a 4-tap conv.
// Quantised types count whole blocks per row.
std::vector<KvKindCost> kv_costs_by_kind(const ModelConfig& c, DType kv);

}  // namespace vkllm
