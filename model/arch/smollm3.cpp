// smollm3: SmolLM3 (3B). A llama block (adjacent-pair rope, gated SiLU FFN, biases when the file has
// them, tied embeddings when it has no output.weight) whose every fourth layer applies no rope at
// all: layer l rotates unless (l + 1) % 4 == 0 (llama.cpp's n_no_rope_layer_step; no key names it).
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

namespace {

constexpr uint32_t kNoRopeStep = 4;

void read_hparams(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  read_standard_heads(f, k, c);
  c.nope_layers.assign(c.n_layers, 0);
  for (uint32_t l = 0; l < c.n_layers; ++l) c.nope_layers[l] = (l + 1) % kNoRopeStep == 0;
}

}  // namespace

extern const Architecture smollm3_architecture = {
    .name = "smollm3",
    .gguf_names = {"smollm3"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional},
               .position = {.rope_mode = RopeMode::Norm},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_hparams,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = add_standard_block,
};

}  // namespace vkllm
