// phi3: Phi-3 and Phi-3.5 mini/medium (and files converted as phi3). Q, K and V come from one
// matrix, attn_qkv, whose rows are all query rows, then the K rows, then the V rows; the FFN's
// ffn_up holds the gate rows and then the up rows (silu(gate)·up), with no ffn_gate. NEOX rope,
// optional output matrix. The file's sliding_window key is ignored, as llama.cpp does (its phi3
// attention is global); LongRoPE files (rope_factors_long/short) are not supported
// (docs/formats.md §1.4, §9.4). Older files have attn_q/k/v instead, and either may have q/k/v
// biases (§13). Weights splits the fused matrices into q/k/v and gate/up rows at load, so the
// graph runs the standard block.
#include "arch/architecture.h"
#include "arch/common_blocks.h"
#include "arch/tensors.h"

namespace vkllm {

namespace {

void layer_tensors(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, H = c.n_heads, G = c.n_kv_heads, F = c.hidden_dim[l];
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  add_qkv(c, l, t, H * c.head_dim, G * c.head_dim, G * c.v_head_dim);
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * c.v_head_dim, E});
  t.add(l, TensorRole::FfnNorm, "ffn_norm.weight", {E});
  t.add(l, TensorRole::FfnDown, "ffn_down.weight", {F, E});
  t.add(l, TensorRole::FfnGateUp, "ffn_up.weight", {E, 2 * F});
}

}  // namespace

extern const Architecture phi3_architecture = {
    .name = "phi3",
    .gguf_names = {"phi3"},
    .recipe = {.attention = {.form = AttentionForm::Standard, .qkv_bias = Presence::Optional},
               .position = {.rope_mode = RopeMode::Neox, .full_rotary = false},
               .layouts = {.qkv = Fusion::Usual}},
    .read_hparams = read_standard_heads,
    .write_hparams = write_standard_heads,
    .validate = nullptr,
    .layer_tensors = layer_tensors,
    .unrun_tensors = longrope_factors(),
};

}  // namespace vkllm
