// lfm2: Liquid's LFM2 and LFM2.5 dense models (350M .. 2.6B; docs/formats.md §15.1). Most blocks
// mix with a gated short convolution (in_proj -> b, c, x; a causal conv of shortconv.l_cache taps
// over b·x, continuing from each sequence's last l_cache - 1 products; c·conv; out_proj), the rest
// with GQA attention whose q and k heads are RMS-normed before NEOX rope. Every block then has a
// SiLU-gated FFN on its own norm (ffn_norm). The final norm is token_embd_norm, as llama.cpp
// reads it. llama.cpp's src/models/lfm2.cpp.
#include "arch/lfm2.h"

#include <fmt/format.h>

#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

// A layer whose head_count_kv is 0 is a short conv; the attention layers' KV heads are the
// model's (validate_layers checks each).
void read_lfm2(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.short_conv.kernel = read_u32(f, k("shortconv.l_cache"));
  if (uint32_t window = read_u32(f, k("attention.sliding_window"), 0); window > 0)
    f.fail(
        fmt::format("attention.sliding_window = {}: LFM2's sliding-window attention (LFM2.5's audio tokenizer) is "
                    "not supported",
                    window));
  read_mixers_by_kv_heads(c, Mixer::ShortConv);
}

void write_lfm2(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_heads_by_mixer(w, k, c);  // head_count_kv as the converter writes it: 0 in the short-conv layers
  w.add(k("shortconv.l_cache"), c.short_conv.kernel);
}

void validate_lfm2(const ModelConfig& c) {
  // ops::ssm_conv runs 2 to 8 taps; the models have 3.
  ENSURE(!c.has_mixer(Mixer::ShortConv) || (c.short_conv.kernel >= 2 && c.short_conv.kernel <= 8),
         fmt::format("shortconv.l_cache = {} is out of range (2..8)", c.short_conv.kernel));
  ENSURE(c.head_dim == c.v_head_dim, "LFM2's attention needs keys and values of one width");
}

void add_lfm2_mixer(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim;
  if (c.mixer(l) == Mixer::ShortConv) {
    t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
    t.add(l, TensorRole::ShortConvTaps, "shortconv.conv.weight", {c.short_conv.kernel, E});
    t.add(l, TensorRole::ShortConvIn, "shortconv.in_proj.weight", {E, 3 * E});
    t.add(l, TensorRole::ShortConvOut, "shortconv.out_proj.weight", {E, E});
    return;
  }
  add_standard_attention(c, l, t);
  add_qk_norm(c, l, t);
}

BlockRecipe lfm2_recipe() {
  return {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true},
          .position = {.rope_mode = RopeMode::Neox},
          .layouts = {.qkv = Fusion::Optional}};
}

std::vector<UnrunTensor> lfm2_dense_out() {
  return {{"dense_2_out.weight", "LFM2-ColBERT's output projection"},
          {"dense_2_out.bias", "LFM2-ColBERT's output projection"}};
}

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_lfm2(f, k, c);
  c.moe.leading_dense_blocks = c.n_layers;  // llama.cpp: every block dense, whatever the file says
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_lfm2_mixer(c, l, t);
  add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture lfm2_architecture = {
    .name = "lfm2",
    .gguf_names = {"lfm2"},
    .recipe = lfm2_recipe(),
    .read_hparams = read_hparams,
    .write_hparams = write_lfm2,
    .validate = validate_lfm2,
    .layer_tensors = layer_tensors,
    .unrun_tensors = lfm2_dense_out(),
    .output_norm = kLfm2OutputNorm,
};

}  // namespace vkllm
