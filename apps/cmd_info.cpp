// `vkllm info [-m FILE] [--ctx N] [--kv-type T] [--device I] [--json]`: what a GGUF model is:
// architecture, dimensions, attention kind, the experts and routing of a mixture-of-experts model,
// the architecture's block options, parameters, tensor types, the KV cache per token and at the
// context `run` would use, the tokenizer, the chat template's family, and whether weights + KV
// cache + activations fit the device's memory. A file vkllm cannot run is still described (an unknown architecture by
// its metadata and tensor table), with a warning line saying why it cannot run.
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "arch/architecture.h"
#include "arch/file_type.h"
#include "arch/kv_comparison.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "commands.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf_listing.h"
#include "graph/memory_estimate.h"
#include "graph/weights.h"
#include "model_options.h"
#include "ops_matmul.h"
#include "output.h"
#include "profile_overrides.h"
#include "projector_info.h"
#include "serve/kv_json.h"
#include "text/chat/chat_format.h"
#include "text/chat_template.h"
#include "text/template_family.h"
#include "text/tokenizer.h"
#include "text/vocab.h"

namespace vkllm::cli {

namespace {

std::string human_count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.1f} K", n / 1e3);
  return fmt::format("{}", n);
}

struct InfoOptions {
  ModelOptions model;
  bool json = false;
  uint32_t parallel = 4;  // vkllm serve's KV-cache slots to report
};

// The memory vkllm may use on the device `run` would choose (its largest device-local heap, or
// that heap's budget where the device reports one, or VKLLM_MEMORY_LIMIT when smaller); `problem` says why there is no
// answer.
struct DeviceMemory {
  std::string name, problem;
  uint64_t bytes = 0;
  bool limited = false;  // by VKLLM_MEMORY_LIMIT
  DeviceCaps caps;       // the device and the profile run would use (they plan attention's scratch)
  Profile profile;
};

DeviceMemory device_memory(const ModelOptions& o) {
  try {
    ContextOptions co{.device = o.device};
    Instance instance(validation_requested(co));
    std::vector<DeviceReport> reports = survey_devices(instance);
    std::optional<uint32_t> index = requested_device(co);
    if (!index) index = preferred_device(reports);
    if (!index || *index >= reports.size()) return {.problem = "no Vulkan device that can run vkllm"};
    const DeviceReport& r = reports[*index];
    DeviceMemory d{.name = r.caps.name, .caps = r.caps, .profile = r.profile};
    if (std::string request = requested_profile(co); !request.empty())
      d.profile = profile_for(parse_profile_request(request), r.caps);
    UsableMemory usable = usable_memory(r.caps, requested_memory_limit(co));
    d.bytes = usable.bytes, d.limited = usable.limited;
    return d;
  } catch (const std::exception& e) {
    return {.problem = e.what()};
  }
}

struct Info {
  const GgufFile& file;
  std::optional<ModelConfig> config;  // none when vkllm cannot read the architecture
  std::optional<Tokenizer> tokenizer;
  std::vector<std::string> problems;  // why vkllm cannot run the file
  uint64_t parameters = 0;
  bool parameters_from_config = false;    // a file without tensors
  std::map<std::string, uint64_t> types;  // tensor type -> count
  uint64_t tensor_bytes = 0;
  std::optional<uint32_t> file_type;         // general.file_type (the mix, "Q4_K_M")
  std::optional<std::string> chat_template;  // the family of tokenizer.chat_template; none: no template
  ChatFormat chat_format;                    // how replies are read (vkllm's ChatML when there is no template)
  uint32_t n_ctx = 0;                        // the context `run` would use
  DType kv_type = DType::F16;                // --kv-type
  uint32_t parallel = 4;                     // vkllm serve's KV-cache split: slots x n_ctx tokens each
  MemoryEstimate memory;
  DeviceMemory device;
  double bits_per_weight() const { return parameters ? 8.0 * double(tensor_bytes) / double(parameters) : 0; }
  std::string mix_name() const;  // "Q4_K_M", "file type 99" or "" (no key)
};

std::string Info::mix_name() const { return file_type ? file_type_name(*file_type) : ""; }

