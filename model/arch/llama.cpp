// llama: Llama 2/3.x, TinyLlama, SmolLM2 and most files converted from a LlamaForCausalLM.
// Standard attention (biases when the file has them), gated SiLU FFN, adjacent-pair rope on rows
// the converter permuted (docs/formats.md §1.4, §3.3). Llama 3.1+ files add rope_freqs.
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

extern const Architecture llama_architecture = {
    .name = "llama",
    .gguf_names = {"llama"},
    .recipe = {.attention = {.form = AttentionForm::Standard,
                             .qkv_bias = Presence::Optional,
                             .out_bias = Presence::Optional},
               .position = {.rope_mode = RopeMode::Norm},
               .ffn = {.bias = Presence::Optional},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = add_standard_block,
    .unrun_tensors = {{"rope_factors_long.weight", "LongRoPE factors"},
                      {"rope_factors_short.weight", "LongRoPE factors"}},
};

}  // namespace vkllm
