// gemma2: Gemma 2 (2B, 9B, 27B). Embeddings times sqrt(dim); norm weights stored as 1 + w by the
// converter (used as they are); a norm of each block's output before its residual add
// (post_attention_norm, post_ffw_norm); GELU-gated FFN; NEOX rope; tied output (llama.cpp reads no output.weight for
// gemma2; one in the file is used). Attention scores are soft-capped (cap·tanh(s / cap), attn_logit_softcapping,
// default 50), and so are the logits (final_logit_softcapping, default 30); every other layer, from layer 0, sees only
// the last attention.sliding_window keys (default 4096). The query scale is 1/sqrt(key_length), except 1/sqrt(dim /
// heads) for the 27B (46 layers), as llama.cpp decides by layer count (docs/formats.md §9.3).
#include <cmath>

#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.sliding_window = read_u32(f, k("attention.sliding_window"), 4096);
  read_swa_pattern(f, k, c, 2);
  c.rope_swa = c.rope;
  c.rope_swa.theta = read_f32(f, k("rope.freq_base_swa"), c.rope.theta);
  c.attn_softcap = read_f32(f, k("attn_logit_softcapping"), 50.0f);
  c.final_softcap = read_f32(f, k("final_logit_softcapping"), 30.0f);
  c.multipliers.attention = float(1.0 / std::sqrt(c.n_layers == 46 ? double(c.dim / c.n_heads) : double(c.head_dim)));
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_swa(w, k, c);
  if (c.rope_swa.theta > 0 && c.rope_swa.theta != c.rope.theta) w.add(k("rope.freq_base_swa"), c.rope_swa.theta);
  if (c.attn_softcap > 0) w.add(k("attn_logit_softcapping"), c.attn_softcap);
  if (c.final_softcap > 0) w.add(k("final_logit_softcapping"), c.final_softcap);
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) { add_gemma_block(c, l, t, false); }

}  // namespace

extern const Architecture gemma2_architecture = {
    .name = "gemma2",
    .gguf_names = {"gemma2"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional},
               .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
               .norms = {.post_norms = true},
               .ffn = {.activation = FfnActivation::Gelu},
               .embeddings = {.scale = true},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = nullptr,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
