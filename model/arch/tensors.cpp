// The catalogue's common parts (the global tensors, the blocks several families share), and the
// checks of a file's tensor table against it (docs/formats.md §1.4, §1.5).
#include "arch/tensors.h"

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstdio>
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
                                        "layer_output_scale",
                                        "attn_qkv_bias",
                                        "ffn_gate_up_exps",
                                        "ffn_gate_bias",
                                        "ffn_up_bias",
                                        "ffn_down_bias",
                                        "output_bias",
                                        "ssm_in",
                                        "ssm_conv1d_bias",
                                        "ssm_d",
                                        "ffn_latent_down",
                                        "ffn_latent_up",
                                        "shortconv_in",
                                        "shortconv_conv",
                                        "shortconv_out"};
  static_assert(std::size(names) == size_t(TensorRole::ShortConvOut) + 1);
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
  return r == TensorRole::SsmConv || r == TensorRole::ShortConvTaps || r == TensorRole::FfnGateExpsBias ||
         r == TensorRole::FfnUpExpsBias || r == TensorRole::FfnDownExpsBias || r == TensorRole::SsmA ||
         r == TensorRole::SsmD || r == TensorRole::SsmNorm;
}

bool is_experts(TensorRole r) {
  return r == TensorRole::FfnGateExps || r == TensorRole::FfnUpExps || r == TensorRole::FfnDownExps ||
         r == TensorRole::FfnGateUpExps;
}

