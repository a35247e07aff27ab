// What a ModelConfig implies: attention kind, KV bytes per token, validation, and the exact
// tensor names and shapes per architecture (FORMATS.md §1.4, §1.5), checked against a file.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cmath>
#include <unordered_map>

#include "check.h"
#include "config.h"
#include "gguf.h"

namespace vkllm {

std::string_view to_string(Arch a) {
  switch (a) {
    case Arch::Llama:
      return "llama";
    case Arch::Qwen2:
      return "qwen2";
    case Arch::Deepseek2:
      return "deepseek2";
  }
  return "?";
}

std::string_view to_string(AttentionKind k) {
  constexpr std::string_view names[] = {"MHA", "GQA", "MQA", "MLA"};
  return names[int(k)];
}

std::string_view to_string(RopeMode m) { return m == RopeMode::Norm ? "norm" : "neox"; }

std::string_view to_string(RopeScaling s) {
  constexpr std::string_view names[] = {"none", "linear", "yarn"};
  return names[int(s)];
}

std::string_view to_string(MlaLayout l) {
  constexpr std::string_view names[] = {"none", "split", "fused"};  // attn_k_b + attn_v_b, or attn_kv_b
  return names[int(l)];
}

// --- derived quantities

AttentionKind ModelConfig::attention_kind() const {
  if (arch == Arch::Deepseek2) return AttentionKind::MLA;
  if (n_kv_heads == n_heads) return AttentionKind::MHA;
  return n_kv_heads == 1 ? AttentionKind::MQA : AttentionKind::GQA;
}

bool ModelConfig::is_moe_layer(uint32_t layer) const { return moe.n_experts > 0 && layer >= moe.leading_dense_blocks; }

namespace {

uint64_t kv_row_bytes(DType kv, uint64_t n) {
  const DTypeInfo& i = info(kv);
  ENSURE(n % i.block_values == 0,
         fmt::format("a {} KV cache needs head widths that are multiples of {} (got {})", i.name, i.block_values, n));
  return row_bytes(kv, n);
}

}  // namespace

double ModelConfig::attention_scale() const {
  double scale = 1.0 / std::sqrt(double(head_dim));
  if (rope.scaling == RopeScaling::Yarn && rope.yarn_log_multiplier > 0) {
    double m = 1 + rope.yarn_log_multiplier * std::log(rope.factor);
    scale *= m * m;
  }
  return scale;
}

uint64_t ModelConfig::kv_bytes_per_token(DType kv) const {
  // MLA caches one latent row [c (kv_lora_rank); k_pe (rope dim)] per layer, shared by all heads.
  if (attention_kind() == AttentionKind::MLA)
    return uint64_t(n_layers) * kv_row_bytes(kv, mla.kv_lora_rank + mla.qk_rope_head_dim);
  return uint64_t(n_layers) * n_kv_heads * (kv_row_bytes(kv, head_dim) + kv_row_bytes(kv, v_head_dim));
}

// --- validation

namespace {

void check_range(std::string_view what, uint64_t v, uint64_t lo, uint64_t hi) {
  ENSURE(v >= lo && v <= hi, fmt::format("{} = {} is out of range ({}..{})", what, v, lo, hi));
}

void validate_moe(const ModelConfig& c) {
  if (c.moe.n_experts == 0 || c.moe.leading_dense_blocks >= c.n_layers) return;
  throw Error(
      fmt::format("blocks {}..{} are mixture-of-experts layers ({} experts, {} used per token); "
                  "MoE is not yet supported",
                  c.moe.leading_dense_blocks, c.n_layers - 1, c.moe.n_experts, c.moe.n_experts_used));
}

void validate_mla(const ModelConfig& c) {
  const MlaConfig& m = c.mla;
  check_range("kv_lora_rank", m.kv_lora_rank, 1, 1 << 16);
  check_range("q_lora_rank", m.q_lora_rank, 0, 1 << 16);
  ENSURE(m.qk_rope_head_dim == c.rope.dim, "MLA rope dim must equal rope.dimension_count");
  ENSURE(m.qk_nope_head_dim + m.qk_rope_head_dim == c.head_dim && m.v_head_dim == c.v_head_dim,
         "MLA head dims are inconsistent");
  ENSURE(m.layout != MlaLayout::None, "MLA layout is not set");
}

}  // namespace

void ModelConfig::validate() const {
  check_range("block_count", n_layers, 1, 4096);
  check_range("embedding_length", dim, 1, 1 << 20);
  check_range("attention.head_count", n_heads, 1, 1 << 14);
  check_range("attention.head_count_kv", n_kv_heads, 1, n_heads);
  ENSURE(n_heads % n_kv_heads == 0,
         fmt::format("{} attention heads cannot be shared evenly by {} KV heads", n_heads, n_kv_heads));
  check_range("head dim (key_length)", head_dim, 1, 1 << 16);
  check_range("value head dim (value_length)", v_head_dim, 1, 1 << 16);
  ENSURE(hidden_dim.size() == n_layers, "feed_forward_length needs one value per layer");
  for (uint32_t h : hidden_dim) check_range("feed_forward_length", h, 1, 1 << 22);
  check_range("vocab size", vocab_size, 1, 1 << 24);
  check_range("context_length", seq_len, 1, 1u << 31);
  ENSURE(std::isfinite(norm_eps) && norm_eps > 0, fmt::format("layer_norm_rms_epsilon {} must be positive", norm_eps));
  ENSURE(std::isfinite(rope.theta) && rope.theta > 0, fmt::format("rope.freq_base {} must be positive", rope.theta));
  ENSURE(std::isfinite(rope.factor) && rope.factor > 0,
         fmt::format("rope scaling factor {} must be positive", rope.factor));
  ENSURE(rope.dim % 2 == 0 && rope.dim >= 2 && rope.dim <= head_dim,
         fmt::format("rope.dimension_count {} must be even and within the head dim {}", rope.dim, head_dim));
  if (arch == Arch::Deepseek2) {
    validate_mla(*this);
  } else {
    // llama.cpp requires full rotary for these architectures.
    ENSURE(rope.dim == head_dim, fmt::format("rope.dimension_count {} must equal the head dim {}", rope.dim, head_dim));
  }
  validate_moe(*this);
}

// --- tensors

namespace {

using Shape = std::vector<uint64_t>;

void add_attention(std::vector<TensorSpec>& t, const ModelConfig& c, const std::string& blk) {
  uint64_t E = c.dim, H = c.n_heads, Hkv = c.n_kv_heads;
  t.push_back({blk + "attn_q.weight", {E, H * c.head_dim}});
  t.push_back({blk + "attn_k.weight", {E, Hkv * c.head_dim}});
  t.push_back({blk + "attn_v.weight", {E, Hkv * c.v_head_dim}});
  if (c.qkv_bias) {
    t.push_back({blk + "attn_q.bias", {H * c.head_dim}});
    t.push_back({blk + "attn_k.bias", {Hkv * c.head_dim}});
    t.push_back({blk + "attn_v.bias", {Hkv * c.v_head_dim}});
  }
  t.push_back({blk + "attn_output.weight", {H * c.v_head_dim, E}});
}

void add_mla(std::vector<TensorSpec>& t, const ModelConfig& c, const std::string& blk) {
  const MlaConfig& m = c.mla;
  uint64_t E = c.dim, H = c.n_heads, q = H * c.head_dim;
  if (m.q_lora_rank) {
    t.push_back({blk + "attn_q_a.weight", {E, m.q_lora_rank}});
    t.push_back({blk + "attn_q_a_norm.weight", {m.q_lora_rank}});
    t.push_back({blk + "attn_q_b.weight", {m.q_lora_rank, q}});
  } else {
    t.push_back({blk + "attn_q.weight", {E, q}});
  }
  t.push_back({blk + "attn_kv_a_mqa.weight", {E, m.kv_lora_rank + m.qk_rope_head_dim}});
  t.push_back({blk + "attn_kv_a_norm.weight", {m.kv_lora_rank}});
  if (m.layout == MlaLayout::Split) {
    t.push_back({blk + "attn_k_b.weight", {m.qk_nope_head_dim, m.kv_lora_rank, H}});
    t.push_back({blk + "attn_v_b.weight", {m.kv_lora_rank, m.v_head_dim, H}});
  } else {
    t.push_back({blk + "attn_kv_b.weight", {m.kv_lora_rank, H * (m.qk_nope_head_dim + m.v_head_dim)}});
  }
  t.push_back({blk + "attn_output.weight", {H * m.v_head_dim, E}});
}

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string unexpected_hint(std::string_view name, const ModelConfig& c) {
  if (name.find("_exps") != std::string_view::npos || name.find("ffn_gate_inp") != std::string_view::npos ||
      name.find("_shexp") != std::string_view::npos)
    return " (mixture-of-experts tensors are not yet supported)";
  if (name.find("attn_k_b") != std::string_view::npos || name.find("attn_v_b") != std::string_view::npos ||
      name.find("attn_kv_b") != std::string_view::npos)
    return fmt::format(" (the metadata describes the {} MLA layout)", to_string(c.mla.layout));
  if (name.find(".bias") != std::string_view::npos) return " (this bias is not supported)";
  return "";
}

}  // namespace

std::vector<TensorSpec> expected_tensors(const ModelConfig& c) {
  std::vector<TensorSpec> t;
  uint64_t E = c.dim, V = c.vocab_size;
  t.push_back({"token_embd.weight", {E, V}});
  t.push_back({"output_norm.weight", {E}});
  if (!c.tied_embeddings) t.push_back({"output.weight", {E, V}});
  if (c.rope.has_freq_factors) t.push_back({"rope_freqs.weight", {c.rope.dim / 2u}});
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    std::string blk = fmt::format("blk.{}.", l);
    t.push_back({blk + "attn_norm.weight", {E}});
    if (c.arch == Arch::Deepseek2)
      add_mla(t, c, blk);
    else
      add_attention(t, c, blk);
    uint64_t F = c.hidden_dim[l];
    t.push_back({blk + "ffn_norm.weight", {E}});
    t.push_back({blk + "ffn_gate.weight", {E, F}});
    t.push_back({blk + "ffn_up.weight", {E, F}});
    t.push_back({blk + "ffn_down.weight", {F, E}});
  }
  return t;
}

