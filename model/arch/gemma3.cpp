// gemma3: Gemma 3 text models (1B, 4B, 12B, 27B). Gemma 2's block (embeddings times sqrt(dim),
// norms stored as 1 + w, post-attention and post-FFN norms, GELU-gated FFN, NEOX rope) with
// per-head RMSNorm of q and k, no attention soft-cap, and logits soft-capped only when the file
// says so. With attention.sliding_window set, five of every six layers (l % 6 < 5) are local:
// they see the last sliding_window keys and rotate with rope.freq_base_swa (default 10000) and
// no rope scaling; the global layers use rope.freq_base and the file's scaling. Query scale as
// gemma2 (the 27B has 62 layers). The output matrix is optional (docs/formats.md §9.3).
#include <cmath>

#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.sliding_window = read_u32(f, k("attention.sliding_window"), 0);
  if (c.sliding_window > 0) {
    read_swa_pattern(f, k, c, 6);
    c.rope_swa = c.rope;
    c.rope_swa.theta = read_f32(f, k("rope.freq_base_swa"), 10000.0f);
    c.rope_swa.scaling = RopeScaling::None;
    c.rope_swa.factor = 1.0f;
  }
  c.final_softcap = read_f32(f, k("final_logit_softcapping"), 0.0f);
  c.multipliers.attention = float(1.0 / std::sqrt(c.n_layers == 62 ? double(c.dim / c.n_heads) : double(c.head_dim)));
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_standard_heads(w, k, c);
  write_swa(w, k, c);
  if (c.sliding_window > 0 && c.rope_swa.theta > 0) w.add(k("rope.freq_base_swa"), c.rope_swa.theta);
  if (c.final_softcap > 0) w.add(k("final_logit_softcapping"), c.final_softcap);
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) { add_gemma_block(c, l, t, true); }

}  // namespace

extern const Architecture gemma3_architecture = {
    .name = "gemma3",
    .gguf_names = {"gemma3"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true},
               .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
               .norms = {.post_norms = true},
               .ffn = {.activation = FfnActivation::Gelu},
               .embeddings = {.scale = true},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = nullptr,
    .layer_tensors = layer_tensors,
    .unrun_tensors = {{"dense_2.weight", "an embedding model's output projection"},
                      {"dense_3.weight", "an embedding model's output projection"}},
};

}  // namespace vkllm
