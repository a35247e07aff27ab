// ModelConfig and VocabConfig from GGUF metadata and back: the only file that spells GGUF metadata
// keys (FORMATS.md §1.3, §1.5, §4.1). Counts are read at any integer width (FORMATS pitfall 6).
// Derived quantities, validation and the tensor checks are in config_check.cpp.
#include "config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "check.h"
#include "gguf.h"
#include "gguf_writer.h"

namespace vkllm {

namespace {

// Keys under the architecture prefix ("llama.block_count").
constexpr std::string_view kArchitecture = "general.architecture";
constexpr std::string_view kName = "general.name";
constexpr std::string_view kQuantVersion = "general.quantization_version";
constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model";

struct Key {
  std::string prefix;
  std::string operator()(std::string_view k) const { return prefix + "." + std::string(k); }
};

const Key kTok{"tokenizer.ggml"};  // the tokenizer's keys

uint32_t read_u32(const GgufFile& f, const std::string& key, std::optional<uint32_t> fallback = std::nullopt) {
  int64_t v = fallback ? f.get_int(key, *fallback) : f.get_int(key);
  if (v < 0 || v > int64_t(UINT32_MAX)) f.fail(fmt::format("metadata key {} = {} is out of range", key, v));
  return uint32_t(v);
}

float read_f32(const GgufFile& f, const std::string& key, std::optional<float> fallback = std::nullopt) {
  double v = fallback ? f.get_float(key, *fallback) : f.get_float(key);
  if (!std::isfinite(v)) f.fail(fmt::format("metadata key {} is not a finite number", key));
  return float(v);
}

// A per-layer value: a scalar for every layer or an array of n_layers.
std::vector<uint32_t> read_per_layer(const GgufFile& f, const std::string& key, uint32_t n_layers,
                                     std::optional<uint32_t> fallback = std::nullopt) {
  const GgufValue* v = f.find(key);
  if (!v || v->type() != GgufType::Array) return std::vector<uint32_t>(n_layers, read_u32(f, key, fallback));
  std::vector<int64_t> a = f.get_int_array(key);
  if (a.size() != n_layers)
    f.fail(fmt::format("metadata key {} has {} entries for {} layers", key, a.size(), n_layers));
  std::vector<uint32_t> out;
  for (int64_t x : a) {
    if (x < 0 || x > int64_t(UINT32_MAX)) f.fail(fmt::format("metadata key {} has an entry {} out of range", key, x));
    out.push_back(uint32_t(x));
  }
  return out;
}

uint32_t read_uniform(const GgufFile& f, const std::string& key, uint32_t n_layers,
                      std::optional<uint32_t> fallback = std::nullopt) {
  std::vector<uint32_t> v = read_per_layer(f, key, n_layers, fallback);
  for (uint32_t x : v)
    if (x != v[0]) f.fail(fmt::format("metadata key {} differs between layers; vkllm needs one value", key));
  return v[0];
}

Arch arch_from_name(const GgufFile& f, std::string_view name) {
  if (name == "llama" || name == "mistral") return Arch::Llama;
  if (name == "qwen2") return Arch::Qwen2;
  if (name == "deepseek2") return Arch::Deepseek2;
  f.fail(fmt::format("unknown architecture {} (supported: llama, mistral, qwen2, deepseek2)", printable(name)));
}

void read_rope_scaling(const GgufFile& f, const Key& k, RopeConfig& r) {
  std::string type = std::string(f.get_string(k("rope.scaling.type"), ""));
  r.factor = read_f32(f, k("rope.scaling.factor"), 0.0f);
  if (r.factor == 0.0f) {
    float linear = read_f32(f, k("rope.scale_linear"), 0.0f);  // the older spelling
    r.factor = linear;
    if (linear != 0.0f && type.empty()) type = "linear";
  }
  if (r.factor == 0.0f) r.factor = 1.0f;
  if (type.empty()) type = r.factor == 1.0f ? "none" : "linear";
  if (type == "none")
    r.scaling = RopeScaling::None;
  else if (type == "linear")
    r.scaling = RopeScaling::Linear;
  else if (type == "yarn")
    r.scaling = RopeScaling::Yarn;
  else
    f.fail(fmt::format("rope scaling type {} is not supported (none, linear, yarn)", printable(type)));
  r.original_ctx = read_u32(f, k("rope.scaling.original_context_length"), 0);
  r.attn_factor = read_f32(f, k("rope.scaling.attn_factor"), 1.0f);
  r.yarn_log_multiplier = read_f32(f, k("rope.scaling.yarn_log_multiplier"), 0.0f);
}

// deepseek2: MLA dimensions; two layouts (FORMATS §1.5, pitfall 4).
void read_mla(const GgufFile& f, const Key& k, ModelConfig& c) {
  MlaConfig& m = c.mla;
  m.q_lora_rank = read_u32(f, k("attention.q_lora_rank"), 0);
  m.kv_lora_rank = read_u32(f, k("attention.kv_lora_rank"));
  m.qk_rope_head_dim = c.rope.dim = read_u32(f, k("rope.dimension_count"));
  uint32_t key_length = read_u32(f, k("attention.key_length"));
  uint32_t value_length = read_u32(f, k("attention.value_length"));
  uint32_t key_mla = read_u32(f, k("attention.key_length_mla"), 0);
  uint32_t value_mla = read_u32(f, k("attention.value_length_mla"), 0);
  if (key_mla != 0 && value_mla != 0) {
    m.layout = MlaLayout::Split;
    if (key_length != m.kv_lora_rank + m.qk_rope_head_dim || value_length != m.kv_lora_rank)
      f.fail(
          fmt::format("deepseek2 MLA key/value length {}/{} should be kv_lora_rank + rope dim / kv_lora_rank = {}/{}",
                      key_length, value_length, m.kv_lora_rank + m.qk_rope_head_dim, m.kv_lora_rank));
    key_length = key_mla;
    value_length = value_mla;
  } else {
    m.layout = MlaLayout::Fused;
  }
  if (key_length <= m.qk_rope_head_dim)
    f.fail(fmt::format("deepseek2 key length {} must exceed the rope dim {}", key_length, m.qk_rope_head_dim));
  m.qk_nope_head_dim = key_length - m.qk_rope_head_dim;
  m.v_head_dim = value_length;
  c.head_dim = key_length;
  c.v_head_dim = value_length;
  c.n_kv_heads = 1;
  c.rope.mode = RopeMode::Norm;
}

void read_moe(const GgufFile& f, const Key& k, ModelConfig& c) {
  MoeConfig& m = c.moe;
  m.n_experts = read_u32(f, k("expert_count"), 0);
  m.n_experts_used = read_u32(f, k("expert_used_count"), 0);
  if (c.arch != Arch::Deepseek2) return;
  m.leading_dense_blocks = read_u32(f, k("leading_dense_block_count"), 0);
  m.expert_hidden_dim = read_u32(f, k("expert_feed_forward_length"), 0);
  m.n_shared_experts = read_u32(f, k("expert_shared_count"), 0);
  m.weights_scale = read_f32(f, k("expert_weights_scale"), 1.0f);
  m.weights_norm = f.get_bool(k("expert_weights_norm"), false);
  m.gating_func = read_u32(f, k("expert_gating_func"), 1);
  if (m.gating_func == 0) m.gating_func = 1;  // absent or "none" in older files: softmax
}

void read_metadata(const GgufFile& f, ModelConfig& c) {
  c.arch_name = std::string(f.get_string(kArchitecture));
  c.arch = arch_from_name(f, c.arch_name);
  c.name = std::string(f.get_string(kName, ""));
  Key k{c.arch_name};
  c.n_layers = read_u32(f, k("block_count"));
  if (c.n_layers == 0 || c.n_layers > 4096) f.fail(fmt::format("block_count {} is out of range", c.n_layers));
  c.dim = read_u32(f, k("embedding_length"));
  c.seq_len = read_u32(f, k("context_length"));
  c.hidden_dim = read_per_layer(f, k("feed_forward_length"), c.n_layers);
  c.n_heads = read_uniform(f, k("attention.head_count"), c.n_layers);
  c.n_kv_heads = read_uniform(f, k("attention.head_count_kv"), c.n_layers, c.n_heads);
  c.norm_eps = read_f32(f, k("attention.layer_norm_rms_epsilon"));
  c.rope.theta = read_f32(f, k("rope.freq_base"), 10000.0f);
  read_rope_scaling(f, k, c.rope);
  if (c.arch == Arch::Deepseek2) {
    read_mla(f, k, c);
  } else {
    if (c.n_heads == 0) f.fail("attention.head_count is 0");
    c.head_dim = read_u32(f, k("attention.key_length"), c.dim / c.n_heads);
    c.v_head_dim = read_u32(f, k("attention.value_length"), c.head_dim);
    c.rope.dim = read_u32(f, k("rope.dimension_count"), c.head_dim);
    c.rope.mode = c.arch == Arch::Qwen2 ? RopeMode::Neox : RopeMode::Norm;
    c.qkv_bias = c.arch == Arch::Qwen2;
  }
  uint32_t n_tokens = 0;
  if (const GgufValue* t = f.find(kTok("tokens")); t && t->type() == GgufType::Array)
    n_tokens = uint32_t(std::min<uint64_t>(t->size(), UINT32_MAX));
  c.vocab_size = read_u32(f, k("vocab_size"), n_tokens);
  read_moe(f, k, c);
}

}  // namespace

// --- ModelConfig

ModelConfig ModelConfig::from_gguf(const GgufFile& f) {
  ModelConfig c;
  read_metadata(f, c);
  if (!f.tensors().empty()) read_tensor_flags(f, c);
  try {
    c.validate();
  } catch (const Error& e) {
    f.fail(e.what());
  }
  if (!f.tensors().empty()) check_tensors(f, c);
  return c;
}

void write_config(GgufWriter& w, const ModelConfig& c) {
  Key k{c.arch_name};
  w.add(kArchitecture, c.arch_name);
  if (!c.name.empty()) w.add(kName, c.name);
  w.add(kQuantVersion, uint32_t(2));
  w.add(k("context_length"), c.seq_len);
  w.add(k("embedding_length"), c.dim);
  w.add(k("block_count"), c.n_layers);
  bool uniform =
      std::all_of(c.hidden_dim.begin(), c.hidden_dim.end(), [&](uint32_t h) { return h == c.hidden_dim[0]; });
  if (uniform && !c.hidden_dim.empty())
    w.add(k("feed_forward_length"), c.hidden_dim[0]);
  else
    w.add_array(k("feed_forward_length"), c.hidden_dim);
  w.add(k("attention.head_count"), c.n_heads);
  w.add(k("attention.layer_norm_rms_epsilon"), c.norm_eps);
  w.add(k("rope.dimension_count"), c.rope.dim);
  w.add(k("rope.freq_base"), c.rope.theta);
  w.add(k("vocab_size"), c.vocab_size);
  const MlaConfig& m = c.mla;
  if (c.arch == Arch::Deepseek2) {
    bool split = m.layout == MlaLayout::Split;
    w.add(k("attention.head_count_kv"), split ? 1u : c.n_heads);
    w.add(k("leading_dense_block_count"), c.moe.leading_dense_blocks);
    if (m.q_lora_rank) w.add(k("attention.q_lora_rank"), m.q_lora_rank);
    w.add(k("attention.kv_lora_rank"), m.kv_lora_rank);
    w.add(k("attention.key_length"), split ? m.kv_lora_rank + m.qk_rope_head_dim : c.head_dim);
    w.add(k("attention.value_length"), split ? m.kv_lora_rank : c.v_head_dim);
    if (split) {
      w.add(k("attention.key_length_mla"), c.head_dim);
      w.add(k("attention.value_length_mla"), c.v_head_dim);
    }
  } else {
    w.add(k("attention.head_count_kv"), c.n_kv_heads);
    w.add(k("attention.key_length"), c.head_dim);
    w.add(k("attention.value_length"), c.v_head_dim);
  }
  if (c.rope.scaling != RopeScaling::None) {
    w.add(k("rope.scaling.type"), to_string(c.rope.scaling));
    w.add(k("rope.scaling.factor"), c.rope.factor);
    if (c.rope.original_ctx) w.add(k("rope.scaling.original_context_length"), c.rope.original_ctx);
    if (c.rope.attn_factor != 1.0f) w.add(k("rope.scaling.attn_factor"), c.rope.attn_factor);
    if (c.rope.yarn_log_multiplier != 0.0f) w.add(k("rope.scaling.yarn_log_multiplier"), c.rope.yarn_log_multiplier);
  }
  if (c.moe.n_experts) {
    w.add(k("expert_count"), c.moe.n_experts);
    w.add(k("expert_used_count"), c.moe.n_experts_used);
    if (c.arch == Arch::Deepseek2) {
      w.add(k("expert_feed_forward_length"), c.moe.expert_hidden_dim);
      w.add(k("expert_shared_count"), c.moe.n_shared_experts);
      w.add(k("expert_weights_scale"), c.moe.weights_scale);
      w.add(k("expert_weights_norm"), c.moe.weights_norm);
      w.add(k("expert_gating_func"), c.moe.gating_func);
    }
  }
}

// --- VocabConfig

namespace {

int32_t read_token_id(const GgufFile& f, const std::string& key) {
  int64_t v = f.get_int(key, -1);
  return v < 0 || v > INT32_MAX ? -1 : int32_t(v);
}

std::vector<std::string> copy_strings(const std::vector<std::string_view>& v) { return {v.begin(), v.end()}; }

std::optional<bool> read_optional_bool(const GgufFile& f, const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  return f.get_bool(key);
}

}  // namespace

bool has_vocab(const GgufFile& f) { return f.has(kTokenizerModel); }

VocabConfig read_vocab(const GgufFile& f) {
  VocabConfig v;
  if (!has_vocab(f)) f.fail("has no tokenizer (tokenizer.ggml.model is missing)");
  v.model = std::string(f.get_string(kTokenizerModel));
  v.pre = std::string(f.get_string(kTok("pre"), ""));
  v.tokens = copy_strings(f.get_string_array(kTok("tokens")));
  if (f.has(kTok("scores"))) v.scores = f.get_float_array(kTok("scores"));
  if (f.has(kTok("token_type")))
    for (int64_t t : f.get_int_array(kTok("token_type"))) v.types.push_back(TokenType(int32_t(t)));
  if (f.has(kTok("merges"))) v.merges = copy_strings(f.get_string_array(kTok("merges")));
  v.bos = read_token_id(f, kTok("bos_token_id"));
  v.eos = read_token_id(f, kTok("eos_token_id"));
  v.unk = read_token_id(f, kTok("unknown_token_id"));
  v.pad = read_token_id(f, kTok("padding_token_id"));
  v.eot = read_token_id(f, kTok("eot_token_id"));
  v.eom = read_token_id(f, kTok("eom_token_id"));
  v.add_bos = read_optional_bool(f, kTok("add_bos_token"));
  v.add_eos = read_optional_bool(f, kTok("add_eos_token"));
  v.add_space_prefix = read_optional_bool(f, kTok("add_space_prefix"));
  return v;
}

void write_vocab(GgufWriter& w, const VocabConfig& v) {
  w.add(kTokenizerModel, v.model);
  if (!v.pre.empty()) w.add(kTok("pre"), v.pre);
  w.add_array(kTok("tokens"), v.tokens);
  if (!v.scores.empty()) w.add_array(kTok("scores"), v.scores);
  if (!v.types.empty()) {
    std::vector<int32_t> types;
    for (TokenType t : v.types) types.push_back(int32_t(t));
    w.add_array(kTok("token_type"), types);
  }
  if (!v.merges.empty()) w.add_array(kTok("merges"), v.merges);
  auto id = [&](std::string_view key, int32_t value) {
    if (value >= 0) w.add(kTok(key), uint32_t(value));
  };
  id("bos_token_id", v.bos);
  id("eos_token_id", v.eos);
  id("unknown_token_id", v.unk);
  id("padding_token_id", v.pad);
  id("eot_token_id", v.eot);
  id("eom_token_id", v.eom);
  if (v.add_bos) w.add(kTok("add_bos_token"), *v.add_bos);
  if (v.add_eos) w.add(kTok("add_eos_token"), *v.add_eos);
  if (v.add_space_prefix) w.add(kTok("add_space_prefix"), *v.add_space_prefix);
}

}  // namespace vkllm
