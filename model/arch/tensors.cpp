// The catalogue's common parts (the global tensors, the blocks several families share), and the
// checks of a file's tensor table against it (docs/formats.md §1.4, §1.5).
#include "arch/tensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <functional>
#include <iterator>

#include "arch/architecture.h"
#include "arch/model_config.h"
#include "error.h"
#include "gguf/reader.h"

namespace vkllm {

std::string_view to_string(TensorRole r) {
  constexpr std::string_view names[] = {"token_embd",
                                        "output_norm",
                                        "output",
                                        "rope_freqs",
                                        "attn_norm",
                                        "attn_q",
                                        "attn_output",
                                        "attn_k",
                                        "attn_v",
                                        "q_bias",
                                        "k_bias",
                                        "v_bias",
                                        "attn_q_a",
                                        "attn_q_a_norm",
                                        "attn_q_b",
                                        "attn_kv_a",
                                        "kv_norm",
                                        "attn_k_b",
                                        "attn_v_b",
                                        "attn_kv_b",
                                        "attn_q_norm",
                                        "attn_k_norm",
                                        "attn_post_norm",
                                        "attn_qkv",
                                        "ffn_norm",
                                        "ffn_gate",
                                        "ffn_up",
                                        "ffn_down",
                                        "ffn_post_norm",
                                        "ffn_gate_up",
                                        "ffn_gate_inp",
                                        "exp_probs_b",
                                        "ffn_gate_exps",
                                        "ffn_up_exps",
                                        "ffn_down_exps",
                                        "ffn_gate_shexp",
                                        "ffn_up_shexp",
                                        "ffn_down_shexp",
                                        "ffn_gate_inp_shexp",
                                        "linear_qkv",
                                        "linear_gate",
                                        "ssm_conv1d",
                                        "ssm_dt",
                                        "ssm_a",
                                        "ssm_beta",
                                        "ssm_alpha",
                                        "ssm_norm",
                                        "ssm_out",
                                        "nextn_eh_proj",
                                        "nextn_enorm",
                                        "nextn_hnorm",
                                        "nextn_head_norm",
                                        "attn_output_bias",
                                        "attn_sinks",
                                        "ffn_gate_inp_bias",
                                        "ffn_gate_exps_bias",
                                        "ffn_up_exps_bias",
                                        "ffn_down_exps_bias",
                                        "ffn_gate_inp_scale",
                                        "ffn_down_exps_scale",
                                        "pre_ffw_norm_2",
                                        "post_ffw_norm_1",
                                        "post_ffw_norm_2",
                                        "per_layer_token_embd",
                                        "per_layer_model_proj",
                                        "per_layer_proj_norm",
                                        "per_layer_inp_gate",
                                        "per_layer_proj",
                                        "per_layer_post_norm",
                                        "layer_output_scale"};
  static_assert(std::size(names) == size_t(TensorRole::LayerOutScale) + 1);
  return names[size_t(r)];
}

bool is_norm(TensorRole r) {
  switch (r) {
    case TensorRole::OutputNorm:
    case TensorRole::AttnNorm:
    case TensorRole::AttnQANorm:
    case TensorRole::AttnKvANorm:
    case TensorRole::AttnQNorm:
    case TensorRole::AttnKNorm:
    case TensorRole::AttnPostNorm:
    case TensorRole::FfnNorm:
    case TensorRole::FfnPostNorm:
    case TensorRole::SsmNorm:
    case TensorRole::NextnEnorm:
    case TensorRole::NextnHnorm:
    case TensorRole::NextnHeadNorm:
    case TensorRole::FfnPreNorm2:
    case TensorRole::FfnPostNorm1:
    case TensorRole::FfnPostNorm2:
    case TensorRole::PerLayerProjNorm:
    case TensorRole::PerLayerPostNorm:
      return true;
    default:
      return false;
  }
}

bool needs_f32(TensorRole r) {
  return r == TensorRole::SsmConv || r == TensorRole::FfnGateExpsBias || r == TensorRole::FfnUpExpsBias ||
         r == TensorRole::FfnDownExpsBias;
}

bool is_experts(TensorRole r) {
  return r == TensorRole::FfnGateExps || r == TensorRole::FfnUpExps || r == TensorRole::FfnDownExps;
}

// --- the catalogue

void TensorCatalogue::add_global(TensorRole role, std::string name, std::vector<uint64_t> ne) {
  by_name_.emplace(name, specs_.size());
  specs_.push_back({std::move(name), std::move(ne), role, kGlobal});
}

void TensorCatalogue::add(uint32_t layer, TensorRole role, std::string_view suffix, std::vector<uint64_t> ne) {
  std::string name = fmt::format("blk.{}.{}", layer, suffix);
  by_name_.emplace(name, specs_.size());
  specs_.push_back({std::move(name), std::move(ne), role, int(layer)});
}

const TensorSpec* TensorCatalogue::find(TensorRole role, int layer) const {
  for (const TensorSpec& s : specs_)
    if (s.role == role && s.layer == layer) return &s;
  return nullptr;
}

const TensorSpec* TensorCatalogue::find(std::string_view name) const {
  auto it = by_name_.find(std::string(name));
  return it == by_name_.end() ? nullptr : &specs_[it->second];
}

namespace {

constexpr std::string_view kTokenEmbd = "token_embd.weight";
constexpr std::string_view kOutput = "output.weight";
constexpr std::string_view kRopeFreqs = "rope_freqs.weight";

void add_globals(const ModelConfig& c, TensorCatalogue& t) {
  uint64_t E = c.dim, V = c.vocab_size;
  t.add_global(TensorRole::TokenEmbd, std::string(kTokenEmbd), {E, V});
  t.add_global(TensorRole::OutputNorm, "output_norm.weight", {E});
  if (!c.tied_embeddings) t.add_global(TensorRole::Output, std::string(kOutput), {E, V});
  if (c.rope.has_freq_factors) t.add_global(TensorRole::RopeFreqs, std::string(kRopeFreqs), {c.rope.dim / 2u});
  if (uint64_t P = c.per_layer_embd) {  // gemma4's per-layer embeddings
    uint64_t LP = P * c.n_layers;
    t.add_global(TensorRole::PerLayerTokenEmbd, "per_layer_token_embd.weight", {LP, V});
    t.add_global(TensorRole::PerLayerModelProj, "per_layer_model_proj.weight", {E, LP});
    t.add_global(TensorRole::PerLayerProjNorm, "per_layer_proj_norm.weight", {P});
  }
}

}  // namespace

TensorCatalogue tensor_catalogue(const ModelConfig& c) {
  TensorCatalogue t;
  add_globals(c, t);
  for (uint32_t l = 0; l < c.n_layers + c.n_nextn_layers; ++l) c.architecture().layer_tensors(c, l, t);
  return t;
}

uint64_t parameter_count(const ModelConfig& c) {
  uint64_t n = 0;
  for (const TensorSpec& s : tensor_catalogue(c).specs()) n += s.n_elements();
  return n;
}

// --- checks against a file

bool file_has(const GgufFile& f, const ModelConfig& c, uint32_t layer, TensorRole role,
              const std::function<void(ModelConfig&)>& with) {
  ModelConfig probe = c;  // the names the block would have with the option
  with(probe);
  TensorCatalogue t;
  c.architecture().layer_tensors(probe, layer, t);
  const TensorSpec* spec = t.find(role, int(layer));
  return spec && f.find_tensor(spec->name) != nullptr;
}

void read_tensor_flags(const GgufFile& f, ModelConfig& c) {
  c.tied_embeddings = f.find_tensor(kOutput) == nullptr;
  c.rope.has_freq_factors = c.rope_swa.has_freq_factors = f.find_tensor(kRopeFreqs) != nullptr;
  const AttentionRecipe& a = c.architecture().recipe.attention;
  if (a.qkv_bias == Presence::Optional && c.n_layers > 0)
    c.qkv_bias = file_has(f, c, 0, TensorRole::AttnQBias, [](ModelConfig& p) { p.qkv_bias = true; });
  if (a.out_bias == Presence::Optional && c.n_layers > 0)
    c.attn_out_bias = file_has(f, c, 0, TensorRole::AttnOutBias, [](ModelConfig& p) { p.attn_out_bias = true; });
  if (c.architecture().tensor_flags) c.architecture().tensor_flags(f, c);
  // DeepSeek-V3's selection bias: probed in the first MoE block, as the biases above.
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    if (!c.is_moe_layer(l)) continue;
    ModelConfig probe = c;
    probe.moe.probs_bias = true;
    TensorCatalogue t;
    c.architecture().layer_tensors(probe, l, t);
    const TensorSpec* bias = t.find(TensorRole::ExpProbsB, int(l));
    c.moe.probs_bias = bias && f.find_tensor(bias->name) != nullptr;
    break;
  }
  const GgufTensor* embd = f.find_tensor(kTokenEmbd);
  if (c.vocab_size == 0 && embd && embd->ne[1] <= UINT32_MAX) c.vocab_size = uint32_t(embd->ne[1]);
}

