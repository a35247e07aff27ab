// Building and writing attention maps.
#include "engine/attention_map.h"

#include <algorithm>
#include <cmath>
#include <numeric>

#include "error.h"

namespace vkllm {

AttentionMap attention_map(const Tokenizer& tokenizer, std::span<const int32_t> tokens, uint32_t layer,
                           std::vector<float> probs) {
  size_t n = tokens.size();
  ENSURE(n > 0 && probs.size() % (n * n) == 0, "attention map: probabilities are not (heads, n, n)");
  AttentionMap m{.layer = layer, .heads = uint32_t(probs.size() / (n * n)), .tokens = {tokens.begin(), tokens.end()}};
  for (int32_t t : tokens) m.pieces.push_back(tokenizer.piece(t));
  m.probs = std::move(probs);
  return m;
}

std::vector<double> sink_shares(const AttentionMap& m) {
  std::vector<double> share(m.heads, 0.0);
  size_t n = m.size();
  for (uint32_t h = 0; h < m.heads && n; ++h) {
    for (size_t q = 0; q < n; ++q) {
      double sum = 0;
      for (size_t k = 0; k <= q; ++k) sum += m.at(h, q, k);
      share[h] += std::max(0.0, 1.0 - sum);
    }
    share[h] /= double(n);
  }
  return share;
}

nlohmann::ordered_json to_json(const AttentionMap& m) {
  size_t n = m.size();
  using json = nlohmann::ordered_json;
  json heads = json::array();
  for (uint32_t h = 0; h < m.heads; ++h) {
    json rows = json::array();
    for (size_t q = 0; q < n; ++q) {
      json row = json::array();
      for (size_t k = 0; k < n; ++k) {
        double p = std::round(double(m.at(h, q, k)) * 1e6) / 1e6;
        if (p == 0)
          row.push_back(0);
        else
          row.push_back(p);
      }
      rows.push_back(std::move(row));
    }
    heads.push_back(std::move(rows));
  }
  json out = {{"layer", m.layer}, {"tokens", m.tokens}, {"pieces", m.pieces}, {"heads", std::move(heads)}};
  if (m.sinks) {
    json shares = json::array();
    for (double s : sink_shares(m)) shares.push_back(std::round(s * 1e6) / 1e6);
    out["sink_share"] = std::move(shares);
  }
  return out;
}

std::vector<size_t> top_keys(const AttentionMap& m, uint32_t head, size_t query, size_t top) {
  std::vector<size_t> keys(query + 1);  // causal: keys after the query are 0
  std::iota(keys.begin(), keys.end(), size_t(0));
  top = std::min(top, keys.size());
  std::partial_sort(keys.begin(), keys.begin() + top, keys.end(), [&](size_t a, size_t b) {
    float pa = m.at(head, query, a), pb = m.at(head, query, b);
    return pa != pb ? pa > pb : a < b;
  });
  keys.resize(top);
  return keys;
}

}  // namespace vkllm
