// The demo page's routes: POST /v1/attention (one layer's attention probabilities over a
// conversation, a prompt or token ids) and GET /v1/info (what model runs where, and what its KV
// cache costs beside the other attention kinds at the same dimensions, as `vkllm info` reports).
#include <fmt/format.h>
#include <algorithm>
#include <cctype>

#include "arch/architecture.h"
#include "arch/kv_comparison.h"
#include "engine/attention_map.h"
#include "serve/api.h"
#include "serve/kv_json.h"
#include "serve/openai.h"

namespace vkllm::serve {

HttpReply Api::attention(const HttpRequest& r) const {
  json body = parse_body(r.body);
  AttentionParams a = parse_attention(body, gen_.tokenizer().vocab_size(), gen_.config().n_layers);
  if (!gen_.config().has_attention(a.layer))
    throw bad_request(fmt::format("layer {} is {}, which has no attention map (layers with one: {})", a.layer,
                                  describe(gen_.config().mixer(a.layer)), attention_layers(gen_.config())));
  PromptInput in = prompt_input(a.input, a.input.chat ? chat_prompt(a.input).text : "");
  const std::vector<int32_t>& ids = in.tokens;
  if (ids.empty()) throw bad_request("the input gives no tokens");
  uint32_t limit = std::min(kMaxAttentionTokens, gen_.n_ctx());
  if (ids.size() > limit)
    throw bad_request(fmt::format("the input is {} tokens; the attention view takes at most {}", ids.size(), limit));
  // Each image: where its tokens start, how many, and the grid they fill (raster order), so the
  // page can lay a head's attention over the picture; its tokens' pieces say they are the image's.
  json images = json::array();
  for (const PromptImage& im : in.images)
    images.push_back({{"first", im.at},
                      {"tokens", im.tokens()},
                      {"grid", {im.input.grid.tokens_x, im.input.grid.tokens_y}},
                      {"size", {im.input.grid.width, im.input.grid.height}}});
  std::vector<float> probs = gen_.attention(ids, a.layer, std::move(in.images));
  AttentionMap map = attention_map(gen_.tokenizer(), ids, a.layer, std::move(probs));
  map.sinks = gen_.config().architecture().recipe.attention.sinks;
  for (const json& im : images)
    for (uint32_t i = 0; i < im["tokens"]; ++i) map.pieces[im["first"].get<size_t>() + i] = "<image>";
  json out = to_json(map);
  if (!images.empty()) out["images"] = std::move(images);
  return {.body = dump(out)};
}

HttpReply Api::info() const {
  const ModelConfig& c = gen_.config();
  json j = {{"model", options_.model_id},
            {"name", c.name},
            {"architecture", c.arch_name},
            {"attention", to_string(c.attention_kind())},
            {"n_layer", c.n_layers},
            {"n_head", c.n_heads},
            {"n_head_kv", c.n_kv_heads},
            {"head_dim", c.head_dim},
            {"v_head_dim", c.v_head_dim},
            {"n_embd", c.dim},
            {"n_vocab", c.vocab_size},
            {"n_ctx", gen_.n_ctx()},
            {"n_ctx_train", c.seq_len},
            {"parallel", gen_.stats().slots},
            {"device", options_.device},
            {"kv_type", vkllm::info(options_.kv_type).name},
            {"kv_bytes_per_token", c.kv_bytes_per_token(options_.kv_type)},
            {"attention_max_tokens", std::min(kMaxAttentionTokens, gen_.n_ctx())}};
  add_kv_json(j, c, options_.kv_type);
  j["projector"] = options_.projector_info;  // what an image costs in tokens and KV bytes
  j["attention_layers"] = json::array();
  for (uint32_t l = 0; l < c.n_layers; ++l)
    if (c.has_attention(l)) j["attention_layers"].push_back(l);
  if (c.attention_kind() == AttentionKind::MLA)
    j["mla"] = {{"q_lora_rank", c.mla.q_lora_rank},
                {"kv_lora_rank", c.mla.kv_lora_rank},
                {"qk_nope_head_dim", c.mla.qk_nope_head_dim},
                {"qk_rope_head_dim", c.mla.qk_rope_head_dim},
                {"v_head_dim", c.mla.v_head_dim}};
  return {.body = dump(j)};
}

}  // namespace vkllm::serve