// "3 tensors of type q3_k (blk.0.attn_q.weight, ...)" per unsupported type.
void type_problems(const GgufFile& f, std::vector<std::string>& problems) {
  std::map<std::string, std::vector<std::string>> by_type;
  for (const GgufTensor* t : unsupported_weights(f))
    by_type[std::string(vkllm::info(t->type).name)].push_back(printable(t->name));
  for (auto& [type, names] : by_type)
    problems.push_back(fmt::format("{} of type {} ({}{}); supported types: {}", count(names.size(), "tensor"), type,
                                   names.front(), names.size() > 1 ? ", ..." : "", ops::weight_type_names()));
}

// Runs f; an Error becomes a problem (without the file name: the listing names the file).
template <typename F>
void try_part(const GgufFile& file, std::vector<std::string>& problems, const char* what, F&& f) {
  try {
    f();
  } catch (const Error& e) {
    std::string_view m = e.what(), prefix = file.name();
    if (m.starts_with(prefix) && m.substr(prefix.size()).starts_with(": ")) m.remove_prefix(prefix.size() + 2);
    problems.push_back(fmt::format("{}{}", what, m));
  }
}

Info gather(const GgufFile& f, const InfoOptions& o) {
  Info i{.file = f};
  try_part(f, i.problems, "", [&] { i.config = ModelConfig::from_gguf(f); });
  if (has_vocab(f)) try_part(f, i.problems, "tokenizer: ", [&] { i.tokenizer = Tokenizer::from_gguf(f); });
  try_part(f, i.problems, "chat template: ", [&] {
    i.chat_format = ChatFormat::detect(kChatMlTemplate);
    if (std::optional<std::string> source = read_chat_template(f)) {
      i.chat_template = chat_template_family(*source);
      i.chat_format = ChatFormat::detect(*source);
      ChatTemplate::parse(*source);
    }
  });
  type_problems(f, i.problems);
  for (const GgufTensor& t : f.tensors()) {
    i.parameters += t.n_elements();
    i.tensor_bytes += t.data.size();
    ++i.types[std::string(vkllm::info(t.type).name)];
  }
  i.file_type = read_file_type(f);
  if (!i.config) return i;
  const ModelConfig& c = *i.config;
  if (f.tensors().empty()) {
    i.parameters = parameter_count(c);
    i.parameters_from_config = true;
  }
  i.kv_type = kv_type_named(o.model.kv_type);
  i.parallel = o.parallel;
  i.device = device_memory(o.model);
  // As `run` chooses it: the default shrinks to what fits the device (load_model).
  const DeviceMemory& d = i.device;
  i.n_ctx = o.model.ctx         ? o.model.ctx
            : d.problem.empty() ? fitted_context(f, c, o.model.batch, i.kv_type, 1, d.bytes, d.caps, d.profile)
                                : default_context(c);
  i.memory = d.problem.empty() ? estimate_memory(f, c, i.n_ctx, o.model.batch, i.kv_type, 1, d.caps, d.profile)
                               : estimate_memory(f, c, i.n_ctx, o.model.batch, i.kv_type);
  return i;
}

// "layers 3, 7, 11, ...", for messages.
std::string linear_line(const ModelConfig& c) {
  const LinearAttentionConfig& a = c.linear;
  uint32_t n = c.n_layers - c.n_attention_layers();
  return fmt::format(
      "Gated DeltaNet linear attention in {} of {} layers ({} key / {} value heads of {}, conv {}); full attention "
      "in layers {}",
      n, c.n_layers, a.k_heads, a.v_heads, a.head_dim, a.conv_kernel, attention_layers(c));
}

// Each run of blocks alike: "0-2 deltanet, 3 attention, 4 deltanet"; where some blocks have no
// FFN (Nemotron-H) "+ffn" marks those that have one, and a block that is only an FFN is "ffn" or "moe".
std::string mixers_line(const ModelConfig& c) {
  bool some_without = false;
  for (uint32_t l = 0; l < c.n_layers; ++l) some_without = some_without || !c.has_ffn(l);
  auto kind = [&](uint32_t l) -> std::string {
    if (c.mixer(l) == Mixer::None) return c.is_moe_layer(l) ? "moe" : "ffn";  // a block that is only its FFN
    return std::string(to_string(c.mixer(l))) + (some_without && c.has_ffn(l) ? "+ffn" : "");
  };
  std::vector<std::string> runs;
  for (uint32_t l = 0, end; l < c.n_layers; l = end) {
    for (end = l + 1; end < c.n_layers && kind(end) == kind(l);) ++end;
    runs.push_back(end - l == 1 ? fmt::format("{} {}", l, kind(l)) : fmt::format("{}-{} {}", l, end - 1, kind(l)));
  }
  return fmt::format("{}", fmt::join(runs, ", "));
}

