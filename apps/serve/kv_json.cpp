// Memory-per-sequence facts of a model as JSON (info --json, GET /v1/info).
#include "serve/kv_json.h"

#include <algorithm>
#include <cctype>
#include <string>
#include <vector>

#include "arch/kv_comparison.h"

namespace vkllm {

namespace {

template <class Json>
void add(Json& j, const ModelConfig& c, DType kv) {
  Json bytes = Json::object(), dims = Json::object();
  for (const KvKindCost& k : kv_costs_by_kind(c, kv)) {
    std::string name(to_string(k.kind));
    std::transform(name.begin(), name.end(), name.begin(), [](char ch) { return char(std::tolower(ch)); });
    bytes[name] = k.bytes_per_token;
    if (k.kind == AttentionKind::GQA) dims["gqa_n_head_kv"] = k.kv_heads;
    if (k.kind == AttentionKind::MLA) dims["mla_kv_lora_rank"] = k.latent, dims["mla_rope_dim"] = k.rope;
    if (k.kind == AttentionKind::Hybrid)
      dims["hybrid_attention_layers"] = k.attention_layers, dims["hybrid_bytes_per_sequence"] = k.bytes_per_sequence;
  }
  j["kv_bytes_per_token_by_kind"] = bytes;
  j["kv_by_kind_dims"] = dims;
  j["recurrent_bytes_per_sequence"] = c.recurrent_bytes_per_sequence();
  if (!c.has_mixer(Mixer::DeltaNet)) {
    j["linear_attention"] = nullptr;
    return;
  }
  const LinearAttentionConfig& a = c.linear;
  std::vector<uint32_t> linear;
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (c.mixer(l) == Mixer::DeltaNet) linear.push_back(l);
  j["linear_attention"] = {{"layers", linear},
                           {"key_heads", a.k_heads},
                           {"value_heads", a.v_heads},
                           {"head_dim", a.head_dim},
                           {"conv_kernel", a.conv_kernel},
                           {"bytes_per_sequence", c.recurrent_bytes_per_sequence()}};
}

}  // namespace

void add_kv_json(nlohmann::json& j, const ModelConfig& c, DType kv) { add(j, c, kv); }
void add_kv_json(nlohmann::ordered_json& j, const ModelConfig& c, DType kv) { add(j, c, kv); }

}  // namespace vkllm
