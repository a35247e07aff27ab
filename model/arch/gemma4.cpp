// gemma4: Gemma 4 (E2B, E4B, 31B, and the MoE 26B-A4B). Gemma's block (embeddings times
// sqrt(dim), NEOX rope, RMSNorm of q and k heads, norms of the attention and FFN outputs,
// GELU-gated FFN, final logit soft-cap when given) with these rules of its own (docs/formats.md §11):
// - the sliding-window layers are a per-layer array; they have their own head size
//   (key_length_swa), rope dims (dimension_count_swa) and base (freq_base_swa), and may have
//   another KV head count (head_count_kv as an array). Global layers rotate with rope_freqs:
//   factors of 1 then 1e30, so only their first pairs turn ("proportional" rope);
// - V is RMS-normed per head without a weight, and the query scale is 1;
// - global layers of a model without attn_v (attention_k_eq_v, the 31B) take V from K's projection;
// - the last attention.shared_kv_layers layers keep no KV: each reads the cache of the last
//   earlier layer of its kind;
// - E2B/E4B add per-layer embeddings: a second table of embedding_length_per_layer_input values
//   per layer and token, mixed with a projection of the embeddings, gated into each layer's output;
// - each layer's output may be scaled by layer_output_scale;
// - the MoE layers (26B-A4B) run the dense FFN beside the experts: the router reads
//   rmsnorm(x)/sqrt(dim)·ffn_gate_inp.scale, softmax over the experts, top-k renormalised, each
//   expert's output times ffn_down_exps.scale[e]; dense and expert outputs are normed apart
//   (post_ffw_norm_1/2), summed and normed by post_ffw_norm.
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.sliding_window = read_u32(f, k("attention.sliding_window"));
  read_swa_pattern(f, k, c, 0);
  c.head_dim_swa = read_u32(f, k("attention.key_length_swa"));
  c.v_head_dim_swa = read_u32(f, k("attention.value_length_swa"));
  c.rope_swa = c.rope;
  c.rope_swa.dim = read_u32(f, k("rope.dimension_count_swa"), c.rope.dim);
  c.rope_swa.theta = read_f32(f, k("rope.freq_base_swa"), c.rope.theta);
  c.n_kv_shared_layers = read_u32(f, k("attention.shared_kv_layers"), 0);
  c.per_layer_embd = read_u32(f, k("embedding_length_per_layer_input"));
  c.final_softcap = read_f32(f, k("final_logit_softcapping"), 0.0f);
  c.multipliers.attention = 1.0f;
  read_expert_width(f, k, c);
  normalised_routing(c.moe);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_swa(w, k, c);
  w.add(k("attention.key_length_swa"), c.head_dim_swa ? c.head_dim_swa : c.head_dim);
  w.add(k("attention.value_length_swa"), c.v_head_dim_swa ? c.v_head_dim_swa : c.v_head_dim);
  w.add(k("rope.dimension_count_swa"), c.rope_swa.dim);
  if (c.rope_swa.theta > 0) w.add(k("rope.freq_base_swa"), c.rope_swa.theta);
  if (c.n_kv_shared_layers) w.add(k("attention.shared_kv_layers"), c.n_kv_shared_layers);
  w.add(k("embedding_length_per_layer_input"), c.per_layer_embd);
  if (c.final_softcap > 0) w.add(k("final_logit_softcapping"), c.final_softcap);
  write_expert_width(w, k, c);
}

// Where the file says so by its tensors: no attn_v in the first global layer (V from K; a fused
// attn_qkv always has V rows), attn_k in the first shared-KV layer, a layer_output_scale, and
// rope_freqs for the global layers only.
void tensor_flags(const GgufFile& f, ModelConfig& c) {
  c.rope_swa.has_freq_factors = false;
  for (uint32_t l = 0; l < c.n_layers && !c.layout.fused_qkv; ++l)
    if (!c.is_swa_layer(l) && c.has_kv(l)) {
      c.attention_k_eq_v = !file_has(f, c, l, TensorRole::AttnV, [](ModelConfig&) {});
      break;
    }
  for (uint32_t l = 0; l < c.n_layers && !c.layout.fused_qkv; ++l)
    if (!c.has_kv(l)) {
      c.kv_in_shared_layers =
          file_has(f, c, l, TensorRole::AttnK, [](ModelConfig& p) { p.kv_in_shared_layers = true; });
      break;
    }
  c.layer_out_scale = file_has(f, c, 0, TensorRole::LayerOutScale, [](ModelConfig& p) { p.layer_out_scale = true; });
}

