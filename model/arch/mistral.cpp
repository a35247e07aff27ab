// mistral: files whose general.architecture is "mistral" (Mistral 7B style converters). The
// blocks are llama's: standard attention, gated SiLU FFN, adjacent-pair rope; the metadata keys
// sit under the "mistral." prefix. Mistral's sliding window is not in these files (4096 keys or
// fewer run identically; docs/formats.md §6). llama.cpp has no architecture of this name (its
// Mistral 7B files say "llama"): the agreement test checks this family against its llama.
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

extern const Architecture mistral_architecture = {
    .name = "mistral",
    .gguf_names = {"mistral"},
    .recipe = llama_recipe(),
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = add_standard_block,
    .unrun_tensors = longrope_factors(),
};

}  // namespace vkllm
