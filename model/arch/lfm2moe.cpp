// lfm2moe: Liquid's LFM2 mixture-of-experts models (LFM2-8B-A1B, 24B-A2B; docs/formats.md §15.1):
// lfm2's blocks (arch/lfm2.h) whose FFNs after leading_dense_block_count dense ones are routed:
// expert_gating_func (sigmoid in the converter's files) over the experts, the top
// expert_used_count chosen by score + exp_probs_b (the bias moves the choice, not the weights),
// their weights renormalised to sum 1 (llama.cpp passes norm_w = true), no scale (it reads no
// expert_weights_scale for this family), no shared expert. llama.cpp's src/models/lfm2moe.cpp.
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/lfm2.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_lfm2(f, k, c);
  read_expert_width(f, k, c);
  MoeConfig& m = c.moe;
  m.leading_dense_blocks = read_u32(f, k("leading_dense_block_count"), 0);
  normalised_routing(m, MoeGating(read_u32(f, k("expert_gating_func"))));
}

void write_hparams(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  write_lfm2(w, k, c);
  write_expert_width(w, k, c);
  w.add(k("leading_dense_block_count"), c.moe.leading_dense_blocks);
  w.add(k("expert_gating_func"), uint32_t(c.moe.gating));
}

void validate(const ModelConfig& c) {
  validate_lfm2(c);
  ENSURE(c.moe.n_experts > 0, "an lfm2moe model needs expert_count > 0");
}

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_lfm2_mixer(c, l, t);
  if (c.is_moe_layer(l))
    add_moe_ffn(c, l, t);
  else
    add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture lfm2moe_architecture = {
    .name = "lfm2moe",
    .gguf_names = {"lfm2moe"},
    .recipe = lfm2_recipe(),
    .read_hparams = read_hparams,
    .write_hparams = write_hparams,
    .validate = validate,
    .layer_tensors = layer_tensors,
    .unrun_tensors = lfm2_dense_out(),
    .output_norm = kLfm2OutputNorm,
};

}  // namespace vkllm
