// qwen3moe: Qwen3 mixture-of-experts models (Qwen3-30B-A3B, 235B-A22B). Qwen3's attention (q/k
// head norms, NEOX rope, key_length heads); every block's FFN is routed: softmax over the
// experts, the top expert_used_count chosen, their weights renormalised to sum 1 (llama.cpp
// passes norm_w = true for this family whatever the file says), no shared expert
// (docs/formats.md §8, §9.1).
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "error.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_expert_width(f, k, c);
  normalised_routing(c.moe);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_expert_width(w, k, c);
}

void validate(const ModelConfig& c) { ENSURE(c.moe.n_experts > 0, "a qwen3moe model needs expert_count > 0"); }

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_qk_norm(c, l, t);
  add_moe_ffn(c, l, t);
}

}  // namespace

extern const Architecture qwen3moe_architecture = {
    .name = "qwen3moe",
    .gguf_names = {"qwen3moe"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true},
               .position = {.rope_mode = RopeMode::Neox},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
