// KV-cache bytes per token of each attention kind at one model's dimensions.
#include "arch/kv_comparison.h"

#include <algorithm>

namespace vkllm {

namespace {

// Bytes of a row of n values of type t, whole blocks.
uint64_t row(DType t, uint64_t n) {
  uint64_t b = info(t).block_values;
  return row_bytes(t, (n + b - 1) / b * b);
}

uint32_t gqa_heads(const ModelConfig& c) {
  if (c.attention_kind() == AttentionKind::GQA) return c.n_kv_heads;
  for (uint32_t group : {4u, 2u})
    for (uint32_t g = c.n_heads / group; g >= 2; --g)
      if (c.n_heads % g == 0) return g;
  return 1;
}

// Qwen3.5's proportions at this model's dims, or the model's own when it is a hybrid.
KvKindCost hybrid_cost(const ModelConfig& c, uint64_t per_head) {
  uint32_t g = gqa_heads(c), full = std::max(1u, c.n_layers / 4);
  uint64_t state = 0;
  if (c.hybrid()) {
    full = c.n_attention_layers(), g = c.n_kv_heads, state = c.recurrent_bytes_per_sequence();
  } else {
    LinearAttentionConfig l{.conv_kernel = 4, .k_heads = g, .v_heads = c.n_heads, .head_dim = c.head_dim};
    state = uint64_t(c.n_layers - full) * l.state_floats() * 4;
  }
  return {.kind = AttentionKind::Hybrid,
          .kv_heads = g,
          .bytes_per_token = uint64_t(full) * g * per_head,
          .attention_layers = full,
          .bytes_per_sequence = state};
}

}  // namespace

std::vector<KvKindCost> kv_costs_by_kind(const ModelConfig& c, DType kv) {
  uint64_t per_head = row(kv, c.head_dim) + row(kv, c.v_head_dim);
  auto heads = [&](AttentionKind k, uint32_t g) {
    return KvKindCost{.kind = k,
                      .kv_heads = g,
                      .bytes_per_token = uint64_t(c.n_layers) * g * per_head,
                      .attention_layers = c.n_layers};
  };
  bool mla = c.attention_kind() == AttentionKind::MLA;
  uint32_t latent = mla ? c.mla.kv_lora_rank : 4 * c.head_dim, rope = mla ? c.mla.qk_rope_head_dim : c.head_dim / 2;
  return {heads(AttentionKind::MHA, c.n_heads),
          heads(AttentionKind::GQA, gqa_heads(c)),
          heads(AttentionKind::MQA, 1),
          {.kind = AttentionKind::MLA,
           .kv_heads = 1,
           .latent = latent,
           .rope = rope,
           .bytes_per_token = uint64_t(c.n_layers) * row(kv, latent + rope),
           .attention_layers = c.n_layers},
          hybrid_cost(c, per_head)};
}

}  // namespace vkllm
