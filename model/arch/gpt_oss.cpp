// gpt-oss: OpenAI's open-weight MoE models (20b, 120b), llama.cpp's LLM_ARCH_OPENAI_MOE. GQA with
// biases on q, k, v and the output, one learned attention-sink logit per head, and NEOX YaRN rope;
// sliding-window attention on alternating layers (even layers slide unless the file gives a
// pattern), with rope.freq_base_swa where the file has it. Every block is MoE: the router has a
// bias, the top-k experts are chosen by their raw logits and weighted by the softmax over those k
// (gating "softmax of the chosen"), each expert's three products have biases, and its gate is the
// clamped SwiGLU: g·sigmoid(1.702·g)·(u + 1), g = min(gate, 7), u = clamp(up, ±7). The block's
// FFN norm is stored as post_attention_norm (docs/formats.md §11).
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
  read_expert_width(f, k, c);
  c.sliding_window = read_u32(f, k("attention.sliding_window"));
  read_swa_pattern(f, k, c, 2);
  c.rope_swa = c.rope;
  c.rope_swa.theta = read_f32(f, k("rope.freq_base_swa"), c.rope.theta);
  c.moe.gating = MoeGating::SoftmaxWeight;  // llama.cpp's graph fixes it, whatever the file says
  c.moe.weights_norm = false;
  c.moe.weights_scale = read_f32(f, k("expert_weights_scale"), 1.0f);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_expert_width(w, k, c);
  write_swa(w, k, c);
  if (c.rope_swa.theta > 0 && c.rope_swa.theta != c.rope.theta) w.add(k("rope.freq_base_swa"), c.rope_swa.theta);
}

void validate(const ModelConfig& c) {
  ENSURE(c.moe.n_experts > 0 && c.moe.leading_dense_blocks == 0, "a gpt-oss model needs expert_count > 0");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  const MoeConfig& m = c.moe;
  uint64_t E = c.dim, F = m.expert_hidden_dim, n = m.n_experts;
  add_standard_attention(c, l, t);
  t.add(l, TensorRole::AttnSinks, "attn_sinks.weight", {c.n_heads});
  add_moe_ffn(c, l, t, "post_attention_norm.weight");
  t.add(l, TensorRole::FfnGateInpBias, "ffn_gate_inp.bias", {n});
  t.add(l, TensorRole::FfnGateExpsBias, "ffn_gate_exps.bias", {F, n});
  t.add(l, TensorRole::FfnDownExpsBias, "ffn_down_exps.bias", {E, n});
  t.add(l, TensorRole::FfnUpExpsBias, "ffn_up_exps.bias", {F, n});
}

}  // namespace

extern const Architecture gpt_oss_architecture = {
    .name = "gpt-oss",
    .gguf_names = {"gpt-oss"},
    .recipe = {.attention = {.form = AttentionForm::Standard,
                             .qkv_bias = Presence::Optional,
                             .out_bias = Presence::Required,
                             .sinks = true},
               .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
               .ffn = {.activation = FfnActivation::SwigluOai},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
