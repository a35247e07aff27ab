// The keys, checks and tensor names of the hybrid families (docs/formats.md §10; llama.cpp's
// src/models/qwen35.cpp load_arch_hparams / load_arch_tensors).
#include "arch/hybrid.h"

#include <fmt/format.h>

#include "arch/common_blocks.h"
#include "arch/keys.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

void read_linear_layers(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  std::string key = k("attention.recurrent_layers");
  c.mixers.assign(c.n_layers, Mixer::Attention);
  if (const GgufValue* v = f.find(key); v && v->type() == GgufType::Array) {
    if (v->size() != c.n_layers && v->size() != uint64_t(c.n_layers) + c.n_nextn_layers)
      f.fail(fmt::format("metadata key {} has {} entries for {} layers", key, v->size(), c.n_layers));
    size_t l = 0;
    for (const GgufValue& e : v->elements()) {
      if (l == c.n_layers) break;  // the multi-token-prediction blocks are attention
      std::optional<bool> b = e.to_bool();
      std::optional<int64_t> i = e.to_int();
      if (!b && !i) f.fail(fmt::format("metadata key {} must hold bools or integers", key));
      c.mixers[l++] = (b ? *b : *i != 0) ? Mixer::DeltaNet : Mixer::Attention;
    }
    return;
  }
  uint32_t interval = read_u32(f, k("full_attention_interval"), 4);
  if (interval == 0) f.fail("full_attention_interval is 0");
  for (uint32_t l = 0; l < c.n_layers; ++l) c.mixers[l] = (l + 1) % interval != 0 ? Mixer::DeltaNet : Mixer::Attention;
}

}  // namespace

void read_hybrid(const GgufFile& f, const KeyPrefix& k, ModelConfig& c) {
  LinearAttentionConfig& a = c.linear;
  a.conv_kernel = read_u32(f, k("ssm.conv_kernel"));
  a.head_dim = read_u32(f, k("ssm.state_size"));
  a.v_heads = read_u32(f, k("ssm.time_step_rank"));
  a.k_heads = read_u32(f, k("ssm.group_count"));
  uint32_t inner = read_u32(f, k("ssm.inner_size"));
  if (uint64_t(a.v_heads) * a.head_dim != inner)
    f.fail(fmt::format("ssm.inner_size {} should be ssm.time_step_rank x ssm.state_size = {} x {}", inner, a.v_heads,
                       a.head_dim));
  read_linear_layers(f, k, c);
  std::string sections = k("rope.dimension_sections");
  std::vector<int64_t> s = f.get_int_array(sections);
  if (s.size() > 4) f.fail(fmt::format("metadata key {} has {} entries, at most 4", sections, s.size()));
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] < 0 || s[i] > 1024) f.fail(fmt::format("metadata key {} has an entry {} out of range", sections, s[i]));
    c.rope.sections[i] = uint32_t(s[i]);
  }
  c.rope.sections_interleaved = true;
}

void write_hybrid(GgufWriter& w, const KeyPrefix& k, const ModelConfig& c) {
  const LinearAttentionConfig& a = c.linear;
  w.add(k("ssm.conv_kernel"), a.conv_kernel);
  w.add(k("ssm.state_size"), a.head_dim);
  w.add(k("ssm.time_step_rank"), a.v_heads);
  w.add(k("ssm.group_count"), a.k_heads);
  w.add(k("ssm.inner_size"), a.value_dim());
  std::vector<bool> layers(c.n_layers + c.n_nextn_layers, false);
  for (uint32_t l = 0; l < c.n_layers; ++l) layers[l] = c.mixer(l) == Mixer::DeltaNet;
  w.add_array(k("attention.recurrent_layers"), layers);
  std::vector<int32_t> sections(std::begin(c.rope.sections), std::end(c.rope.sections));
  w.add_array(k("rope.dimension_sections"), sections);
}

