// `vkllm info [-m FILE] [--json]`: what a GGUF model is: architecture, dimensions, attention kind,
// parameters, tensor types, KV-cache bytes per token, context length and tokenizer.
#include <fmt/format.h>

#include <map>
#include <nlohmann/json.hpp>
#include <optional>

#include "arch/file_type.h"
#include "arch/model_config.h"
#include "commands.h"
#include "engine/engine.h"
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
  uint64_t tensor_bytes = 0;
  std::optional<uint32_t> file_type;  // general.file_type (the mix, "Q4_K_M")
  DType kv_type = DType::F16;         // --kv-type
  uint64_t kv_bytes = 0;              // per token, as kv_type stores it
  uint32_t parallel = 4, ctx = 0;     // vkllm serve's KV-cache split: slots x tokens per slot
  double bits_per_weight() const { return parameters ? 8.0 * double(tensor_bytes) / double(parameters) : 0; }
  std::string mix_name() const;  // "Q4_K_M", "file type 99" or "" (no key)
};

std::string Info::mix_name() const {
  if (!file_type) return "";
  std::optional<FileType> t = vkllm::file_type(*file_type);
  return t ? std::string(t->name) : fmt::format("file type {}", *file_type);
}

Info gather(const GgufFile& f, DType kv_type, uint32_t parallel, uint32_t ctx) {
  Info i{f, ModelConfig::from_gguf(f), std::nullopt};
  i.kv_type = kv_type;
  i.parallel = parallel, i.ctx = ctx ? ctx : default_context(i.config);
  if (has_vocab(f)) i.tokenizer = Tokenizer::from_gguf(f);
  for (const GgufTensor& t : f.tensors()) {
    i.parameters += t.n_elements();
    i.tensor_bytes += t.data.size();
    ++i.types[std::string(vkllm::info(t.type).name)];
  }
  i.file_type = read_file_type(f);
  if (f.tensors().empty()) {
    i.parameters = parameter_count(i.config);
    i.parameters_from_config = true;
  }
  i.kv_bytes = i.config.kv_bytes_per_token(kv_type);
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
  fmt::print("rope        {}, dim {}, theta {}, scaling {}{}{}\n", to_string(c.rope.mode), c.rope.dim, c.rope.theta,
             to_string(c.rope.scaling), c.rope.scaling == RopeScaling::None ? "" : fmt::format(" x{}", c.rope.factor),
             c.rope.has_freq_factors ? ", frequency factors" : "");
  fmt::print("context     {}\n", c.seq_len);
  fmt::print("params      {} ({}){}\n", i.parameters, human_count(double(i.parameters)),
             i.parameters_from_config ? " from the config: the file has no tensors" : "");
  std::vector<std::string> types;
  for (const auto& [name, n] : i.types) types.push_back(fmt::format("{} {}", name, n));
  std::string mix = i.mix_name();
  if (types.empty())
    fmt::print("tensors     none\n");
  else
    fmt::print("tensors     {}{}; {:.2f} bits per weight\n", mix.empty() ? "" : mix + ": ", fmt::join(types, ", "),
               i.bits_per_weight());
  fmt::print("kv cache    {} bytes per token in {} ({}); {} at {} tokens\n", i.kv_bytes, vkllm::info(i.kv_type).name,
             human_bytes(double(i.kv_bytes)), human_bytes(double(i.kv_bytes) * c.seq_len), c.seq_len);
  double slot = double(i.kv_bytes) * i.ctx;
  fmt::print("serve       --parallel {} slots x --ctx {} tokens: KV cache {} ({} per slot)\n", i.parallel, i.ctx,
             human_bytes(slot * i.parallel), human_bytes(slot));
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
      {"file_type", i.file_type ? nlohmann::json(i.mix_name()) : nlohmann::json(nullptr)},
      {"bits_per_weight", i.bits_per_weight()},
      {"tensor_count", i.file.tensors().size()},
      {"kv_bytes_per_token", i.kv_bytes},
      {"serve_kv_cache",
       {{"parallel", i.parallel},
        {"ctx", i.ctx},
        {"bytes_per_slot", i.kv_bytes * i.ctx},
        {"bytes", i.kv_bytes * i.ctx * i.parallel}}},
      {"kv_type", vkllm::info(i.kv_type).name},
      {"tied_embeddings", c.tied_embeddings},
  };
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
  auto parallel = std::make_shared<uint32_t>(4), ctx = std::make_shared<uint32_t>(0);
  auto kv_type = std::make_shared<std::string>("f16");
  cmd->add_option("-m,--model", *model, "GGUF model file (default: the embedded model)");
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->add_option("--kv-type", *kv_type, "KV cache storage the bytes per token are for: f16, f32, q8_0 or q4_0")
      ->check(CLI::IsMember({"f16", "f32", "q8_0", "q4_0"}));
  cmd->add_option("--parallel", *parallel, "KV-cache slots to report (as vkllm serve --parallel)")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--ctx", *ctx, "Tokens per slot to report (default: the model's context, at most 4096)");
  cmd->callback([model, json, kv_type, parallel, ctx] {
    GgufFile f = open_model(*model);
    Info i = gather(f, kv_type_named(*kv_type), *parallel, *ctx);
    if (*json)
      fmt::print("{}\n", to_json(i).dump(2));
    else
      print_text(i);
  });
}

}  // namespace vkllm::cli