std::string attention_line(const ModelConfig& c) {
  const MlaConfig& m = c.mla;
  if (c.has_mixer(Mixer::DeltaNet))
    return fmt::format("hybrid: GQA ({} query heads per KV head{}), {}", c.n_heads / c.n_kv_heads,
                       c.architecture().recipe.attention.gated ? ", sigmoid output gate" : "", linear_line(c));
  if (c.has_mixer(Mixer::ShortConv))  // lfm2
    return fmt::format(
        "hybrid: GQA ({} query heads per KV head), gated short convolutions in {} of {} layers (conv "
        "{}); attention in layers {}",
        c.n_heads / c.n_kv_heads, c.n_recurrent_layers(), c.n_layers, c.short_conv.kernel, attention_layers(c));
  switch (c.attention_kind()) {
    case AttentionKind::MLA:
      return fmt::format("MLA (kv_lora_rank {}, rope dim {}, q_lora_rank {}, {} layout: {})", m.kv_lora_rank,
                         m.qk_rope_head_dim, m.q_lora_rank, to_string(m.layout),
                         m.layout == MlaLayout::Split ? "attn_k_b + attn_v_b" : "attn_kv_b");
    case AttentionKind::GQA:
      return fmt::format("GQA ({} query heads per KV head)", c.n_heads / c.n_kv_heads);
    default:
      return std::string(to_string(c.attention_kind()));
  }
}

// The routing rule in words (docs/formats.md §8).
std::string routing_line(const MoeConfig& m) {
  std::string s = fmt::format("{} of {} per token by {}", m.n_experts_used, m.n_experts, to_string(m.gating));
  if (m.probs_bias) s += " + selection bias";
  if (m.n_groups > 1) s += fmt::format(", best {} of {} groups", m.n_groups_used, m.n_groups);
  s += m.weights_norm ? ", weights renormalised" : ", weights as scored";
  if (m.weights_scale != 1.0f && m.weights_scale != 0.0f) s += fmt::format(" x{}", m.weights_scale);
  return s;
}

std::string experts_line(const ModelConfig& c) {
  const MoeConfig& m = c.moe;
  std::string s = fmt::format("{} routed of width {}", m.n_experts, m.expert_hidden_dim);
  if (m.shared_hidden_dim) {  // deepseek2: n shared experts run as one FFN of n times the width
    uint32_t n = std::max(1u, m.n_shared_experts);
    s += fmt::format(", {} shared (one FFN of width {}{})", n, m.shared_hidden_dim,
                     m.shared_gate ? ", sigmoid-gated" : "");
  }
  if (m.leading_dense_blocks) s += fmt::format(", blocks 0..{} dense", m.leading_dense_blocks - 1);
  return s + "; " + routing_line(m);
}

// "2, 5, 8" or "0..5".
std::string layer_list(const ModelConfig& c, bool (*pick)(const ModelConfig&, uint32_t)) {
  std::vector<uint32_t> ls;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (pick(c, l)) ls.push_back(l);
  bool run = !ls.empty() && ls.back() - ls.front() + 1 == ls.size() && ls.size() > 2;
  return run ? fmt::format("{}..{}", ls.front(), ls.back()) : fmt::format("{}", fmt::join(ls, ", "));
}

