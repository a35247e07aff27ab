// deepseek2: DeepSeek-V2 / V2-Lite / V3 blocks with multi-head latent attention (docs/formats.md
// §1.5, §5). Two file layouts: new files split the KV up-projection into attn_k_b + attn_v_b and
// say so with the *_mla keys; old files keep it fused as attn_kv_b (pitfall 4). Blocks from
// leading_dense_block_count on are mixture-of-experts blocks with shared experts; V3 files route
// by sigmoid scores with a selection bias (exp_probs_b) and expert groups (docs/formats.md §8).
#include <fmt/format.h>

#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_mla(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  MlaConfig& m = c.mla;
  m.q_lora_rank = read_u32(f, k("attention.q_lora_rank"), 0);
  m.kv_lora_rank = read_u32(f, k("attention.kv_lora_rank"));
  m.qk_rope_head_dim = c.rope.dim = read_u32(f, k("rope.dimension_count"));
  uint32_t key_length = read_u32(f, k("attention.key_length"));
  uint32_t value_length = read_u32(f, k("attention.value_length"));
  uint32_t key_mla = read_u32(f, k("attention.key_length_mla"), 0);
  uint32_t value_mla = read_u32(f, k("attention.value_length_mla"), 0);
  if (key_mla != 0 && value_mla != 0) {
    m.layout = MlaLayout::Split;
    if (key_length != m.kv_lora_rank + m.qk_rope_head_dim || value_length != m.kv_lora_rank)
      f.fail(
          fmt::format("deepseek2 MLA key/value length {}/{} should be kv_lora_rank + rope dim / kv_lora_rank = {}/{}",
                      key_length, value_length, m.kv_lora_rank + m.qk_rope_head_dim, m.kv_lora_rank));
    key_length = key_mla;
    value_length = value_mla;
  } else {
    m.layout = MlaLayout::Fused;
  }
  if (key_length <= m.qk_rope_head_dim)
    f.fail(fmt::format("deepseek2 key length {} must exceed the rope dim {}", key_length, m.qk_rope_head_dim));
  m.qk_nope_head_dim = key_length - m.qk_rope_head_dim;
  m.v_head_dim = value_length;
  c.head_dim = key_length;
  c.v_head_dim = value_length;
  c.n_kv_heads = 1;
}

// docs/formats.md §8: the gating function defaults to softmax when the key is absent or 0 (V2
// files); the weights are normalised only when expert_weights_norm says so.
void read_moe(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  m.leading_dense_blocks = read_u32(f, k("leading_dense_block_count"), 0);
  m.expert_hidden_dim = read_u32(f, k("expert_feed_forward_length"), 0);
  m.n_shared_experts = read_u32(f, k("expert_shared_count"), 0);
  m.shared_hidden_dim = m.n_shared_experts * m.expert_hidden_dim;
  m.weights_scale = read_f32(f, k("expert_weights_scale"), 1.0f);
  m.weights_norm = f.get_bool(k("expert_weights_norm"), false);
  uint32_t gating = read_u32(f, k("expert_gating_func"), 0);
  m.gating = gating == 0 ? MoeGating::Softmax : MoeGating(gating);
}

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  c.rope.deepseek_yarn = true;  // its log multiplier is 0.1 * mscale_all_dim (docs/formats.md §5.4)
  read_mla(f, k, c);
  read_moe(f, k, c);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  const MlaConfig& m = c.mla;
  bool split = m.layout == MlaLayout::Split;
  w.add(k("attention.head_count_kv"), split ? 1u : c.n_heads);
  // Every deepseek2 file llama.cpp reads carries the expert keys, and its blocks from
  // leading_dense_block_count on must be MoE: a model without experts is all leading dense blocks.
  w.add(k("leading_dense_block_count"), c.moe.n_experts ? c.moe.leading_dense_blocks : c.n_layers);
  // 0 is written too: llama.cpp requires the key unless the block count is V2-Lite's (27), by
  // which it recognises the real files that leave it out.
  w.add(k("attention.q_lora_rank"), m.q_lora_rank);
  w.add(k("attention.kv_lora_rank"), m.kv_lora_rank);
  w.add(k("attention.key_length"), split ? m.kv_lora_rank + m.qk_rope_head_dim : c.head_dim);
  w.add(k("attention.value_length"), split ? m.kv_lora_rank : c.v_head_dim);
  if (split) {
    w.add(k("attention.key_length_mla"), c.head_dim);
    w.add(k("attention.value_length_mla"), c.v_head_dim);
  }
  w.add(k("expert_feed_forward_length"), c.moe.expert_hidden_dim);
  w.add(k("expert_shared_count"), c.moe.n_shared_experts);
  if (c.moe.n_experts) {
    w.add(k("expert_weights_scale"), c.moe.weights_scale);
    w.add(k("expert_weights_norm"), c.moe.weights_norm);
    w.add(k("expert_gating_func"), uint32_t(c.moe.gating));
  }
}