std::vector<FusedPart> fused_parts(const ModelConfig& c, TensorRole role, int layer) {
  if (layer < 0) return {};
  LayerAttention a = c.attention_of(std::min(uint32_t(layer), c.n_layers - 1));
  // Gated attention's query rows hold q_h then gate_h per head (qwen35).
  uint64_t q = uint64_t(a.n_heads) * a.head_dim * (c.architecture().recipe.attention.gated ? 2 : 1);
  uint64_t k = uint64_t(a.n_kv_heads) * a.head_dim, v = uint64_t(a.n_kv_heads) * a.v_head_dim;
  if (role == TensorRole::AttnQkv) return {{TensorRole::AttnQ, q}, {TensorRole::AttnK, k}, {TensorRole::AttnV, v}};
  if (role == TensorRole::AttnQkvBias)
    return {{TensorRole::AttnQBias, q}, {TensorRole::AttnKBias, k}, {TensorRole::AttnVBias, v}};
  if (role == TensorRole::FfnGateUp) {
    uint64_t F = c.hidden_dim.at(std::min<size_t>(layer, c.hidden_dim.size() - 1));
    return {{TensorRole::FfnGate, F}, {TensorRole::FfnUp, F}};
  }
  return {};
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
constexpr std::string_view kOutputBias = "output.bias";

void add_globals(const ModelConfig& c, TensorCatalogue& t) {
  uint64_t E = c.dim, V = c.vocab_size;
  t.add_global(TensorRole::TokenEmbd, std::string(kTokenEmbd), {E, V});
  t.add_global(TensorRole::OutputNorm, std::string(c.architecture().output_norm), {E});
  if (!c.tied_embeddings) t.add_global(TensorRole::Output, std::string(kOutput), {E, V});
  if (c.output_bias) t.add_global(TensorRole::OutputBias, std::string(kOutputBias), {V});
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

namespace {

// The first layer that has standard attention (a hybrid's first layers are linear) and the first
// mixture-of-experts layer; n_layers where there is none.
uint32_t first_attention_layer(const ModelConfig& c) {
  uint32_t l = 0;
  while (l < c.n_layers && !c.has_attention(l)) ++l;
  return c.architecture().recipe.attention.form == AttentionForm::Standard ? l : c.n_layers;
}

uint32_t first_moe_layer(const ModelConfig& c) {
  uint32_t l = 0;
  while (l < c.n_layers && !c.is_moe_layer(l)) ++l;
  return l;
}

// file_has for a block that may not exist (l = n_layers: none).
bool has_with(const GgufFile& f, const ModelConfig& c, uint32_t l, TensorRole role,
              const std::function<void(ModelConfig&)>& with) {
  return l < c.n_layers && file_has(f, c, l, role, with);
}

// The layouts of docs/formats.md §13 and the optional biases, probed in the first block that can
// have each; check_tensors then holds every block to them.
void read_layout(const GgufFile& f, ModelConfig& c) {
  const BlockRecipe& r = c.architecture().recipe;
  uint32_t attn = first_attention_layer(c), moe = first_moe_layer(c);
  TensorLayout& lay = c.layout;
  if (r.layouts.qkv != Fusion::Never && attn < c.n_layers)
    lay.fused_qkv = file_has(f, c, attn, TensorRole::AttnQkv, [](ModelConfig& p) { p.layout.fused_qkv = true; });
  if (r.layouts.gate_up_exps != Fusion::Never && moe < c.n_layers)
    lay.fused_gate_up_exps =
        file_has(f, c, moe, TensorRole::FfnGateUpExps, [](ModelConfig& p) { p.layout.fused_gate_up_exps = true; });
  if (r.attention.qkv_bias != Presence::None && lay.fused_qkv && attn < c.n_layers)
    lay.fused_qkv_bias = file_has(f, c, attn, TensorRole::AttnQkvBias,
                                  [](ModelConfig& p) { p.qkv_bias = p.layout.fused_qkv_bias = true; });
  if (varies(r.attention.qkv_bias))
    c.qkv_bias =
        lay.fused_qkv_bias || has_with(f, c, attn, TensorRole::AttnQBias, [](ModelConfig& p) { p.qkv_bias = true; });
  if (varies(r.attention.out_bias))
    c.attn_out_bias = has_with(f, c, attn, TensorRole::AttnOutBias, [](ModelConfig& p) { p.attn_out_bias = true; });
  if (varies(r.ffn.bias))
    c.ffn_bias = has_with(f, c, 0, TensorRole::FfnGateBias, [](ModelConfig& p) { p.ffn_bias = true; });
  if (varies(r.embeddings.output_bias)) c.output_bias = f.find_tensor(kOutputBias) != nullptr;
}

}  // namespace

void read_tensor_flags(const GgufFile& f, ModelConfig& c) {
  c.tied_embeddings = f.find_tensor(kOutput) == nullptr;
  c.rope.has_freq_factors = c.rope_swa.has_freq_factors = f.find_tensor(kRopeFreqs) != nullptr;
  read_layout(f, c);
  if (c.architecture().tensor_flags) c.architecture().tensor_flags(f, c);
  // DeepSeek-V3's selection bias: probed in the first MoE block, as the biases above.
  c.moe.probs_bias =
      has_with(f, c, first_moe_layer(c), TensorRole::ExpProbsB, [](ModelConfig& p) { p.moe.probs_bias = true; });
  const GgufTensor* embd = f.find_tensor(kTokenEmbd);
  if (c.vocab_size == 0 && embd && embd->ne[1] <= UINT32_MAX) c.vocab_size = uint32_t(embd->ne[1]);
}

namespace {

using Shape = std::vector<uint64_t>;

std::string shape_str(const Shape& s) { return fmt::format("[{}]", fmt::join(s, ", ")); }

// Shapes as ggml sees them: dimensions past the last one above 1 are 1 whether or not the file lists
// them (llama-quantize writes Granite 4.0-H's ssm_norm {d_inner, 1} as {d_inner}).
bool same_shape(Shape a, Shape b) {
  for (Shape* s : {&a, &b})
    while (!s->empty() && s->back() == 1) s->pop_back();
  return a == b;
}

std::string unexpected_hint(std::string_view name, const ModelConfig& c) {
  if (name.find("_exps") != std::string_view::npos || name.find("ffn_gate_inp") != std::string_view::npos ||
      name.find("_shexp") != std::string_view::npos || name.find("exp_probs_b") != std::string_view::npos)
    return c.moe.n_experts ? " (an expert tensor this family does not have)"
                           : " (a mixture-of-experts tensor, but the metadata declares no experts)";
  if (name.find("attn_k_b") != std::string_view::npos || name.find("attn_v_b") != std::string_view::npos ||
      name.find("attn_kv_b") != std::string_view::npos)
    return fmt::format(" (the metadata describes the {} MLA layout)", to_string(c.mla.layout));
  return "";
}

// The tensor-dependent choices llama.cpp's loader makes per block for c's family (a layout, an
// optional bias, gemma4's V from K), as setters; vkllm makes them once from the first block.
std::vector<std::function<void(ModelConfig&)>> choices(const ModelConfig& c) {
  const BlockRecipe& r = c.architecture().recipe;
  std::vector<std::function<void(ModelConfig&)>> out;
  if (r.layouts.qkv != Fusion::Never) out.push_back([](ModelConfig& p) { p.layout.fused_qkv = !p.layout.fused_qkv; });
  if (r.layouts.qkv != Fusion::Never && r.attention.qkv_bias != Presence::None)
    out.push_back([](ModelConfig& p) { p.layout.fused_qkv_bias = !p.layout.fused_qkv_bias; });
  if (r.layouts.gate_up_exps != Fusion::Never)
    out.push_back([](ModelConfig& p) { p.layout.fused_gate_up_exps = !p.layout.fused_gate_up_exps; });
  if (varies(r.attention.qkv_bias)) out.push_back([](ModelConfig& p) { p.qkv_bias = !p.qkv_bias; });
  if (varies(r.attention.out_bias)) out.push_back([](ModelConfig& p) { p.attn_out_bias = !p.attn_out_bias; });
  if (varies(r.ffn.bias)) out.push_back([](ModelConfig& p) { p.ffn_bias = !p.ffn_bias; });
  if (c.architecture().tensor_flags) {  // gemma4's: V from K, K in shared-KV layers, the layer output scale
    out.push_back([](ModelConfig& p) { p.attention_k_eq_v = !p.attention_k_eq_v; });
    out.push_back([](ModelConfig& p) { p.kv_in_shared_layers = !p.kv_in_shared_layers; });
    out.push_back([](ModelConfig& p) { p.layer_out_scale = !p.layer_out_scale; });
  }
  return out;
}

// Whether block N of c's family holds a tensor of this name ("blk.N. ...") under other choices
// than c's (the global tensors do not depend on them).
bool in_other_layout(std::string_view name, const ModelConfig& c) {
  uint32_t l = 0;
  if (std::sscanf(std::string(name).c_str(), "blk.%u.", &l) != 1 || l >= c.n_layers + c.n_nextn_layers) return false;
  auto toggles = choices(c);
  for (uint32_t mask = 1; mask < (1u << toggles.size()); ++mask) {
    ModelConfig other = c;
    for (size_t i = 0; i < toggles.size(); ++i)
      if (mask >> i & 1) toggles[i](other);
    TensorCatalogue t;
    c.architecture().layer_tensors(other, l, t);
    if (t.find(name)) return true;
  }
  return false;
}

// Why a tensor is unexpected: llama.cpp reads it (so vkllm is what falls short) or not (so the
// file is at fault).
std::string unexpected(std::string_view name, const ModelConfig& c) {
  std::string head = fmt::format("unexpected tensor {} for a {} model", printable(name), c.arch_name);
  for (const UnrunTensor& u : c.architecture().unrun_tensors)
    if (name.ends_with(u.suffix))
      return fmt::format("{} ({}): llama.cpp reads this tensor, vkllm does not yet", head, u.what);
  if (in_other_layout(name, c))
    return fmt::format(
        "{}: llama.cpp reads this tensor, vkllm does not yet (it reads every block in the first one's layout, each "
        "set of optional tensors whole)",
        head);
  return fmt::format("{}{}: llama.cpp does not read it either, so the file is damaged or of another architecture", head,
                     unexpected_hint(name, c));
}

}  // namespace

void check_tensors(const GgufFile& f, const ModelConfig& c) {
  TensorCatalogue cat = tensor_catalogue(c);
  for (const GgufTensor& t : f.tensors()) {  // in file order: the first wrong one is named
    const TensorSpec* spec = cat.find(t.name);
    if (!spec) f.fail(unexpected(t.name, c));
    if (!same_shape(t.shape(), spec->ne))
      f.fail(fmt::format("tensor {} has shape {}, expected {}", t.name, shape_str(t.shape()), shape_str(spec->ne)));
  }
  for (const TensorSpec& s : cat.specs())
    if (!f.find_tensor(s.name)) f.fail(fmt::format("missing tensor {} (expected shape {})", s.name, shape_str(s.ne)));
}

}  // namespace vkllm
