// nemotron_h and nemotron_h_moe: NVIDIA's Nemotron-H (8B, 47B) and Nemotron 3 Nano (30B-A3B)
// hybrids (docs/formats.md §15, §16). Each block is one of three kinds, read from the per-layer
// arrays as llama.cpp reads them: a Mamba-2 mixer (attention.head_count_kv and
// feed_forward_length both 0), attention without rope (feed_forward_length 0), or an FFN alone
// (nemotron_h: up → squared ReLU → down, optional biases; nemotron_h_moe: a sigmoid-routed
// mixture of ungated squared-ReLU experts, its choice biased by exp_probs_b, optionally through a
// latent down/up projection, plus an ungated shared expert). Every block norms its input with
// attn_norm. The MoE family's multi-token-prediction block loads and is not run.
#include <fmt/format.h>

#include <algorithm>

#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/mamba2.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

// Which block each layer is, from head_count_kv (read into kv_heads) and feed_forward_length.
void read_blocks(ModelConfig& c) {
  std::vector<uint32_t> kv = c.kv_heads.empty() ? std::vector<uint32_t>(c.n_layers, c.n_kv_heads) : c.kv_heads;
  c.mixers.assign(c.n_layers, Mixer::None);
  c.ffn_layers.assign(c.n_layers, 0);
  uint32_t attention_kv = 0;
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    bool ffn = c.hidden_dim[l] != 0;
    c.ffn_layers[l] = ffn;
    c.mixers[l] = ffn ? Mixer::None : kv[l] == 0 ? Mixer::Mamba2 : Mixer::Attention;
    if (c.mixers[l] == Mixer::Attention && !attention_kv) attention_kv = kv[l];
  }
  // The attention layers' KV heads stand for the model's (the others' 0 only marks the kind).
  c.n_kv_heads = attention_kv ? attention_kv : c.n_heads;
  c.nope_layers.assign(c.n_layers, 1);  // no block rotates
  for (uint32_t l = 0; l < c.kv_heads.size(); ++l)
    if (c.mixers[l] != Mixer::Attention) c.kv_heads[l] = c.n_kv_heads;
  if (std::all_of(c.kv_heads.begin(), c.kv_heads.end(), [&](uint32_t h) { return h == c.n_kv_heads; }))
    c.kv_heads.clear();
}

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_mamba2(f, k, c);
  read_blocks(c);
  if (c.moe.n_experts == 0) return;
  MoeConfig& m = c.moe;
  m.expert_hidden_dim = read_u32(f, k("expert_feed_forward_length"));
  m.shared_hidden_dim = read_u32(f, k("expert_shared_feed_forward_length"), 0);
  m.n_shared_experts = read_u32(f, k("expert_shared_count"), 0);
  m.weights_norm = f.get_bool(k("expert_weights_norm"), false);
  m.weights_scale = read_f32(f, k("expert_weights_scale"), 1.0f);
  m.latent_dim = read_u32(f, k("moe_latent_size"), 0);
  m.gating = MoeGating::Sigmoid;  // llama.cpp passes sigmoid for this family whatever the file says
  m.probs_bias = true;
}

// head_count_kv as llama.cpp's converter writes it: 0 where a block has no attention (the common
// writer's feed_forward_length holds 0 where a block has no FFN).
void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_mamba2(w, k, c);
  std::vector<uint32_t> kv(c.n_layers + c.n_nextn_layers, c.n_kv_heads);  // the MTP block has attention
  for (uint32_t l = 0; l < c.n_layers; ++l) kv[l] = c.has_attention(l) ? c.attention_of(l).n_kv_heads : 0;
  w.add_array(k("attention.head_count_kv"), kv);
  w.add(k("attention.key_length"), c.head_dim);
  w.add(k("attention.value_length"), c.v_head_dim);
  w.add(k("attention.layer_norm_epsilon"), c.norm_eps);  // llama.cpp requires it (the MTP head's norm)
  if (!c.moe.n_experts) return;
  const MoeConfig& m = c.moe;
  w.add(k("expert_feed_forward_length"), m.expert_hidden_dim);
  w.add(k("expert_shared_feed_forward_length"), m.shared_hidden_dim);
  w.add(k("expert_shared_count"), m.n_shared_experts);
  w.add(k("expert_weights_norm"), m.weights_norm);
  w.add(k("expert_weights_scale"), m.weights_scale);
  if (m.latent_dim) w.add(k("moe_latent_size"), m.latent_dim);
}

void validate(const ModelConfig& c) {
  ENSURE(c.mixers.size() == c.n_layers, "the blocks' kinds need one entry per layer");
  validate_mamba2(c);
  ENSURE(c.head_dim == c.v_head_dim,
         fmt::format("key length {} and value length {} must be equal", c.head_dim, c.v_head_dim));
  const MoeConfig& m = c.moe;
  if (m.n_experts == 0) return;
  ENSURE(m.shared_hidden_dim > 0, "a nemotron_h_moe model needs expert_shared_feed_forward_length > 0");
  ENSURE(m.latent_dim <= c.dim, fmt::format("moe_latent_size {} exceeds the width {}", m.latent_dim, c.dim));
}

