// One layer's attention over a sequence as `vkllm attention` and POST /v1/attention report it:
// the tokens, their text pieces and every head's softmax probabilities [head][query][key]
// (Engine::attention_probabilities computes them). No GPU here: the server's stand-in
// generators build maps too.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <span>
#include <string>
#include <vector>

#include "text/tokenizer.h"

namespace vkllm {

struct AttentionMap {
  uint32_t layer = 0, heads = 0;
  std::vector<int32_t> tokens;
  std::vector<std::string> pieces;  // each token's text
  std::vector<float> probs;         // (heads, n, n): element (h, query, key) at (h * n + query) * n + key
  bool sinks = false;               // the layer has attention sinks: rows sum to 1 minus the sink's share
  size_t size() const { return tokens.size(); }
  float at(uint32_t head, size_t query, size_t key) const { return probs[(head * size() + query) * size() + key]; }
};

// The map of probabilities (heads, n, n) over tokens, with the tokenizer's pieces.
AttentionMap attention_map(const Tokenizer& tokenizer, std::span<const int32_t> tokens, uint32_t layer,
                           std::vector<float> probs);

// The mean share of each head's attention that its sink takes (1 minus the row sum, over the rows).
std::vector<double> sink_shares(const AttentionMap& map);

// {"layer": L, "tokens": [ids], "pieces": [text], "heads": [head][query][key]}, and with sinks
// "sink_share": [per head]. Probabilities are
// rounded to 6 decimals and exact zeros (keys after the query) written as 0, which keeps a
// 512-token map of many heads a few MB.
nlohmann::ordered_json to_json(const AttentionMap& map);

// The `top` largest keys of (head, query), largest first (ties: the earlier key).
std::vector<size_t> top_keys(const AttentionMap& map, uint32_t head, size_t query, size_t top);

}  // namespace vkllm