namespace {

using Shape = std::vector<uint64_t>;

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

std::string unexpected_hint(std::string_view name, const ModelConfig& c) {
  if (name.find("_exps") != std::string_view::npos || name.find("ffn_gate_inp") != std::string_view::npos ||
      name.find("_shexp") != std::string_view::npos || name.find("exp_probs_b") != std::string_view::npos)
    return c.moe.n_experts ? " (an expert tensor this family does not have)"
                           : " (a mixture-of-experts tensor, but the metadata declares no experts)";
  if (name.find("rope_factors_") != std::string_view::npos) return " (LongRoPE factors are not supported)";
  if (name.find("attn_k_b") != std::string_view::npos || name.find("attn_v_b") != std::string_view::npos ||
      name.find("attn_kv_b") != std::string_view::npos)
    return fmt::format(" (the metadata describes the {} MLA layout)", to_string(c.mla.layout));
  if (name.find(".bias") != std::string_view::npos) return " (this bias is not supported)";
  return "";
}

}  // namespace

void check_tensors(const GgufFile& f, const ModelConfig& c) {
  TensorCatalogue cat = tensor_catalogue(c);
  for (const GgufTensor& t : f.tensors()) {  // in file order: the first wrong one is named
    const TensorSpec* spec = cat.find(t.name);
    if (!spec)
      f.fail(fmt::format("unexpected tensor {} for a {} model{}", printable(t.name), c.arch_name,
                         unexpected_hint(t.name, c)));
    if (t.shape() != spec->ne)
      f.fail(fmt::format("tensor {} has shape {}, expected {}", t.name, shape_str(t.shape()), shape_str(spec->ne)));
  }
  for (const TensorSpec& s : cat.specs())
    if (!f.find_tensor(s.name)) f.fail(fmt::format("missing tensor {} (expected shape {})", s.name, shape_str(s.ne)));
}

}  // namespace vkllm