// Issue 28's per-layer attention rules: head shapes that differ between sliding and global layers,
// layers that share KV (and what that saves), sinks, and layers without rope.
void layout_features(const ModelConfig& c, std::vector<std::string>& f) {
  const BlockRecipe& r = c.architecture().recipe;
  uint32_t swa = 0, global = 0;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (c.has_attention(l)) (c.is_swa_layer(l) ? swa : global) = l + 1;
  if (swa && global) {
    LayerAttention s = c.attention_of(swa - 1), g = c.attention_of(global - 1);
    if (s.head_dim != g.head_dim || s.n_kv_heads != g.n_kv_heads)
      f.push_back(fmt::format("sliding layers: heads {} x {}, {} KV; global layers: {} x {}, {} KV", s.n_heads,
                              s.head_dim, s.n_kv_heads, g.n_heads, g.head_dim, g.n_kv_heads));
  }
  if (c.n_kv_shared_layers) {
    uint64_t saved = c.shared_kv_saving_per_token(), kept = c.kv_bytes_per_token();
    f.push_back(fmt::format("layers {} reuse earlier layers' KV cache: {} per token saved ({:.0f}% of {})",
                            layer_list(c, [](const ModelConfig& m, uint32_t l) { return !m.has_kv(l); }),
                            human_bytes(double(saved)), 100.0 * double(saved) / double(saved + kept),
                            human_bytes(double(saved + kept))));
  }
  if (r.attention.sinks) f.push_back("attention sinks (one logit per head)");
  if (c.attn_out_bias) f.push_back("attention output bias");
  if (r.attention.v_norm) f.push_back("V head norms");
  if (c.attention_k_eq_v) f.push_back("V from K's projection in global layers");
  if (!c.nope_layers.empty())
    f.push_back(fmt::format("no rope in layers {}",
                            layer_list(c, [](const ModelConfig& m, uint32_t l) { return !m.rotates(l); })));
  if (c.attn_temperature_beta != 0)
    f.push_back(fmt::format("attention temperature 1 + {}·ln(floor(pos / {}) + 1)", c.attn_temperature_beta,
                            c.attn_temperature_length));
  if (c.per_layer_embd) f.push_back(fmt::format("per-layer embeddings of {} per layer", c.per_layer_embd));
  if (c.layer_out_scale) f.push_back("layer output scales");
  if (r.ffn.activation == FfnActivation::SwigluOai) f.push_back("clamped SwiGLU (alpha 1.702, limit 7, up + 1)");
  if (r.ffn.moe_beside_dense && c.moe.n_experts) f.push_back("dense FFN beside the experts");
}

// What the architecture's blocks do beyond the plain pre-norm decoder.
std::vector<std::string> features(const ModelConfig& c) {
  const BlockRecipe& r = c.architecture().recipe;
  std::vector<std::string> f;
  TensorCatalogue t;
  c.architecture().layer_tensors(c, 0, t);
  if (t.find(TensorRole::FfnGateUp, 0)) f.push_back("fused gate|up");
  if (c.qkv_bias) f.push_back("qkv bias");
  if (r.attention.qk_norm) f.push_back("q/k head norms");
  if (r.norms.post_norms) f.push_back("post-attention and post-FFN norms");
  if (r.ffn.activation == FfnActivation::Gelu) f.push_back("GELU-gated FFN");
  if (r.embeddings.scale) f.push_back("embeddings x sqrt(dim)");
  const Multipliers& m = c.multipliers;
  if (m.attention > 0) f.push_back(fmt::format("query scale {:.6g}", m.attention));
  if (m.embedding > 0) f.push_back(fmt::format("embeddings x {:.6g}", m.embedding));
  if (m.residual > 0) f.push_back(fmt::format("block outputs x {:.6g} before the residual adds", m.residual));
  if (m.logit > 0) f.push_back(fmt::format("logits / {:.6g}", m.logit));
  size_t swa = std::count(c.swa_layers.begin(), c.swa_layers.end(), 1);
  if (swa)
    f.push_back(fmt::format("sliding window {} on {} of {} layers (rope base {})", c.sliding_window, swa, c.n_layers,
                            c.rope_swa.theta));
  if (c.attn_softcap > 0) f.push_back(fmt::format("attention soft-cap {}", c.attn_softcap));
  if (c.final_softcap > 0) f.push_back(fmt::format("logit soft-cap {}", c.final_softcap));
  if (r.attention.gated) f.push_back("gated attention output");
  if (c.rope.sections[0] + c.rope.sections[1] + c.rope.sections[2] + c.rope.sections[3])
    f.push_back(fmt::format("rope sections [{}]{}", fmt::join(c.rope.sections, ", "),
                            c.rope.sections_interleaved ? " interleaved" : ""));
  if (c.n_nextn_layers)
    f.push_back(fmt::format("{} multi-token-prediction block{} (loaded from the file, not run)", c.n_nextn_layers,
                            c.n_nextn_layers == 1 ? "" : "s"));
  layout_features(c, f);
  return f;
}