void validate(const ModelConfig& c) {
  ENSURE(c.head_dim == c.v_head_dim && c.attention_of(0).head_dim == c.attention_of(0).v_head_dim,
         "gemma4 needs key and value head sizes that are equal");
  ENSURE(c.sliding_window > 0, "gemma4 needs attention.sliding_window > 0");
}

// A fused attn_qkv holds K and V rows in every layer, shared-KV and V-from-K ones too (unused
// there), as llama.cpp's gemma4.cpp sizes it. Shared-KV layers may carry K (and V, and K's norm)
// of their own, which nothing reads (kv_in_shared_layers).
void add_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  LayerAttention a = c.attention_of(l);
  uint64_t E = c.dim, q = uint64_t(a.n_heads) * a.head_dim, kv = uint64_t(a.n_kv_heads) * a.head_dim;
  bool kv_weights = a.kv_layer == l || c.kv_in_shared_layers;
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  if (c.layout.fused_qkv) {
    add_qkv(c, l, t, q, kv, kv);
  } else {
    t.add(l, TensorRole::AttnQ, "attn_q.weight", {E, q});
    if (kv_weights) {
      t.add(l, TensorRole::AttnK, "attn_k.weight", {E, kv});
      if (!(c.attention_k_eq_v && !c.is_swa_layer(l))) t.add(l, TensorRole::AttnV, "attn_v.weight", {E, kv});
    }
  }
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {q, E});
  t.add(l, TensorRole::AttnQNorm, "attn_q_norm.weight", {a.head_dim});
  if (kv_weights) t.add(l, TensorRole::AttnKNorm, "attn_k_norm.weight", {a.head_dim});
  t.add(l, TensorRole::AttnPostNorm, "post_attention_norm.weight", {E});
  if (c.layer_out_scale) t.add(l, TensorRole::LayerOutScale, "layer_output_scale.weight", {1});
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, P = c.per_layer_embd;
  add_attention(c, l, t);
  add_gated_ffn(c, l, t);
  t.add(l, TensorRole::FfnPostNorm, "post_ffw_norm.weight", {E});
  if (c.is_moe_layer(l)) {
    const MoeConfig& m = c.moe;
    uint64_t F = m.expert_hidden_dim, n = m.n_experts;
    t.add(l, TensorRole::FfnGateInp, "ffn_gate_inp.weight", {E, n});
    t.add(l, TensorRole::FfnGateInpScale, "ffn_gate_inp.scale", {E});
    t.add(l, TensorRole::FfnPreNorm2, "pre_ffw_norm_2.weight", {E});
    t.add(l, TensorRole::FfnPostNorm1, "post_ffw_norm_1.weight", {E});
    t.add(l, TensorRole::FfnPostNorm2, "post_ffw_norm_2.weight", {E});
    add_gate_up_exps(c, l, t);
    t.add(l, TensorRole::FfnDownExps, "ffn_down_exps.weight", {F, E, n});
    t.add(l, TensorRole::FfnDownExpsScale, "ffn_down_exps.scale", {n});
  }
  if (P) {
    t.add(l, TensorRole::PerLayerInpGate, "inp_gate.weight", {E, P});
    t.add(l, TensorRole::PerLayerProj, "proj.weight", {P, E});
    t.add(l, TensorRole::PerLayerPostNorm, "post_norm.weight", {E});
  }
}

}  // namespace

extern const Architecture gemma4_architecture = {
    .name = "gemma4",
    .gguf_names = {"gemma4"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qk_norm = true, .v_norm = true},
               .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
               .norms = {.post_norms = true},
               .ffn = {.activation = FfnActivation::Gelu, .moe_beside_dense = true},
               .embeddings = {.scale = true},
               .layouts = {.qkv = Fusion::Optional, .gate_up_exps = Fusion::Usual}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .tensor_flags = tensor_flags,
};

}  // namespace vkllm