uint64_t parameter_count(const ModelConfig& c) {
  uint64_t n = 0;
  for (const TensorSpec& s : expected_tensors(c)) {
    uint64_t e = 1;
    for (uint64_t d : s.ne) e *= d;
    n += e;
  }
  return n;
}

void read_tensor_flags(const GgufFile& f, ModelConfig& c) {
  c.tied_embeddings = f.find_tensor("output.weight") == nullptr;
  c.rope.has_freq_factors = f.find_tensor("rope_freqs.weight") != nullptr;
  if (c.arch == Arch::Llama) c.qkv_bias = f.find_tensor("blk.0.attn_q.bias") != nullptr;
  const GgufTensor* embd = f.find_tensor("token_embd.weight");
  if (c.vocab_size == 0 && embd && embd->ne[1] <= UINT32_MAX) c.vocab_size = uint32_t(embd->ne[1]);
}

void check_tensors(const GgufFile& f, const ModelConfig& c) {
  std::vector<TensorSpec> specs = expected_tensors(c);
  std::unordered_map<std::string_view, const TensorSpec*> by_name;
  for (const TensorSpec& s : specs) by_name.emplace(s.name, &s);
  for (const GgufTensor& t : f.tensors()) {  // in file order: the first wrong one is named
    auto it = by_name.find(t.name);
    if (it == by_name.end())
      f.fail(fmt::format("unexpected tensor {} for a {} model{}", printable(t.name), c.arch_name,
                         unexpected_hint(t.name, c)));
    if (t.shape() != it->second->ne)
      f.fail(
          fmt::format("tensor {} has shape {}, expected {}", t.name, shape_str(t.shape()), shape_str(it->second->ne)));
  }
  for (const TensorSpec& s : specs)
    if (!f.find_tensor(s.name)) f.fail(fmt::format("missing tensor {} (expected shape {})", s.name, shape_str(s.ne)));
}

}  // namespace vkllm