// The tensor layout of a family that has more than one (docs/formats.md §13): which the file uses.
std::string layout_line(const ModelConfig& c) {
  const LayoutRecipe& r = c.architecture().recipe.layouts;
  const TensorLayout& l = c.layout;
  std::vector<std::string> parts;
  if (r.qkv != Fusion::Never)
    parts.push_back(!l.fused_qkv       ? "separate Q, K, V"
                    : !c.qkv_bias      ? "fused QKV"
                    : l.fused_qkv_bias ? "fused QKV (and its bias)"
                                       : "fused QKV (biases apart)");
  if (r.gate_up_exps != Fusion::Never && c.moe.n_experts)
    parts.push_back(l.fused_gate_up_exps ? "fused expert gate/up" : "separate expert gate and up");
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string hidden_str(const std::vector<uint32_t>& h) {
  bool uniform = std::all_of(h.begin(), h.end(), [&](uint32_t x) { return x == h[0]; });
  return uniform ? fmt::format("{}", h[0]) : fmt::format("[{}]", fmt::join(h, ", "));
}

std::string file_line(const GgufFile& f) {
  std::string parts = f.split_count() > 1 ? fmt::format(" in {} parts", f.split_count()) : "";
  return fmt::format("file        {} (GGUF v{}, {}, {}, {}{})\n", f.name(), f.version(),
                     count(f.tensors().size(), "tensor"), count(f.metadata().size(), "metadata key"),
                     human_bytes(double(f.file_bytes())), parts);
}

std::string memory_text(const Info& i) {
  const MemoryEstimate& m = i.memory;
  std::string out =
      fmt::format("memory      about {}: weights {}, KV cache {}, {}activations at most {}{}\n",
                  human_bytes(double(m.total())), human_bytes(double(m.weights)), human_bytes(double(m.kv_cache)),
                  m.recurrent ? fmt::format("linear-attention state {}, ", human_bytes(double(m.recurrent))) : "",
                  human_bytes(double(m.activations)),
                  m.scratch ? fmt::format(", attention scratch {}", human_bytes(double(m.scratch))) : "");
  const DeviceMemory& d = i.device;
  if (!d.problem.empty()) return out + fmt::format("fits        unknown: {}\n", d.problem);
  return out + fmt::format("fits        {}: {} has {}{}\n", m.total() <= d.bytes ? "yes" : "no", d.name,
                           human_bytes(double(d.bytes)), d.limited ? " (VKLLM_MEMORY_LIMIT)" : " of device memory");
}

std::string model_text(const Info& i) {
  const ModelConfig& c = *i.config;
  std::string out;
  if (!c.name.empty()) out += fmt::format("name        {}\n", c.name);
  out += fmt::format("arch        {}\n", c.arch_name);
  out += fmt::format(
      "dims        dim {}, layers {}, heads {}, kv heads {}, head dim {}, value head dim {}, ffn {}, vocab {}\n", c.dim,
      c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.v_head_dim, hidden_str(c.hidden_dim), c.vocab_size);
  out += fmt::format("attention   {}\n", attention_line(c));
  if (c.hybrid() || c.has_mixer(Mixer::None)) out += fmt::format("mixers      {}\n", mixers_line(c));
  if (c.moe.n_experts) out += fmt::format("experts     {}\n", experts_line(c));
  std::vector<std::string> feats = features(c);
  if (!feats.empty()) out += fmt::format("blocks      {}\n", fmt::join(feats, ", "));
  std::string layout = layout_line(c);  // read from the tensors: none in a metadata-only file
  if (!layout.empty() && !i.parameters_from_config) out += fmt::format("layout      {}\n", layout);
  out += fmt::format("rope        {}, dim {}, theta {}, scaling {}{}{}\n", to_string(c.rope.mode), c.rope.dim,
                     c.rope.theta, to_string(c.rope.scaling),
                     c.rope.scaling == RopeScaling::None ? "" : fmt::format(" x{}", c.rope.factor),
                     c.rope.has_freq_factors ? ", frequency factors" : "");
  out += fmt::format(
      "context     {} trained; run uses {} (--ctx; by default the model's, at most 4096, halved until it fits the "
      "device)\n",
      c.seq_len, i.n_ctx);
  out += fmt::format("params      {} ({}){}\n", i.parameters, human_count(double(i.parameters)),
                     i.parameters_from_config ? " from the config: the file has no tensors" : "");
  std::vector<std::string> types;
  for (const auto& [name, n] : i.types) types.push_back(fmt::format("{} {}", name, n));
  std::string mix = i.mix_name();
  if (types.empty())
    out += "tensors     none\n";
  else
    out += fmt::format("tensors     {}{}; {:.2f} bits per weight\n", mix.empty() ? "" : mix + ": ",
                       fmt::join(types, ", "), i.bits_per_weight());
  uint64_t per_token = c.kv_bytes_per_token(i.kv_type);
  out +=
      fmt::format("kv cache    {} bytes per token in {} ({}); {} at run's {}; {} at the full {}\n", per_token,
                  vkllm::info(i.kv_type).name, human_bytes(double(per_token)), human_bytes(double(per_token) * i.n_ctx),
                  count(i.n_ctx, "token"), human_bytes(double(per_token) * c.seq_len), count(c.seq_len, "token"));
  std::vector<std::string> kinds;
  for (const KvKindCost& k : kv_costs_by_kind(c, i.kv_type))
    kinds.push_back(fmt::format("{} {}{}", to_string(k.kind), human_bytes(double(k.bytes_per_token)),
                                k.kind == AttentionKind::GQA   ? fmt::format(" ({} KV heads)", k.kv_heads)
                                : k.kind == AttentionKind::MLA ? fmt::format(" (latent {} + rope {})", k.latent, k.rope)
                                : k.kind == AttentionKind::Hybrid
                                    ? fmt::format(" + {} per sequence ({} GQA layers)",
                                                  human_bytes(double(k.bytes_per_sequence)), k.attention_layers)
                                    : ""));
  out += fmt::format("kv by kind  per token at these dims: {}\n", fmt::join(kinds, ", "));
  uint64_t state = c.recurrent_bytes_per_sequence();
  if (state)
    out += fmt::format(
        "linear      constant {} per sequence (f32 conv and {} state of {} layers), whatever its length; a "
        "checkpoint per slot doubles it\n",
        human_bytes(double(state)), c.has_mixer(Mixer::DeltaNet) ? "delta-rule" : "recurrent", c.n_recurrent_layers());
  double slot = double(per_token) * i.n_ctx;
  out += fmt::format("serve       --parallel {} slots x --ctx {} tokens: KV cache {} ({} per slot){}\n", i.parallel,
                     i.n_ctx, human_bytes(slot * i.parallel), human_bytes(slot),
                     state ? fmt::format(", linear-attention state {} ({} per slot with its checkpoint)",
                                         human_bytes(2.0 * state * i.parallel), human_bytes(2.0 * state))
                           : "");
  return out + memory_text(i);
}

// tokenizer.ggml.model of each kind.
std::string_view tokenizer_model(Tokenizer::Kind k) {
  return k == Tokenizer::Kind::Spm ? "llama" : k == Tokenizer::Kind::Bpe ? "gpt2" : "gemma4";
}

std::string tokenizer_text(const Info& i) {
  if (!i.tokenizer) return "tokenizer   none\n";
  const Tokenizer& t = *i.tokenizer;
  std::string kind = t.kind() == Tokenizer::Kind::Spm   ? "llama (SentencePiece)"
                     : t.kind() == Tokenizer::Kind::Bpe ? fmt::format("gpt2 (byte-level BPE, pre {})", t.pre())
                                                        : "gemma4 (SentencePiece-style BPE)";
  return fmt::format("tokenizer   {}, vocab {}, bos {}, eos {}, add_bos {}\n", kind, t.vocab_size(), t.bos(), t.eos(),
                     t.add_bos());
}

std::string template_text(const Info& i) {
  std::string out = i.chat_template ? fmt::format("template    {} (the file's chat template)\n", *i.chat_template)
                                    : "template    none: vkllm chat and serve frame turns with ChatML\n";
  const ChatFormat& f = i.chat_format;
  if (f.tools == ToolCallFormat::Unknown)
    return out + fmt::format(
                     "tool calls  not read: the template ({}) writes them in a syntax vkllm does not know; served "
                     "without tools\n",
                     f.unknown);
  return out + fmt::format("tool calls  {}{}\n", to_string(f.tools), f.reasons() ? ", with reasoning" : "");
}

void print_text(const Info& i) {
  std::string out = file_line(i.file);
  out += i.config ? model_text(i) : listing_text(i.file);
  out += tokenizer_text(i);
  out += template_text(i);
  for (const std::string& p : i.problems) out += fmt::format("warning: not supported by vkllm: {}\n", p);
  write_stdout(out);
}

// Each layer as it runs: its mixer and whether it has an FFN; for attention its heads, whose KV
// cache it reads and what that costs; for a recurrent mixer the bytes of state per sequence.
nlohmann::json layers_json(const ModelConfig& c, DType kv) {
  nlohmann::json layers = nlohmann::json::array();
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    nlohmann::json layer = {{"layer", l}, {"mixer", to_string(c.mixer(l))}, {"ffn", c.has_ffn(l)}};
    if (!c.has_attention(l)) {
      layer["attention"] = c.is_recurrent_layer(l) ? "linear" : "none";
      if (c.is_recurrent_layer(l)) layer["state_bytes_per_sequence"] = 4 * c.recurrent_state(l).floats();
      layers.push_back(layer);
      continue;
    }
    LayerAttention a = c.attention_of(l);
    layers.push_back({{"layer", l},
                      {"mixer", "attention"},
                      {"ffn", c.has_ffn(l)},
                      {"attention", c.is_swa_layer(l) ? "sliding" : "global"},
                      {"n_heads", a.n_heads},
                      {"n_kv_heads", a.n_kv_heads},
                      {"head_dim", a.head_dim},
                      {"v_head_dim", a.v_head_dim},
                      {"rope", a.rotates},
                      {"kv_layer", a.kv_layer},
                      {"kv_bytes_per_token", c.has_kv(l) ? c.layer_kv_bytes_per_token(l, kv) : 0}});
  }
  return layers;
}

