// llama: Llama 2/3.x, TinyLlama, SmolLM2 and most files converted from a LlamaForCausalLM.
// Standard attention, gated SiLU FFN, adjacent-pair rope on rows the converter permuted
// (docs/formats.md §1.4, §3.3); Q/K/V in one attn_qkv or three, biases of q/k/v, of the output
// projection and of the FFN when the file has them (§13). Llama 3.1+ files add rope_freqs.
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

extern const Architecture llama_architecture = {
    .name = "llama",
    .gguf_names = {"llama"},
    .recipe = llama_recipe(),
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = add_standard_block,
    .unrun_tensors = longrope_factors(),
};

}  // namespace vkllm
