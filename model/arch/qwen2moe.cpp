// qwen2moe: Qwen1.5-MoE and Qwen2-57B-A14B. Qwen2's attention (q/k/v biases, NEOX rope); every
// block's FFN is routed (softmax, top expert_used_count, weights as they are: llama.cpp passes
// norm_w = false for this family) plus one shared expert of width
// expert_shared_feed_forward_length (default feed_forward_length) whose output is scaled by
// sigmoid(ffn_gate_inp_shexp · x), a gate of one row (docs/formats.md §8, §9.2).
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "error.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_expert_width(f, k, c);
  MoeConfig& m = c.moe;
  m.shared_hidden_dim = read_u32(f, k("expert_shared_feed_forward_length"), c.hidden_dim.at(0));
  m.shared_gate = true;
  m.gating = MoeGating::Softmax;
  m.weights_norm = false;
  m.weights_scale = 1.0f;
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_expert_width(w, k, c);
  // 0: the key is left out, so the reader's default (feed_forward_length) applies.
  if (c.moe.n_experts && c.moe.shared_hidden_dim)
    w.add(k("expert_shared_feed_forward_length"), c.moe.shared_hidden_dim);
}

void validate(const ModelConfig& c) {
  ENSURE(c.moe.n_experts > 0, "a qwen2moe model needs expert_count > 0");
  ENSURE(c.moe.shared_hidden_dim > 0, "qwen2moe's shared expert needs a width");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_moe_ffn(c, l, t);
}

}  // namespace

extern const Architecture qwen2moe_architecture = {
    .name = "qwen2moe",
    .gguf_names = {"qwen2moe"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional},
               .position = {.rope_mode = RopeMode::Neox},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