nlohmann::json model_json(const Info& i) {
  const ModelConfig& c = *i.config;
  nlohmann::json j = {
      {"name", c.name},
      {"dim", c.dim},
      {"n_layers", c.n_layers},
      {"n_heads", c.n_heads},
      {"n_kv_heads", c.n_kv_heads},
      {"head_dim", c.head_dim},
      {"v_head_dim", c.v_head_dim},
      {"hidden_dim", c.hidden_dim},
      {"vocab_size", c.vocab_size},
      {"context_length", c.seq_len},
      {"n_ctx", i.n_ctx},
      {"attention", to_string(c.attention_kind())},
      {"rope",
       {{"mode", to_string(c.rope.mode)},
        {"dim", c.rope.dim},
        {"theta", c.rope.theta},
        {"scaling", to_string(c.rope.scaling)},
        {"factor", c.rope.factor},
        {"freq_factors", c.rope.has_freq_factors}}},
      {"parameters", i.parameters},
      {"parameters_from_config", i.parameters_from_config},
      {"kv_bytes_per_token", c.kv_bytes_per_token(i.kv_type)},
      {"kv_type", vkllm::info(i.kv_type).name},
      {"kv_cache_bytes", i.memory.kv_cache},
      {"kv_cache_bytes_full_context", c.kv_bytes_per_token(i.kv_type) * c.seq_len},
      {"serve_kv_cache",
       {{"parallel", i.parallel},
        {"ctx", i.n_ctx},
        {"bytes_per_slot", c.kv_bytes_per_token(i.kv_type) * i.n_ctx},
        {"bytes", c.kv_bytes_per_token(i.kv_type) * i.n_ctx * i.parallel}}},
      {"tied_embeddings", c.tied_embeddings},
  };
  add_kv_json(j, c, i.kv_type);
  j["features"] = features(c);
  std::string names = layout_names(c.layout);
  if (i.parameters_from_config)  // no tensors to tell
    j["layout"] = nullptr;
  else
    j["layout"] = {{"fused_qkv", c.layout.fused_qkv},
                   {"fused_qkv_bias", c.layout.fused_qkv_bias},
                   {"fused_gate_up_exps", c.layout.fused_gate_up_exps},
                   {"name", names.empty() ? "separate" : names}};
  j["layers"] = layers_json(c, i.kv_type);
  j["kv_shared_saving_bytes_per_token"] = c.shared_kv_saving_per_token(i.kv_type);
  if (c.moe.n_experts) {
    const MoeConfig& m = c.moe;
    j["experts"] = {{"count", m.n_experts},
                    {"used", m.n_experts_used},
                    {"hidden_dim", m.expert_hidden_dim},
                    {"shared_hidden_dim", m.shared_hidden_dim},
                    {"shared_count", m.shared_hidden_dim ? std::max(1u, m.n_shared_experts) : 0u},
                    {"shared_gate", m.shared_gate},
                    {"leading_dense_blocks", m.leading_dense_blocks},
                    {"gating", to_string(m.gating)},
                    {"selection_bias", m.probs_bias},
                    {"groups", m.n_groups},
                    {"groups_used", m.n_groups_used},
                    {"weights_norm", m.weights_norm},
                    {"weights_scale", m.weights_scale},
                    {"routing", routing_line(m)}};
  } else {
    j["experts"] = nullptr;
  }
  const DeviceMemory& d = i.device;
  j["memory"] = {{"weights", i.memory.weights},
                 {"kv_cache", i.memory.kv_cache},
                 {"activations_at_most", i.memory.activations},
                 {"total", i.memory.total()},
                 {"device", d.problem.empty() ? nlohmann::json(d.name) : nlohmann::json(nullptr)},
                 {"device_bytes", d.bytes},
                 {"fits", d.problem.empty() ? nlohmann::json(i.memory.total() <= d.bytes) : nlohmann::json(nullptr)}};
  j["memory"]["recurrent"] = i.memory.recurrent;
  j["memory"]["attention_scratch"] = i.memory.scratch;  // split-K partials as the device's profile plans them
  j["nextn_layers"] = c.n_nextn_layers;
  if (c.attention_kind() == AttentionKind::MLA)
    j["mla"] = {{"q_lora_rank", c.mla.q_lora_rank},
                {"kv_lora_rank", c.mla.kv_lora_rank},
                {"qk_nope_head_dim", c.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", c.mla.qk_rope_head_dim},
                {"v_head_dim", c.mla.v_head_dim},
                {"layout", to_string(c.mla.layout)}};
  return j;
}

nlohmann::json to_json(const Info& i) {
  const GgufFile& f = i.file;
  nlohmann::json j = {
      {"file", f.name()},
      {"gguf_version", f.version()},
      {"architecture", architecture_name(f)},
      {"supported", i.problems.empty()},
      {"problems", i.problems},
      {"tensor_types", i.types},
      {"file_type", i.file_type ? nlohmann::json(i.mix_name()) : nlohmann::json(nullptr)},
      {"bits_per_weight", i.bits_per_weight()},
      {"tensor_count", f.tensors().size()},
      {"file_bytes", f.file_bytes()},
      {"split_count", f.split_count()},
      {"chat_template",
       {{"present", i.chat_template.has_value()},
        {"family", i.chat_template ? nlohmann::json(*i.chat_template) : nullptr},
        {"tool_calls", to_string(i.chat_format.tools)},
        {"tool_calls_unread", i.chat_format.tools == ToolCallFormat::Unknown ? nlohmann::json(i.chat_format.unknown)
                                                                             : nlohmann::json(nullptr)},
        {"reasoning", i.chat_format.reasons()}}}};
  if (i.config)
    j.update(model_json(i));
  else
    j.update(listing_json(f));
  j["tokenizer"] = nullptr;
  if (i.tokenizer) {
    const Tokenizer& t = *i.tokenizer;
    j["tokenizer"] = {{"kind", tokenizer_model(t.kind())},
                      {"pre", t.pre()},
                      {"vocab_size", t.vocab_size()},
                      {"bos", t.bos()},
                      {"eos", t.eos()},
                      {"add_bos", t.add_bos()}};
  }
  return j;
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd = app.add_subcommand(
      "info", "Describe a GGUF model: architecture, dimensions, attention, KV cache, tokenizer, whether it fits");
  auto o = std::make_shared<InfoOptions>();
  add_model_options(cmd, o->model);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_option("--parallel", o->parallel, "KV-cache slots to report (as vkllm serve --parallel)")
      ->type_name("N")
      ->capture_default_str()
      ->check(int_range(1, 256));
  add_mmproj_options(cmd, o->model);
  cmd->callback([o] {
    GgufFile f = open_model(o->model);
    Info i = gather(f, *o);
    // --mmproj (or -hf's projector): the encoder, and what images cost in tokens and KV bytes.
    std::string mmproj = mmproj_path(o->model);
    std::optional<ProjectorConfig> proj;
    if (!mmproj.empty()) proj = read_projector_config(GgufFile::open(mmproj));
    uint64_t per_token = i.config ? i.config->kv_bytes_per_token(i.kv_type) : 0;
    uint32_t dim = i.config ? i.config->dim : 0;
    if (o->json) {
      nlohmann::json j = to_json(i);
      j["projector"] = proj ? projector_json(mmproj, *proj, per_token, dim) : nlohmann::json(nullptr);
      print_json(j);
    } else {
      print_text(i);
      if (proj) write_stdout(projector_text(mmproj, *proj, per_token, dim));
    }
  });
}

}  // namespace vkllm::cli