void validate(const ModelConfig& c) {
  const MlaConfig& m = c.mla;
  ENSURE(m.kv_lora_rank >= 1 && m.kv_lora_rank <= (1 << 16),
         fmt::format("kv_lora_rank = {} is out of range (1..65536)", m.kv_lora_rank));
  ENSURE(m.q_lora_rank <= (1 << 16), fmt::format("q_lora_rank = {} is out of range (0..65536)", m.q_lora_rank));
  ENSURE(m.qk_rope_head_dim == c.rope.dim, "MLA rope dim must equal rope.dimension_count");
  ENSURE(m.qk_nope_head_dim + m.qk_rope_head_dim == c.head_dim && m.v_head_dim == c.v_head_dim,
         "MLA head dims are inconsistent");
  ENSURE(m.layout != MlaLayout::None, "MLA layout is not set");
}

void add_latent_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  const MlaConfig& m = c.mla;
  uint64_t E = c.dim, H = c.n_heads, q = H * c.head_dim;
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  if (m.q_lora_rank) {
    t.add(l, TensorRole::AttnQA, "attn_q_a.weight", {E, m.q_lora_rank});
    t.add(l, TensorRole::AttnQANorm, "attn_q_a_norm.weight", {m.q_lora_rank});
    t.add(l, TensorRole::AttnQB, "attn_q_b.weight", {m.q_lora_rank, q});
  } else {
    t.add(l, TensorRole::AttnQ, "attn_q.weight", {E, q});
  }
  t.add(l, TensorRole::AttnKvA, "attn_kv_a_mqa.weight", {E, m.kv_lora_rank + m.qk_rope_head_dim});
  t.add(l, TensorRole::AttnKvANorm, "attn_kv_a_norm.weight", {m.kv_lora_rank});
  if (m.layout == MlaLayout::Split) {
    t.add(l, TensorRole::AttnKB, "attn_k_b.weight", {m.qk_nope_head_dim, m.kv_lora_rank, H});
    t.add(l, TensorRole::AttnVB, "attn_v_b.weight", {m.kv_lora_rank, m.v_head_dim, H});
  } else {
    t.add(l, TensorRole::AttnKvB, "attn_kv_b.weight", {m.kv_lora_rank, H * (m.qk_nope_head_dim + m.v_head_dim)});
  }
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * m.v_head_dim, E});
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_latent_attention(c, l, t);
  if (c.is_moe_layer(l))
    add_moe_ffn(c, l, t);
  else
    add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture deepseek2_architecture = {
    .name = "deepseek2",
    .gguf_names = {"deepseek2"},
    .recipe = {.attention = {.form = AttentionForm::Latent, .qkv_bias = Presence::None},
               .position = {.rope_mode = RopeMode::Norm, .full_rotary = false},
               .layouts = {.gate_up_exps = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
