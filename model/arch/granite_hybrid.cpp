// granitehybrid: IBM's Granite 4.0-H hybrids (350M .. 3B dense; 7B-A1B tiny and 32B-A9B small
// MoE; docs/formats.md §15.2). A block mixes with Mamba-2 where its attention.head_count_kv is 0
// (arch/mamba2.h), else with GQA attention (optional q/k/v and output biases, Q/K/V optionally in
// one attn_qkv), rotated by adjacent pairs unless rope.scaling.finetuned is false (Granite 4.0-H
// writes false: no block rotates). Every block then has an FFN on ffn_norm: SiLU-gated with optional
// biases, or with experts a softmax-routed mixture of SiLU-gated experts as wide as
// feed_forward_length (the chosen weights normalised, nothing scaled) plus, where
// expert_shared_feed_forward_length > 0, a SiLU-gated shared expert. Granite's four multipliers
// (ModelConfig::multipliers) scale the embeddings, each block output, the attention and the
// logits. llama.cpp's src/models/granite-hybrid.cpp.
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

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  read_mamba2(f, k, c);
  read_multipliers(f, k, c);
  read_mixers_by_kv_heads(c, Mixer::Mamba2);
  // llama.cpp: "Granite uses rope_finetuned as a switch for rope", true when absent.
  if (!f.get_bool(k("rope.scaling.finetuned"), true)) c.nope_layers.assign(c.n_layers, 1);
  MoeConfig& m = c.moe;
  if (m.n_experts == 0) return;
  // llama.cpp sizes the routed experts by feed_forward_length, routes by softmax with norm_w and
  // reads no expert_weights_scale for this family.
  m.expert_hidden_dim = c.hidden_dim.at(0);
  m.shared_hidden_dim = read_u32(f, k("expert_shared_feed_forward_length"), 0);
  normalised_routing(m);
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_heads_by_mixer(w, k, c);
  write_mamba2(w, k, c);
  write_multipliers(w, k, c);
  w.add(k("rope.scaling.finetuned"), c.nope_layers.empty());
  if (c.moe.n_experts && c.moe.shared_hidden_dim)
    w.add(k("expert_shared_feed_forward_length"), c.moe.shared_hidden_dim);
}

void validate(const ModelConfig& c) {
  ENSURE(c.mixers.size() == c.n_layers, "the blocks' kinds need one entry per layer");
  validate_mamba2(c);
  ENSURE(c.head_dim == c.v_head_dim,
         fmt::format("key length {} and value length {} must be equal", c.head_dim, c.v_head_dim));
  if (c.moe.n_experts == 0) return;
  ENSURE(std::all_of(c.hidden_dim.begin(), c.hidden_dim.end(), [&](uint32_t h) { return h == c.hidden_dim[0]; }),
         "a granitehybrid model with experts needs one feed_forward_length (the experts' width) for every block");
  ENSURE(c.moe.expert_hidden_dim > 0, "a granitehybrid model with experts needs feed_forward_length > 0");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  if (c.mixer(l) == Mixer::Mamba2) {
    t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {c.dim});
    add_mamba2_mixer(c, l, t);
  } else {
    add_standard_attention(c, l, t);
  }
  if (c.is_moe_layer(l))
    add_moe_ffn(c, l, t);
  else
    add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture granitehybrid_architecture = {
    .name = "granitehybrid",
    .gguf_names = {"granitehybrid"},
    .recipe = llama_recipe(),  // its attention and dense FFN are llama's
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
