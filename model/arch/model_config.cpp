// ModelConfig from the common GGUF metadata keys and back (docs/formats.md §1.3), the quantities
// a config implies, and its validation. Each family's own keys are read by its file in model/arch/.
#include "arch/model_config.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "arch/architecture.h"
#include "arch/keys.h"
#include "arch/tensors.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

std::string_view to_string(AttentionKind k) {
  constexpr std::string_view names[] = {"MHA", "GQA", "MQA", "MLA", "hybrid"};
  return names[int(k)];
}

std::string_view to_string(Mixer m) {
  constexpr std::string_view names[] = {"attention", "deltanet", "mamba2", "shortconv", "none"};
  return names[int(m)];
}

std::string_view describe(Mixer m) {
  constexpr std::string_view names[] = {"attention", "linear attention", "a Mamba-2 state-space mixer",
                                        "a gated short convolution", "an FFN-only block"};
  return names[int(m)];
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

std::string layout_names(const TensorLayout& l) {
  std::string out;
  if (l.fused_qkv) out = "fused QKV";
  if (l.fused_gate_up_exps) out += std::string(out.empty() ? "" : ", ") + "fused expert gate/up";
  return out;
}

std::string_view to_string(MoeGating g) {
  return g == MoeGating::Sigmoid ? "sigmoid" : g == MoeGating::SoftmaxWeight ? "softmax of the chosen" : "softmax";
}

// --- derived quantities

double RopeConfig::yarn_attn_factor() const {
  if (deepseek_yarn) return attn_factor / (1 + 0.1 * std::log(factor));
  if (yarn_log_multiplier == 0) return attn_factor;
  auto mscale = [&](double m) { return factor <= 1 ? 1.0 : 1 + 0.1 * m * std::log(factor); };
  return attn_factor * mscale(1) / mscale(yarn_log_multiplier) / (1 + 0.1 * std::log(factor));
}

const Architecture& ModelConfig::architecture() const {
  ENSURE(arch, "model config without an architecture");
  return *arch;
}

AttentionKind ModelConfig::attention_kind() const {
  if (architecture().recipe.attention.form == AttentionForm::Latent) return AttentionKind::MLA;
  if (n_kv_heads == n_heads) return AttentionKind::MHA;
  return n_kv_heads == 1 ? AttentionKind::MQA : AttentionKind::GQA;
}

bool ModelConfig::is_moe_layer(uint32_t layer) const {
  return moe.n_experts > 0 && layer >= moe.leading_dense_blocks && has_ffn(layer);
}

namespace {

uint64_t kv_row_bytes(DType kv, uint64_t n) {
  const DTypeInfo& i = info(kv);
  ENSURE(n % i.block_values == 0,
         fmt::format("a {} KV cache needs head widths that are multiples of {} (got {})", i.name, i.block_values, n));
  return row_bytes(kv, n);
}

}  // namespace

double ModelConfig::attention_scale(uint32_t layer) const {
  double scale =
      multipliers.attention > 0 ? multipliers.attention : 1.0 / std::sqrt(double(attention_of(layer).head_dim));
  if (rope.scaling == RopeScaling::Yarn && rope.deepseek_yarn && rope.yarn_log_multiplier > 0) {
    double m = 1 + rope.yarn_log_multiplier * std::log(rope.factor);
    scale *= m * m;
  }
  return scale;
}

// --- per-layer attention

LayerAttention ModelConfig::attention_of(uint32_t layer) const {
  bool swa = is_swa_layer(layer);
  LayerAttention a{.n_heads = n_heads,
                   .n_kv_heads = layer < kv_heads.size() ? kv_heads[layer] : n_kv_heads,
                   .head_dim = swa && head_dim_swa ? head_dim_swa : head_dim,
                   .v_head_dim = swa && v_head_dim_swa ? v_head_dim_swa : v_head_dim,
                   .kv_layer = kv_layer(layer),
                   .rotates = rotates(layer)};
  return a;
}

// A shared-KV layer reads the cache of the last layer of its kind (sliding or global) before the
// shared ones, as llama.cpp's gemma4 does (n_layer_kv_from_start - 2 or - 1 there).
uint32_t ModelConfig::kv_layer(uint32_t layer) const {
  uint32_t first_shared = n_layers - std::min(n_kv_shared_layers, n_layers);
  if (layer < first_shared) return layer;
  for (uint32_t l = first_shared; l-- > 0;)
    if (is_swa_layer(l) == is_swa_layer(layer) && has_attention(l)) return l;
  return layer;  // validate() rejects a shared layer without a source
}

// The widest row of `heads` heads over the layers: heads(a) picks query or KV heads.
uint32_t ModelConfig::max_width(uint32_t (*heads)(const LayerAttention&)) const {
  uint32_t w = 0;
  for (uint32_t l = 0; l < n_layers; ++l) {
    LayerAttention a = attention_of(l);
    w = std::max(w, heads(a) * std::max(a.head_dim, a.v_head_dim));
  }
  return w;
}

uint32_t ModelConfig::max_q_width() const {
  return max_width([](const LayerAttention& a) { return a.n_heads; });
}

uint32_t ModelConfig::max_kv_width() const {
  return max_width([](const LayerAttention& a) { return a.n_kv_heads; });
}

bool ModelConfig::has_mixer(Mixer m) const {
  if (mixers.empty()) return m == Mixer::Attention;
  return std::find(mixers.begin(), mixers.end(), m) != mixers.end();
}

bool ModelConfig::hybrid() const {
  return has_mixer(Mixer::DeltaNet) || has_mixer(Mixer::Mamba2) || has_mixer(Mixer::ShortConv);
}

uint32_t ModelConfig::n_attention_layers() const {
  uint32_t n = 0;
  for (uint32_t l = 0; l < n_layers; ++l) n += has_attention(l);
  return n;
}

uint32_t ModelConfig::n_recurrent_layers() const {
  uint32_t n = 0;
  for (uint32_t l = 0; l < n_layers; ++l) n += is_recurrent_layer(l);
  return n;
}

RecurrentState ModelConfig::recurrent_state(uint32_t l) const {
  switch (mixer(l)) {
    case Mixer::DeltaNet:
      return {.conv_rows = linear.conv_kernel - 1,
              .conv_channels = linear.conv_channels(),
              .state_floats = uint64_t(linear.v_heads) * linear.head_dim * linear.head_dim};
    case Mixer::Mamba2:
      return {.conv_rows = ssm.conv_kernel - 1,
              .conv_channels = ssm.conv_channels(),
              .state_floats = uint64_t(ssm.inner) * ssm.state};
    case Mixer::ShortConv:
      return {.conv_rows = short_conv.kernel - 1, .conv_channels = dim};
    default:
      return {};
  }
}

std::string attention_layers(const ModelConfig& c) {
  std::string out;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (c.has_attention(l)) out += (out.empty() ? "" : ", ") + std::to_string(l);
  return out;
}

uint64_t ModelConfig::layer_kv_bytes_per_token(uint32_t l, DType kv) const {
  if (!has_attention(l)) return 0;
  // MLA caches one latent row [c (kv_lora_rank); k_pe (rope dim)] per layer, shared by all heads.
  if (attention_kind() == AttentionKind::MLA) return kv_row_bytes(kv, mla.kv_lora_rank + mla.qk_rope_head_dim);
  LayerAttention a = attention_of(l);
  return uint64_t(a.n_kv_heads) * (kv_row_bytes(kv, a.head_dim) + kv_row_bytes(kv, a.v_head_dim));
}

uint64_t ModelConfig::kv_bytes_per_token(DType kv) const {
  uint64_t bytes = 0;
  for (uint32_t l = 0; l < n_layers; ++l)
    if (has_kv(l)) bytes += layer_kv_bytes_per_token(l, kv);
  return bytes;
}

uint64_t ModelConfig::shared_kv_saving_per_token(DType kv) const {
  uint64_t bytes = 0;
  for (uint32_t l = 0; l < n_layers; ++l)
    if (has_attention(l) && !has_kv(l)) bytes += layer_kv_bytes_per_token(l, kv);
  return bytes;
}

uint64_t ModelConfig::recurrent_bytes_per_sequence() const {
  uint64_t floats = 0;
  for (uint32_t l = 0; l < n_layers; ++l) floats += recurrent_state(l).floats();
  return 4 * floats;
}

// --- validation

namespace {

void check_range(std::string_view what, uint64_t v, uint64_t lo, uint64_t hi) {
  ENSURE(v >= lo && v <= hi, fmt::format("{} = {} is out of range ({}..{})", what, v, lo, hi));
}

void validate_moe(const ModelConfig& c) {
  const MoeConfig& m = c.moe;
  if (m.n_experts == 0) return;
  uint32_t first = 0;  // the first block with experts
  while (first < c.n_layers && !c.is_moe_layer(first)) ++first;
  if (first < c.n_layers) {
    // A family whose catalogue has no router runs only dense blocks (a Mixtral-style llama file).
    TensorCatalogue t;
    c.architecture().layer_tensors(c, first, t);
    ENSURE(t.find(TensorRole::FfnGateInp, int(first)),
           fmt::format("{}: expert_count = {} declares mixture-of-experts blocks, which vkllm does not run for this "
                       "architecture (it has: qwen2moe, qwen3moe, deepseek2, qwen35moe, gpt-oss, gemma4, "
                       "nemotron_h_moe, lfm2moe)",
                       c.arch_name, m.n_experts));
  }
  check_range("expert_count", m.n_experts, 1, 4096);
  check_range("expert_used_count", m.n_experts_used, 1, std::min(m.n_experts, 64u));
  ENSURE(m.gating == MoeGating::Softmax || m.gating == MoeGating::Sigmoid || m.gating == MoeGating::SoftmaxWeight,
         fmt::format("expert_gating_func {} is not supported (1 softmax, 2 sigmoid, 3 softmax of the chosen)",
                     uint32_t(m.gating)));
  ENSURE(std::isfinite(m.weights_scale), "expert_weights_scale must be finite");
  if (m.leading_dense_blocks < c.n_layers) check_range("expert_feed_forward_length", m.expert_hidden_dim, 1, 1 << 22);
  if (m.n_groups > 1) {
    // docs/formats.md §8: groups are ranked by the sum of their two best scores.
    ENSURE(m.n_experts % m.n_groups == 0 && m.n_experts / m.n_groups >= 2 && m.n_groups <= 64,
           fmt::format("{} experts cannot form {} groups of at least 2 (at most 64 groups)", m.n_experts, m.n_groups));
    check_range("expert_group_used_count", m.n_groups_used, 1, m.n_groups);
    ENSURE(m.n_experts_used <= m.n_groups_used * (m.n_experts / m.n_groups),
           fmt::format("{} experts per token do not fit {} groups of {}", m.n_experts_used, m.n_groups_used,
                       m.n_experts / m.n_groups));
  }
}

void validate_window(const ModelConfig& c) {
  ENSURE(c.swa_layers.empty() || c.swa_layers.size() == c.n_layers,
         "the sliding-window pattern needs one entry per layer");
  for (uint8_t w : c.swa_layers)
    ENSURE(!w || c.sliding_window > 0, "sliding-window layers need attention.sliding_window > 0");
  ENSURE(std::isfinite(c.rope_swa.theta) && c.rope_swa.theta > 0,
         fmt::format("rope.freq_base_swa {} must be positive", c.rope_swa.theta));
  const Multipliers& m = c.multipliers;
  for (float cap : {c.attn_softcap, c.final_softcap, m.embedding, m.residual, m.attention, m.logit})
    ENSURE(std::isfinite(cap) && cap >= 0, "soft-caps and multipliers must be finite and not negative");
}

// Per-layer shapes, shared KV, NoPE layers and the attention temperature.
void validate_layers(const ModelConfig& c) {
  ENSURE(c.kv_heads.empty() || c.kv_heads.size() == c.n_layers, "attention.head_count_kv needs one value per layer");
  ENSURE(c.nope_layers.empty() || c.nope_layers.size() == c.n_layers, "the NoPE layers need one entry per layer");
  check_range("attention.key_length_swa", c.head_dim_swa, 0, 1 << 16);
  check_range("attention.value_length_swa", c.v_head_dim_swa, 0, 1 << 16);
  check_range("attention.shared_kv_layers", c.n_kv_shared_layers, 0, c.n_layers - 1);
  for (uint32_t l = 0; l < c.n_layers; ++l) {
    if (!c.has_attention(l)) continue;
    LayerAttention a = c.attention_of(l);
    ENSURE(
        a.n_kv_heads >= 1 && a.n_kv_heads <= a.n_heads && a.n_heads % a.n_kv_heads == 0,
        fmt::format("layer {}: {} attention heads cannot be shared evenly by {} KV heads", l, a.n_heads, a.n_kv_heads));
    const RopeConfig& r = c.rope_of(l);
    ENSURE(!a.rotates || (r.dim % 2 == 0 && r.dim >= 2 && r.dim <= a.head_dim),
           fmt::format("layer {}: rope dimension {} must be even and within the head dim {}", l, r.dim, a.head_dim));
    if (a.kv_layer == l) continue;
    ENSURE(a.kv_layer < l, fmt::format("shared-KV layer {} has no earlier layer of its kind to read", l));
    LayerAttention src = c.attention_of(a.kv_layer);
    ENSURE(src.n_kv_heads == a.n_kv_heads && src.head_dim == a.head_dim && src.v_head_dim == a.v_head_dim,
           fmt::format("shared-KV layer {} has another shape than layer {} whose cache it reads", l, a.kv_layer));
  }
  ENSURE(std::isfinite(c.attn_temperature_beta) && (c.attn_temperature_beta == 0 || c.attn_temperature_length > 0),
         "the attention temperature needs a finite scale and a positive length (rope.scaling.original_context_length)");
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
  ENSURE(mixers.empty() || mixers.size() == n_layers, "the blocks' mixers need one entry per layer");
  ENSURE(ffn_layers.empty() || ffn_layers.size() == n_layers, "the blocks' FFNs need one entry per layer");
  for (uint32_t l = 0; l < n_layers; ++l)
    if (has_ffn(l)) check_range("feed_forward_length", hidden_dim[l], 1, 1 << 22);
  check_range("vocab size", vocab_size, 1, 1 << 24);
  check_range("context_length", seq_len, 1, 1u << 31);
  ENSURE(std::isfinite(norm_eps) && norm_eps > 0, fmt::format("layer_norm_rms_epsilon {} must be positive", norm_eps));
  ENSURE(std::isfinite(rope.theta) && rope.theta > 0, fmt::format("rope.freq_base {} must be positive", rope.theta));
  ENSURE(std::isfinite(rope.factor) && rope.factor > 0,
         fmt::format("rope scaling factor {} must be positive", rope.factor));
  ENSURE(rope.dim % 2 == 0 && rope.dim >= 2 && rope.dim <= head_dim,
         fmt::format("rope.dimension_count {} must be even and within the head dim {}", rope.dim, head_dim));
  const Architecture& a = architecture();
  // llama.cpp requires full rotary for these architectures.
  if (a.recipe.position.full_rotary)
    ENSURE(rope.dim == head_dim, fmt::format("rope.dimension_count {} must equal the head dim {}", rope.dim, head_dim));
  ENSURE(n_nextn_layers == 0 || a.nextn_blocks,
         fmt::format("{} files with multi-token-prediction blocks (nextn_predict_layers = {}) are not supported",
                     arch_name, n_nextn_layers));
  if (a.validate) a.validate(*this);
  validate_moe(*this);
  validate_window(*this);
  validate_layers(*this);
}

// --- reading and writing the common keys

namespace {

constexpr std::string_view kArchitecture = "general.architecture";
constexpr std::string_view kName = GgufFile::kNameKey;
constexpr std::string_view kQuantVersion = "general.quantization_version";
constexpr std::string_view kTokenCount = "tokenizer.ggml.tokens";  // vocab_size when the model omits it

void read_rope_scaling(const GgufFile& f, const KeyPrefix& k, RopeConfig& r) {
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
  r.yarn_beta_fast = read_f32(f, k("rope.scaling.yarn_beta_fast"), 32.0f);
  r.yarn_beta_slow = read_f32(f, k("rope.scaling.yarn_beta_slow"), 1.0f);
}

void read_metadata(const GgufFile& f, ModelConfig& c) {
  c.arch_name = std::string(f.get_string(kArchitecture));
  c.arch = find_architecture(c.arch_name);
  if (!c.arch)
    f.fail(fmt::format("unknown architecture {} (supported: {})", printable(c.arch_name), known_architectures()));
  c.name = std::string(f.get_string(kName, ""));
  KeyPrefix k{c.arch_name};
  c.n_layers = read_u32(f, k("block_count"));
  if (c.n_layers == 0 || c.n_layers > 4096) f.fail(fmt::format("block_count {} is out of range", c.n_layers));
  // block_count counts the multi-token-prediction blocks after the trunk; per-layer arrays may
  // too (their entries past the trunk are dropped).
  c.n_nextn_layers = read_u32(f, k("nextn_predict_layers"), 0);
  if (c.n_nextn_layers >= c.n_layers)
    f.fail(fmt::format("nextn_predict_layers {} leaves no layers of block_count {}", c.n_nextn_layers, c.n_layers));
  c.n_layers -= c.n_nextn_layers;
  c.dim = read_u32(f, k("embedding_length"));
  c.seq_len = read_u32(f, k("context_length"));
  uint32_t mtp = c.n_nextn_layers;
  c.hidden_dim = read_per_layer(f, k("feed_forward_length"), c.n_layers, std::nullopt, mtp);
  c.n_heads = read_uniform(f, k("attention.head_count"), c.n_layers, std::nullopt, mtp);
  // Per layer where the file says so (gemma4: sliding and global layers differ).
  c.kv_heads = read_per_layer(f, k("attention.head_count_kv"), c.n_layers, c.n_heads, mtp);
  c.n_kv_heads = c.kv_heads.at(0);
  if (std::all_of(c.kv_heads.begin(), c.kv_heads.end(), [&](uint32_t h) { return h == c.n_kv_heads; }))
    c.kv_heads.clear();
  c.norm_eps = read_f32(f, k("attention.layer_norm_rms_epsilon"));
  c.rope.theta = read_f32(f, k("rope.freq_base"), 10000.0f);
  read_rope_scaling(f, k, c.rope);
  c.rope.mode = c.arch->recipe.position.rope_mode;
  c.moe.n_experts = read_u32(f, k("expert_count"), 0);
  c.moe.n_experts_used = read_u32(f, k("expert_used_count"), 0);
  c.moe.n_groups = read_u32(f, k("expert_group_count"), 0);
  c.moe.n_groups_used = read_u32(f, k("expert_group_used_count"), 0);
  // Until the tensors say (a file without tensors: as the family's converter writes them).
  Presence qkv_bias = c.arch->recipe.attention.qkv_bias;
  c.qkv_bias = qkv_bias == Presence::Required || qkv_bias == Presence::Usual;
  c.attn_out_bias = c.arch->recipe.attention.out_bias == Presence::Required;
  c.arch->read_hparams(f, k, c);
  if (c.swa_layers.empty()) c.rope_swa = c.rope;  // every layer rotates alike
  uint32_t n_tokens = 0;
  if (const GgufValue* t = f.find(kTokenCount); t && t->type() == GgufType::Array)
    n_tokens = uint32_t(std::min<uint64_t>(t->size(), UINT32_MAX));
  c.vocab_size = read_u32(f, k("vocab_size"), n_tokens);
  if (f.find(k("pooling_type"))) {
    uint32_t p = read_u32(f, k("pooling_type"));
    if (p > uint32_t(Pooling::Rank)) f.fail(fmt::format("pooling_type {} is not one of llama.cpp's (0 to 4)", p));
    c.pooling = Pooling(p);
  }
}

}  // namespace

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
  KeyPrefix k{c.arch_name};
  w.add(kArchitecture, c.arch_name);
  if (!c.name.empty()) w.add(kName, c.name);
  w.add(kQuantVersion, uint32_t(2));
  w.add(k("context_length"), c.seq_len);
  w.add(k("embedding_length"), c.dim);
  w.add(k("block_count"), c.n_layers + c.n_nextn_layers);
  if (c.n_nextn_layers) w.add(k("nextn_predict_layers"), c.n_nextn_layers);
  bool uniform =
      std::all_of(c.hidden_dim.begin(), c.hidden_dim.end(), [&](uint32_t h) { return h == c.hidden_dim[0]; });
  if (uniform && !c.hidden_dim.empty()) {
    w.add(k("feed_forward_length"), c.hidden_dim[0]);
  } else {  // llama.cpp wants an entry per block: a multi-token-prediction block's is the widest FFN's
    std::vector<uint32_t> widths = c.hidden_dim;
    widths.resize(c.n_layers + c.n_nextn_layers, *std::max_element(c.hidden_dim.begin(), c.hidden_dim.end()));
    w.add_array(k("feed_forward_length"), widths);
  }
  w.add(k("attention.head_count"), c.n_heads);
  w.add(k("attention.layer_norm_rms_epsilon"), c.norm_eps);
  w.add(k("rope.dimension_count"), c.rope.dim);
  w.add(k("rope.freq_base"), c.rope.theta);
  w.add(k("vocab_size"), c.vocab_size);
  if (c.pooling != Pooling::Unspecified) w.add(k("pooling_type"), uint32_t(c.pooling));
  c.architecture().write_hparams(w, k, c);
  if (c.rope.scaling != RopeScaling::None) {
    w.add(k("rope.scaling.type"), to_string(c.rope.scaling));
    w.add(k("rope.scaling.factor"), c.rope.factor);
    if (c.rope.original_ctx) w.add(k("rope.scaling.original_context_length"), c.rope.original_ctx);
    if (c.rope.attn_factor != 1.0f) w.add(k("rope.scaling.attn_factor"), c.rope.attn_factor);
    if (c.rope.yarn_log_multiplier != 0.0f) w.add(k("rope.scaling.yarn_log_multiplier"), c.rope.yarn_log_multiplier);
    if (c.rope.yarn_beta_fast != 32.0f) w.add(k("rope.scaling.yarn_beta_fast"), c.rope.yarn_beta_fast);
    if (c.rope.yarn_beta_slow != 1.0f) w.add(k("rope.scaling.yarn_beta_slow"), c.rope.yarn_beta_slow);
  }
  if (c.moe.n_experts) {
    w.add(k("expert_count"), c.moe.n_experts);
    w.add(k("expert_used_count"), c.moe.n_experts_used);
    if (c.moe.n_groups) {
      w.add(k("expert_group_count"), c.moe.n_groups);
      w.add(k("expert_group_used_count"), c.moe.n_groups_used);
    }
  }
}

}  // namespace vkllm
