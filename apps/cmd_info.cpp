// `vkllm info [-m FILE] [--json]`: what a GGUF model is: architecture, dimensions, attention kind,
// the experts and routing of a mixture-of-experts model, the architecture's block options,
// parameters, tensor types, KV-cache bytes per token, context length and tokenizer.
#include <fmt/format.h>

#include <fmt/ranges.h>

#include <algorithm>
#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "arch/architecture.h"
#include "arch/model_config.h"
#include "arch/tensors.h"
#include "commands.h"
#include "gguf/reader.h"
#include "model_options.h"
#include "text/tokenizer.h"

namespace vkllm::cli {

namespace {

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  for (; b >= 1024 && u < 4; ++u) b /= 1024;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

std::string human_count(double n) {
  if (n >= 1e9) return fmt::format("{:.2f} B", n / 1e9);
  if (n >= 1e6) return fmt::format("{:.1f} M", n / 1e6);
  if (n >= 1e3) return fmt::format("{:.1f} K", n / 1e3);
  return fmt::format("{}", n);
}

struct Info {
  const GgufFile& file;
  ModelConfig config;
  std::optional<Tokenizer> tokenizer;
  uint64_t parameters = 0;
  bool parameters_from_config = false;    // a file without tensors
  std::map<std::string, uint64_t> types;  // tensor type -> count
  uint64_t kv_bytes = 0;                  // per token, f16
};

Info gather(const GgufFile& f) {
  Info i{f, ModelConfig::from_gguf(f), std::nullopt};
  if (has_vocab(f)) i.tokenizer = Tokenizer::from_gguf(f);
  for (const GgufTensor& t : f.tensors()) {
    i.parameters += t.n_elements();
    ++i.types[std::string(vkllm::info(t.type).name)];
  }
  if (f.tensors().empty()) {
    i.parameters = parameter_count(i.config);
    i.parameters_from_config = true;
  }
  i.kv_bytes = i.config.kv_bytes_per_token(DType::F16);
  return i;
}

std::string attention_line(const ModelConfig& c) {
  const MlaConfig& m = c.mla;
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
  if (m.shared_hidden_dim)
    s += fmt::format(", shared expert of width {}{}", m.shared_hidden_dim, m.shared_gate ? " (sigmoid-gated)" : "");
  if (m.leading_dense_blocks) s += fmt::format(", blocks 0..{} dense", m.leading_dense_blocks - 1);
  return s + "; " + routing_line(m);
}

// What the architecture's blocks do beyond the plain pre-norm decoder.
std::vector<std::string> features(const ModelConfig& c) {
  const BlockRecipe& r = c.architecture().recipe;
  std::vector<std::string> f;
  TensorCatalogue t;
  c.architecture().layer_tensors(c, 0, t);
  if (t.find(TensorRole::AttnQkv, 0)) f.push_back("fused qkv");
  if (t.find(TensorRole::FfnGateUp, 0)) f.push_back("fused gate|up");
  if (c.qkv_bias) f.push_back("qkv bias");
  if (r.qk_norm) f.push_back("q/k head norms");
  if (r.post_norms) f.push_back("post-attention and post-FFN norms");
  if (r.ffn_activation == FfnActivation::Gelu) f.push_back("GELU-gated FFN");
  if (r.scale_embeddings) f.push_back("embeddings x sqrt(dim)");
  if (c.query_scale > 0) f.push_back(fmt::format("query scale {:.6g}", c.query_scale));
  size_t swa = std::count(c.swa_layers.begin(), c.swa_layers.end(), 1);
  if (swa)
    f.push_back(fmt::format("sliding window {} on {} of {} layers (rope base {})", c.sliding_window, swa, c.n_layers,
                            c.rope_swa.theta));
  if (c.attn_softcap > 0) f.push_back(fmt::format("attention soft-cap {}", c.attn_softcap));
  if (c.final_softcap > 0) f.push_back(fmt::format("logit soft-cap {}", c.final_softcap));
  return f;
}

std::string hidden_str(const std::vector<uint32_t>& h) {
  bool uniform = std::all_of(h.begin(), h.end(), [&](uint32_t x) { return x == h[0]; });
  return uniform ? fmt::format("{}", h[0]) : fmt::format("[{}]", fmt::join(h, ", "));
}

void print_text(const Info& i) {
  const ModelConfig& c = i.config;
  const GgufFile& f = i.file;
  fmt::print("file        {} (GGUF v{}, {} tensors, {} metadata keys, {})\n", f.name(), f.version(), f.tensors().size(),
             f.metadata().size(), human_bytes(double(f.bytes().size())));
  if (!c.name.empty()) fmt::print("name        {}\n", c.name);
  fmt::print("arch        {}\n", c.arch_name);
  fmt::print("dims        dim {}, layers {}, heads {}, kv heads {}, head dim {}, value head dim {}, ffn {}, vocab {}\n",
             c.dim, c.n_layers, c.n_heads, c.n_kv_heads, c.head_dim, c.v_head_dim, hidden_str(c.hidden_dim),
             c.vocab_size);
  fmt::print("attention   {}\n", attention_line(c));
  if (c.moe.n_experts) fmt::print("experts     {}\n", experts_line(c));
  std::vector<std::string> feats = features(c);
  if (!feats.empty()) fmt::print("blocks      {}\n", fmt::join(feats, ", "));
  fmt::print("rope        {}, dim {}, theta {}, scaling {}{}{}\n", to_string(c.rope.mode), c.rope.dim, c.rope.theta,
             to_string(c.rope.scaling), c.rope.scaling == RopeScaling::None ? "" : fmt::format(" x{}", c.rope.factor),
             c.rope.has_freq_factors ? ", frequency factors" : "");
  fmt::print("context     {}\n", c.seq_len);
  fmt::print("params      {} ({}){}\n", i.parameters, human_count(double(i.parameters)),
             i.parameters_from_config ? " from the config: the file has no tensors" : "");
  std::vector<std::string> types;
  for (const auto& [name, n] : i.types) types.push_back(fmt::format("{} {}", name, n));
  fmt::print("tensors     {}\n", types.empty() ? "none" : fmt::format("{}", fmt::join(types, ", ")));
  fmt::print("kv cache    {} bytes per token in f16 ({}); {} at {} tokens\n", i.kv_bytes,
             human_bytes(double(i.kv_bytes)), human_bytes(double(i.kv_bytes) * c.seq_len), c.seq_len);
  if (!i.tokenizer) {
    fmt::print("tokenizer   none\n");
    return;
  }
  const Tokenizer& t = *i.tokenizer;
  bool spm = t.kind() == Tokenizer::Kind::Spm;
  fmt::print("tokenizer   {}, vocab {}, bos {}, eos {}, add_bos {}\n",
             spm ? "llama (SentencePiece)" : fmt::format("gpt2 (byte-level BPE, pre {})", t.pre()), t.vocab_size(),
             t.bos(), t.eos(), t.add_bos());
}

nlohmann::json to_json(const Info& i) {
  const ModelConfig& c = i.config;
  nlohmann::json j = {
      {"file", i.file.name()},
      {"gguf_version", i.file.version()},
      {"name", c.name},
      {"architecture", c.arch_name},
      {"dim", c.dim},
      {"n_layers", c.n_layers},
      {"n_heads", c.n_heads},
      {"n_kv_heads", c.n_kv_heads},
      {"head_dim", c.head_dim},
      {"v_head_dim", c.v_head_dim},
      {"hidden_dim", c.hidden_dim},
      {"vocab_size", c.vocab_size},
      {"context_length", c.seq_len},
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
      {"tensor_types", i.types},
      {"tensor_count", i.file.tensors().size()},
      {"kv_bytes_per_token", i.kv_bytes},
      {"tied_embeddings", c.tied_embeddings},
  };
  j["features"] = features(c);
  if (c.moe.n_experts) {
    const MoeConfig& m = c.moe;
    j["experts"] = {{"count", m.n_experts},
                    {"used", m.n_experts_used},
                    {"hidden_dim", m.expert_hidden_dim},
                    {"shared_hidden_dim", m.shared_hidden_dim},
                    {"shared_count", m.n_shared_experts},
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
  if (c.attention_kind() == AttentionKind::MLA)
    j["mla"] = {{"q_lora_rank", c.mla.q_lora_rank},
                {"kv_lora_rank", c.mla.kv_lora_rank},
                {"qk_nope_head_dim", c.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", c.mla.qk_rope_head_dim},
                {"v_head_dim", c.mla.v_head_dim},
                {"layout", to_string(c.mla.layout)}};
  if (i.tokenizer) {
    const Tokenizer& t = *i.tokenizer;
    j["tokenizer"] = {{"kind", t.kind() == Tokenizer::Kind::Spm ? "llama" : "gpt2"},
                      {"pre", t.pre()},
                      {"vocab_size", t.vocab_size()},
                      {"bos", t.bos()},
                      {"eos", t.eos()},
                      {"add_bos", t.add_bos()}};
  } else {
    j["tokenizer"] = nullptr;
  }
  return j;
}

}  // namespace

void add_info_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("info", "Describe a GGUF model: architecture, dimensions, attention, KV cache, tokenizer");
  auto model = std::make_shared<std::string>();
  auto json = std::make_shared<bool>(false);
  cmd->add_option("-m,--model", *model, "GGUF model file (default: the embedded model)");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([model, json] {
    GgufFile f = open_model(*model);
    Info i = gather(f);
    if (*json)
      fmt::print("{}\n", to_json(i).dump(2));
    else
      print_text(i);
  });
}

}  // namespace vkllm::cli
