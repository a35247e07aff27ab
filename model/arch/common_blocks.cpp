// The hyperparameters and tensor names of the blocks several families share (docs/formats.md §1.4).
#include "arch/common_blocks.h"

#include "arch/keys.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

void read_standard_heads(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  if (c.n_heads == 0) f.fail("attention.head_count is 0");
  c.head_dim = read_u32(f, k("attention.key_length"), c.dim / c.n_heads);
  c.v_head_dim = read_u32(f, k("attention.value_length"), c.head_dim);
  c.rope.dim = read_u32(f, k("rope.dimension_count"), c.head_dim);
}

void write_standard_heads(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  w.add(k("attention.head_count_kv"), c.n_kv_heads);
  w.add(k("attention.key_length"), c.head_dim);
  w.add(k("attention.value_length"), c.v_head_dim);
}

void add_standard_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, H = c.n_heads, Hkv = c.n_kv_heads;
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  t.add(l, TensorRole::AttnQ, "attn_q.weight", {E, H * c.head_dim});
  t.add(l, TensorRole::AttnK, "attn_k.weight", {E, Hkv * c.head_dim});
  t.add(l, TensorRole::AttnV, "attn_v.weight", {E, Hkv * c.v_head_dim});
  if (c.qkv_bias) {
    t.add(l, TensorRole::AttnQBias, "attn_q.bias", {H * c.head_dim});
    t.add(l, TensorRole::AttnKBias, "attn_k.bias", {Hkv * c.head_dim});
    t.add(l, TensorRole::AttnVBias, "attn_v.bias", {Hkv * c.v_head_dim});
  }
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * c.v_head_dim, E});
}

void add_gated_ffn(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  uint64_t E = c.dim, F = c.hidden_dim[l];
  t.add(l, TensorRole::FfnNorm, "ffn_norm.weight", {E});
  t.add(l, TensorRole::FfnGate, "ffn_gate.weight", {E, F});
  t.add(l, TensorRole::FfnUp, "ffn_up.weight", {E, F});
  t.add(l, TensorRole::FfnDown, "ffn_down.weight", {F, E});
}

void add_standard_block(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  add_standard_attention(c, l, t);
  add_gated_ffn(c, l, t);
}

}  // namespace vkllm
