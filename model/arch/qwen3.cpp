// qwen3: Qwen3 dense models. Standard attention whose q and k heads are RMS-normalised (one
// weight of head_dim for all heads: attn_q_norm, attn_k_norm) before NEOX rope; the head dim is
// attention.key_length and may differ from dim / heads (Qwen3-0.6B: 16 heads of 128 in a 1024
// model). Gated SiLU FFN; biases only when the file has them (docs/formats.md §9.1).
#include "arch/architecture.h"
#include "arch/common_blocks.h"

namespace vkllm {

namespace {

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_qk_norm(c, l, t);
  add_gated_ffn(c, l, t);
}

}  // namespace

extern const Architecture qwen3_architecture = {
    .name = "qwen3",
    .gguf_names = {"qwen3"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional, .qk_norm = true},
               .position = {.rope_mode = RopeMode::Neox},
               .layouts = {.qkv = Fusion::Optional}},
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = layer_tensors,
    .unrun_tensors = {{"cls.output.weight", "a reranker's classification head"}},
};

}  // namespace vkllm
