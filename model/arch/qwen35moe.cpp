// qwen35moe: Qwen3.5 / Qwen3.6 mixture-of-experts hybrids (35B-A3B, 122B-A10B; docs/formats.md
// §10): qwen35's layers (arch/hybrid.h) with every FFN routed: softmax over the experts, the top
// expert_used_count, their weights renormalised to sum 1 (llama.cpp passes norm_w = true and no
// scale for this family), plus one shared expert of width expert_shared_feed_forward_length
// (default feed_forward_length) scaled by sigmoid(ffn_gate_inp_shexp · x).
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/hybrid.h"
#include "arch/keys.h"
#include "error.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_hybrid(f, k, c);
  read_expert_width(f, k, c);
  MoeConfig& m = c.moe;
  m.shared_hidden_dim = read_u32(f, k("expert_shared_feed_forward_length"), c.hidden_dim.at(0));
  m.shared_gate = true;
  normalised_routing(m);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_hybrid(w, k, c);
  write_expert_width(w, k, c);
  if (c.moe.n_experts && c.moe.shared_hidden_dim)
    w.add(k("expert_shared_feed_forward_length"), c.moe.shared_hidden_dim);
}

void validate(const ModelConfig& c) {
  validate_hybrid(c);
  ENSURE(c.moe.n_experts > 0, "a qwen35moe model needs expert_count > 0");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_hybrid_attention(c, l, t);
  add_moe_ffn(c, l, t, kHybridFfnNorm);
}

}  // namespace

extern const Architecture qwen35moe_architecture = {
    .name = "qwen35moe",
    .gguf_names = {"qwen35moe"},
    .recipe =
        {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true, .gated = true},
         .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
         .layouts = {.qkv = Fusion::Optional, .gate_up_exps = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .nextn_blocks = true,
    .unrun_tensors = nextn_own_head(),
};

}  // namespace vkllm
