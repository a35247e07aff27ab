// qwen35: Qwen3.5 / Qwen3.6 dense hybrids (0.8B .. 27B; docs/formats.md §10). Three layers in four
// are Gated DeltaNet linear attention (arch/hybrid.h), the rest gated full attention: GQA with
// q/k head norms, a sigmoid output gate from the doubled q projection, NEOX rope over a quarter
// of the head in interleaved sections. Each block's FFN (a SiLU-gated FFN) is normed by
// post_attention_norm. Multi-token-prediction blocks after the trunk load and are not run.
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/hybrid.h"
#include "arch/keys.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_hybrid(f, k, c);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_hybrid(w, k, c);
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_hybrid_attention(c, l, t);
  add_gated_ffn(c, l, t, kHybridFfnNorm);
}

}  // namespace

extern const Architecture qwen35_architecture = {
    .name = "qwen35",
    .gguf_names = {"qwen35"},
    .recipe =
        {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true, .gated = true},
         .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
         .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate_hybrid,
    .layer_tensors = layer_tensors,
    .nextn_blocks = true,
    .unrun_tensors = nextn_own_head(),
};

}  // namespace vkllm
