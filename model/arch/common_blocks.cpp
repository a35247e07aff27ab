// The hyperparameters and tensor names of the blocks several families share (docs/formats.md §1.4).
#include "arch/common_blocks.h"

#include <fmt/format.h>

#include <algorithm>

#include "arch/keys.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

BlockRecipe llama_recipe() {
  return {
      .attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .out_bias = Presence::Optional},
      .position = {.rope_mode = RopeMode::Norm},
      .ffn = {.bias = Presence::Optional},
      .layouts = {.qkv = Fusion::Optional}};
}

std::vector<UnrunTensor> longrope_factors() {
  return {{"rope_factors_long.weight", "LongRoPE factors"}, {"rope_factors_short.weight", "LongRoPE factors"}};
}

void read_standard_heads(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  if (c.n_heads == 0) f.fail("attention.head_count is 0");
  c.head_dim = read_u32(f, k("attention.key_length"), c.dim / c.n_heads);
  c.v_head_dim = read_u32(f, k("attention.value_length"), c.head_dim);
  c.rope.dim = read_u32(f, k("rope.dimension_count"), c.head_dim);
}

void write_standard_heads(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  if (c.kv_heads.empty())
    w.add(k("attention.head_count_kv"), c.n_kv_heads);
  else
    w.add_array(k("attention.head_count_kv"), c.kv_heads);
  w.add(k("attention.key_length"), c.head_dim);
  w.add(k("attention.value_length"), c.v_head_dim);
}

void read_mixers_by_kv_heads(ModelConfig& c, Mixer recurrent) {
  std::vector<uint32_t> kv = c.kv_heads.empty() ? std::vector<uint32_t>(c.n_layers, c.n_kv_heads) : c.kv_heads;
  c.mixers.assign(c.n_layers, Mixer::Attention);
  c.n_kv_heads = 0;
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    if (kv[l] == 0) c.mixers[l] = recurrent;
    if (kv[l] != 0 && c.n_kv_heads == 0) c.n_kv_heads = kv[l];
  }
  if (c.n_kv_heads == 0) c.n_kv_heads = c.n_heads;  // no attention block: nothing reads it
  c.kv_heads = kv;
}

void write_heads_by_mixer(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  ModelConfig heads = c;
  heads.kv_heads.resize(c.n_layers);
  for (uint32_t l = 0; l < c.n_layers; ++l) heads.kv_heads[l] = c.has_attention(l) ? c.attention_of(l).n_kv_heads : 0;
  write_standard_heads(w, k, heads);
}

void read_multipliers(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  Multipliers& m = c.multipliers;
  m.embedding = read_f32(f, k("embedding_scale"), 0.0f);
  m.residual = read_f32(f, k("residual_scale"), 0.0f);
  m.attention = read_f32(f, k("attention.scale"), 0.0f);
  m.logit = read_f32(f, k("logit_scale"), 0.0f);
}

void write_multipliers(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  const Multipliers& m = c.multipliers;
  if (m.embedding) w.add(k("embedding_scale"), m.embedding);
  if (m.residual) w.add(k("residual_scale"), m.residual);
  if (m.attention) w.add(k("attention.scale"), m.attention);
  if (m.logit) w.add(k("logit_scale"), m.logit);
}

void add_qkv(const ModelConfig& c, uint32_t l, TensorCatalogue& t, uint64_t q, uint64_t k, uint64_t v) {
  uint64_t E = c.dim;
  if (c.layout.fused_qkv) {
    t.add(l, TensorRole::AttnQkv, "attn_qkv.weight", {E, q + k + v});
    if (c.qkv_bias && c.layout.fused_qkv_bias) t.add(l, TensorRole::AttnQkvBias, "attn_qkv.bias", {q + k + v});
  } else {
    t.add(l, TensorRole::AttnQ, "attn_q.weight", {E, q});
    t.add(l, TensorRole::AttnK, "attn_k.weight", {E, k});
    t.add(l, TensorRole::AttnV, "attn_v.weight", {E, v});
  }
  if (c.qkv_bias && !(c.layout.fused_qkv && c.layout.fused_qkv_bias)) {
    t.add(l, TensorRole::AttnQBias, "attn_q.bias", {q});
    t.add(l, TensorRole::AttnKBias, "attn_k.bias", {k});
    t.add(l, TensorRole::AttnVBias, "attn_v.bias", {v});
  }
}

// Multi-token-prediction blocks (l >= n_layers) have the last layer's shape.
void add_standard_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  LayerAttention a = c.attention_of(std::min(l, c.n_layers - 1));
  uint64_t E = c.dim, H = a.n_heads, Hkv = a.n_kv_heads, hd = a.head_dim, vd = a.v_head_dim;
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  add_qkv(c, l, t, H * hd, Hkv * hd, Hkv * vd);
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * vd, E});
  if (c.attn_out_bias) t.add(l, TensorRole::AttnOutBias, "attn_output.bias", {E});
}

void add_gated_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t, std::string_view norm) {
  uint64_t E = c.dim, F = c.hidden_dim.at(std::min<size_t>(l, c.hidden_dim.size() - 1));
  t.add(l, TensorRole::FfnNorm, norm, {E});
  t.add(l, TensorRole::FfnGate, "ffn_gate.weight", {E, F});
  t.add(l, TensorRole::FfnUp, "ffn_up.weight", {E, F});
  t.add(l, TensorRole::FfnDown, "ffn_down.weight", {F, E});
  if (!c.ffn_bias) return;
  t.add(l, TensorRole::FfnGateBias, "ffn_gate.bias", {F});
  t.add(l, TensorRole::FfnDownBias, "ffn_down.bias", {E});
  t.add(l, TensorRole::FfnUpBias, "ffn_up.bias", {F});
}