void validate_hybrid(const ModelConfig& c) {
  const LinearAttentionConfig& a = c.linear;
  ENSURE(c.mixers.size() == c.n_layers, "the linear-attention layers need one entry per layer");
  for (Mixer m : c.mixers)
    ENSURE(m == Mixer::Attention || m == Mixer::DeltaNet, "a Qwen3.5 block is Gated DeltaNet or attention");
  ENSURE(a.conv_kernel >= 2 && a.conv_kernel <= 16,
         fmt::format("ssm.conv_kernel = {} is out of range (2..16)", a.conv_kernel));
  ENSURE(a.head_dim >= 1 && a.head_dim <= 1024,
         fmt::format("ssm.state_size = {} is out of range (1..1024)", a.head_dim));
  ENSURE(a.k_heads >= 1 && a.v_heads >= 1 && a.v_heads % a.k_heads == 0,
         fmt::format("{} value heads (ssm.time_step_rank) cannot share {} key heads (ssm.group_count) evenly",
                     a.v_heads, a.k_heads));
  uint32_t pairs = c.rope.sections[0] + c.rope.sections[1] + c.rope.sections[2] + c.rope.sections[3];
  ENSURE(pairs >= 1 && pairs <= c.head_dim / 2,
         fmt::format("rope.dimension_sections add up to {} pairs, not 1..{}", pairs, c.head_dim / 2));
}

std::vector<UnrunTensor> nextn_own_head() {
  return {{"nextn.embed_tokens.weight", "a multi-token-prediction block's own embeddings"},
          {"nextn.shared_head_head.weight", "a multi-token-prediction block's own output head"}};
}

void add_hybrid_attention(const ModelConfig& c, uint32_t l, TensorCatalogue& t) {
  const LinearAttentionConfig& a = c.linear;
  uint64_t E = c.dim, H = c.n_heads, G = c.n_kv_heads, hd = c.head_dim, V = a.value_dim(), Hv = a.v_heads;
  t.add(l, TensorRole::AttnNorm, "attn_norm.weight", {E});
  if (c.mixer(l) == Mixer::DeltaNet) {
    t.add(l, TensorRole::LinearQkv, "attn_qkv.weight", {E, a.conv_channels()});
    t.add(l, TensorRole::LinearGate, "attn_gate.weight", {E, V});
    t.add(l, TensorRole::SsmConv, "ssm_conv1d.weight", {a.conv_kernel, a.conv_channels()});
    t.add(l, TensorRole::SsmDt, "ssm_dt.bias", {Hv});
    t.add(l, TensorRole::SsmA, "ssm_a", {Hv});
    t.add(l, TensorRole::SsmBeta, "ssm_beta.weight", {E, Hv});
    t.add(l, TensorRole::SsmAlpha, "ssm_alpha.weight", {E, Hv});
    t.add(l, TensorRole::SsmNorm, "ssm_norm.weight", {a.head_dim});
    t.add(l, TensorRole::SsmOut, "ssm_out.weight", {V, E});
    return;
  }
  add_qkv(c, l, t, 2 * H * hd, G * hd, G * c.v_head_dim);
  t.add(l, TensorRole::AttnOut, "attn_output.weight", {H * c.v_head_dim, E});
  t.add(l, TensorRole::AttnQNorm, "attn_q_norm.weight", {hd});
  t.add(l, TensorRole::AttnKNorm, "attn_k_norm.weight", {hd});
  if (l < c.n_layers) return;
  t.add(l, TensorRole::NextnEhProj, "nextn.eh_proj.weight", {2 * E, E});
  t.add(l, TensorRole::NextnEnorm, "nextn.enorm.weight", {E});
  t.add(l, TensorRole::NextnHnorm, "nextn.hnorm.weight", {E});
  t.add(l, TensorRole::NextnHeadNorm, "nextn.shared_head_norm.weight", {E});
}

}  // namespace vkllm