// The attention block: q, k, v, o (o's bias where the file has it), no rope, no head norms.
void add_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, H = c.n_heads, G = c.n_kv_heads, hd = c.head_dim;
  add_qkv(c, l, t, H * hd, G * hd, G * hd);
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * hd, E});
  if (c.attn_out_bias) t.add(l, TensorRole::AttnOutBias, "attn_output.bias", {E});
}

// The dense FFN: up → squared ReLU → down, their biases where the file has them.
void add_relu2_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, F = c.hidden_dim[l];
  t.add(l, TensorRole::FfnUp, "ffn_up.weight", {E, F});
  t.add(l, TensorRole::FfnDown, "ffn_down.weight", {F, E});
  if (!c.ffn_bias) return;
  t.add(l, TensorRole::FfnUpBias, "ffn_up.bias", {F});
  t.add(l, TensorRole::FfnDownBias, "ffn_down.bias", {E});
}

// The MoE FFN: the router and its choice bias, the ungated experts (at the latent width where
// there is one, between its down and up projections), the ungated shared expert.
void add_moe(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  const MoeConfig& m = c.moe;
  uint64_t E = c.dim, n = m.n_experts, F = m.expert_hidden_dim, S = m.shared_hidden_dim;
  uint64_t L = m.latent_dim ? m.latent_dim : E;
  t.add(l, TensorRole::FfnGateInp, "ffn_gate_inp.weight", {E, n});
  t.add(l, TensorRole::ExpProbsB, "exp_probs_b.bias", {n});
  if (m.latent_dim) {
    t.add(l, TensorRole::FfnLatentDown, "ffn_latent_down.weight", {E, L});
    t.add(l, TensorRole::FfnLatentUp, "ffn_latent_up.weight", {L, E});
  }
  t.add(l, TensorRole::FfnDownExps, "ffn_down_exps.weight", {F, L, n});
  t.add(l, TensorRole::FfnUpExps, "ffn_up_exps.weight", {L, F, n});
  t.add(l, TensorRole::FfnDownShexp, "ffn_down_shexp.weight", {S, E});
  t.add(l, TensorRole::FfnUpShexp, "ffn_up_shexp.weight", {E, S});
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim;
  if (l >= c.n_layers) {  // the multi-token-prediction block: attention and MoE, loaded, not run
    t.add(l, TensorRole::NextnEnorm, "nextn.enorm.weight", {E});
    t.add(l, TensorRole::NextnHnorm, "nextn.hnorm.weight", {E});
    t.add(l, TensorRole::NextnEhProj, "nextn.eh_proj.weight", {2 * E, E});
    t.add(l, TensorRole::NextnHeadNorm, "nextn.shared_head_norm.weight", {E});
    t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
    add_attention(c, l, t);
    t.add(l, TensorRole::AttnPostNorm, "post_attention_norm.weight", {E});
    add_moe(c, l, t);
    return;
  }
  // Every block norms its input by attn_norm: an FFN-only block's norm is its FFN's.
  t.add(l, c.has_ffn(l) ? TensorRole::FfnNorm : TensorRole::AttnNorm, "attn_norm.weight", {E});
  if (c.mixer(l) == Mixer::Mamba2)
    add_mamba2_mixer(c, l, t);
  else if (c.has_attention(l))
    add_attention(c, l, t);
  else if (c.moe.n_experts)
    add_moe(c, l, t);
  else
    add_relu2_ffn(c, l, t);
}

// The dense FFN's biases, probed in the first FFN block (the common probe reads block 0, a Mamba-2
// block here); the attention biases are probed by the common code.
void tensor_flags(const GgufFile& f, ModelConfig& c) {
  for (uint32_t l = 0; l < c.n_layers && !c.moe.n_experts; ++l) {
    if (!c.has_ffn(l)) continue;
    c.ffn_bias = file_has(f, c, l, TensorRole::FfnUpBias, [](ModelConfig& p) { p.ffn_bias = true; });
    break;
  }
}

// The dense family's FFN may have biases; the MoE family has no dense FFN.
constexpr BlockRecipe recipe(Presence ffn_bias) {
  return {
      .attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .out_bias = Presence::Optional},
      .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
      .ffn = {.activation = FfnActivation::ReluSqr, .bias = ffn_bias},
      .layouts = {.qkv = Fusion::Optional}};
}

}  // namespace

extern const Architecture nemotron_h_architecture = {
    .name = "nemotron_h",
    .gguf_names = {"nemotron_h"},
    .recipe = recipe(Presence::Optional),
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .tensor_flags = tensor_flags,
};

extern const Architecture nemotron_h_moe_architecture = {
    .name = "nemotron_h_moe",
    .gguf_names = {"nemotron_h_moe"},
    .recipe = recipe(Presence::None),
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .tensor_flags = tensor_flags,
    .nextn_blocks = true,
    .unrun_tensors = {{"nextn.embed_tokens.weight", "the multi-token-prediction block's own embeddings"},
                      {"nextn.shared_head_head.weight", "the multi-token-prediction block's own output head"}},
};

}  // namespace vkllm