void add_gate_up_exps(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, F = c.moe.expert_hidden_dim, n = c.moe.n_experts;
  if (c.layout.fused_gate_up_exps) {
    t.add(l, TensorRole::FfnGateUpExps, "ffn_gate_up_exps.weight", {E, 2 * F, n});
    return;
  }
  t.add(l, TensorRole::FfnGateExps, "ffn_gate_exps.weight", {E, F, n});
  t.add(l, TensorRole::FfnUpExps, "ffn_up_exps.weight", {E, F, n});
}

void add_standard_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_gated_ffn(c, l, t);
}

void add_qk_norm(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t hd = c.attention_of(std::min(l, c.n_layers - 1)).head_dim;
  t.add(l, TensorRole::AttnKNorm, "attn_k_norm.weight", {hd});
  t.add(l, TensorRole::AttnQNorm, "attn_q_norm.weight", {hd});
}

void add_moe_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t, std::string_view norm) {
  const MoeConfig& m = c.moe;
  uint64_t E = c.dim, F = m.expert_hidden_dim, n = m.n_experts, S = m.shared_hidden_dim;
  t.add(l, TensorRole::FfnNorm, norm, {E});
  t.add(l, TensorRole::FfnGateInp, "ffn_gate_inp.weight", {E, n});
  if (m.probs_bias) t.add(l, TensorRole::ExpProbsB, "exp_probs_b.bias", {n});
  if (c.layout.fused_gate_up_exps) {
    add_gate_up_exps(c, l, t);
    t.add(l, TensorRole::FfnDownExps, "ffn_down_exps.weight", {F, E, n});
  } else {  // the order the fixtures draw their weights in
    t.add(l, TensorRole::FfnGateExps, "ffn_gate_exps.weight", {E, F, n});
    t.add(l, TensorRole::FfnDownExps, "ffn_down_exps.weight", {F, E, n});
    t.add(l, TensorRole::FfnUpExps, "ffn_up_exps.weight", {E, F, n});
  }
  if (S == 0) return;
  if (m.shared_gate) t.add(l, TensorRole::FfnGateInpShexp, "ffn_gate_inp_shexp.weight", {E});
  t.add(l, TensorRole::FfnGateShexp, "ffn_gate_shexp.weight", {E, S});
  t.add(l, TensorRole::FfnDownShexp, "ffn_down_shexp.weight", {S, E});
  t.add(l, TensorRole::FfnUpShexp, "ffn_up_shexp.weight", {E, S});
}

void normalised_routing(MoeConfig& m, MoeGating gating) {
  m.gating = gating;
  m.weights_norm = true;
  m.weights_scale = 1.0f;
}

void read_expert_width(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  if (m.n_experts == 0) return;
  uint32_t fallback = m.n_experts_used ? c.hidden_dim.at(0) / m.n_experts_used : 0;
  m.expert_hidden_dim = read_u32(f, k("expert_feed_forward_length"), fallback);
}

void write_expert_width(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  if (c.moe.n_experts) w.add(k("expert_feed_forward_length"), c.moe.expert_hidden_dim);
}

}  // namespace vkllm

namespace vkllm {

void read_swa_pattern(const GgufFile& f, const KeyPrefix& k, ModelConfig& c, uint32_t default_period) {
  std::string key = k("attention.sliding_window_pattern");
  c.swa_layers.assign(c.n_layers, 0);
  const GgufValue* v = f.find(key);
  if (v && v->type() == GgufType::Array) {
    if (v->size() != c.n_layers)
      f.fail(fmt::format("metadata key {} has {} entries for {} layers", key, v->size(), c.n_layers));
    size_t l = 0;
    for (const GgufValue& e : v->elements()) {
      std::optional<bool> b = e.to_bool();
      std::optional<int64_t> i = e.to_int();
      if (!b && !i) f.fail(fmt::format("metadata key {} must hold bools or integers", key));
      c.swa_layers[l++] = b ? *b : *i != 0;
    }
    return;
  }
  uint32_t n = read_u32(f, key, default_period);
  for (uint32_t l = 0; l < c.n_layers; ++l) c.swa_layers[l] = n == 0 || l % n < n - 1;
}

void write_swa(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  if (c.sliding_window > 0) w.add(k("attention.sliding_window"), c.sliding_window);
  if (c.swa_layers.empty()) return;  // the family's default pattern
  std::vector<bool> pattern(c.swa_layers.begin(), c.swa_layers.end());
  w.add_array(k("attention.sliding_window_pattern"), pattern);
}

void add_gemma_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t, bool qk_norm) {
  uint64_t E = c.dim;
  add_standard_attention(c, l, t);
  t.add(l, TensorRole::AttnPostNorm, "post_attention_norm.weight", {E});
  if (qk_norm) add_qk_norm(c, l, t);
  add_gated_ffn(c, l, t);
  t.add(l, TensorRole::FfnPostNorm, "post_ffw_norm.weight", {E});
}

}  // namespace vkllm
