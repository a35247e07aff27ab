// qwen2: Qwen2 / Qwen2.5 (and distills that keep its shape). Standard attention with required
// q/k/v biases and no output bias, gated SiLU FFN, NEOX rope on unpermuted rows
// (docs/formats.md §1.4, §3.2).
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

extern const Architecture qwen2_architecture = {
    .name = "qwen2",
    .gguf_names = {"qwen2"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Usual},
               .position = {.rope_mode = RopeMode::Neox},
               .embeddings = {.output_bias = Presence::Optional},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = add_standard_block,
};

}  // namespace vkllm
