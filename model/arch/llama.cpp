// llama: Llama 2/3.x, TinyLlama, SmolLM2 and most files converted from a LlamaForCausalLM.
// Standard attention (biases when the file has them), gated SiLU FFN, adjacent-pair rope on rows
// the converter permuted (docs/formats.md §1.4, §3.3). Llama 3.1+ files add rope_freqs.
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

namespace {

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture llama_architecture = {
    .name = "llama",
    .gguf_names = {"llama"},
    .recipe = {.attention = AttentionForm::Standard, .qkv_bias = Presence::Optional, .rope_mode = RopeMode::Norm},
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = layer_tensors,
};

}  // namespace vkllm
