// Pooling hidden states into embeddings, batched over KV-cache slots.
#include "engine/embedding.h"

#include <fmt/format.h>
#include <algorithm>
#include <charconv>
#include <cmath>
#include <numeric>

#include "engine/engine.h"
#include "error.h"

namespace vkllm {

namespace {

constexpr std::string_view kPoolingNames[] = {"none", "mean", "cls", "last", "rank"};

void check_inputs(const Engine& engine, std::span<const std::vector<int32_t>> inputs) {
  for (size_t i = 0; i < inputs.size(); ++i) {
    std::string which = inputs.size() == 1 ? "the input" : fmt::format("input {}", i);
    ENSURE(!inputs[i].empty(), fmt::format("{} has no tokens", which));
    ENSURE(inputs[i].size() <= engine.n_ctx(),
           fmt::format("{} is {} tokens; the context holds {} (use --ctx)", which, inputs[i].size(), engine.n_ctx()));
    check_token_ids(inputs[i], engine.config().vocab_size);
  }
}

// An input while it runs: its slot, how many of its tokens are evaluated, and its pooled sum.
struct Running {
  size_t input = 0;
  uint32_t slot = 0, done = 0;
};

// Adds the hidden-state rows [first, first + n) of one input's chunk at positions pos0.. to its
// pooled vector: every row for mean, position 0 for cls, the input's last position for last.
void pool_rows(std::vector<double>& acc, const float* rows, uint32_t dim, uint32_t pos0, uint32_t n, uint32_t length,
               Pooling p) {
  for (uint32_t j = 0; j < n; ++j) {
    uint32_t pos = pos0 + j;
    bool take = p == Pooling::Mean || (p == Pooling::Cls && pos == 0) || (p == Pooling::Last && pos + 1 == length);
    if (!take) continue;
    for (uint32_t d = 0; d < dim; ++d) acc[d] += rows[size_t(j) * dim + d];
  }
}

}  // namespace

std::string_view to_string(Pooling p) {
  int i = int(p);
  return i >= 0 && i < int(std::size(kPoolingNames)) ? kPoolingNames[i] : "unspecified";
}

std::optional<Pooling> pooling_named(std::string_view name) {
  for (size_t i = 0; i < std::size(kPoolingNames); ++i)
    if (kPoolingNames[i] == name) return Pooling(i);
  return std::nullopt;
}

std::string pooling_refusal(Pooling p) {
  if (p == Pooling::None)
    return "pooling none gives a vector per token, which vkllm does not return: use --pooling mean, cls or last";
  if (p == Pooling::Rank)
    return "pooling rank is a reranker's score, not an embedding: use --pooling mean, cls or last";
  return "";
}

Pooling embedding_pooling(const ModelConfig& c, Pooling requested) {
  Pooling p = requested != Pooling::Unspecified ? requested : c.pooling;
  if (p == Pooling::Unspecified) p = Pooling::Last;
  std::string refusal = pooling_refusal(p);
  ENSURE(refusal.empty(), refusal);
  return p;
}

double json_float(float x) {
  char text[32];
  auto [end, ec] = std::to_chars(text, text + sizeof text, x);
  double d = 0;
  std::from_chars(text, end, d);
  return d;
}

void normalize_embedding(std::span<float> v, int mode) {
  ENSURE(valid_normalization(mode), fmt::format("embedding normalisation {} is not -1, 0, 1, 2 or more", mode));
  double sum = 0;
  if (mode == -1) {
    sum = 1;
  } else if (mode == 0) {
    for (float x : v) sum = std::max(sum, double(std::abs(x)));
    sum /= 32760.0;  // llama.cpp's int16 range
  } else if (mode == 2) {
    for (float x : v) sum += double(x) * x;
    sum = std::sqrt(sum);
  } else {
    for (float x : v) sum += std::pow(std::abs(double(x)), mode);
    sum = std::pow(sum, 1.0 / mode);
  }
  float scale = sum > 0 ? float(1 / sum) : 0.0f;
  for (float& x : v) x *= scale;
}

// Each step: the running inputs' next chunks first, then new inputs in free slots, until the
// step holds max_batch tokens; after it, finished inputs free their slots.
std::vector<std::vector<float>> embed(Engine& engine, std::span<const std::vector<int32_t>> inputs, Pooling pooling,
                                      std::span<const uint32_t> slots) {
  ENSURE(pooling == Pooling::Mean || pooling == Pooling::Cls || pooling == Pooling::Last,
         "embeddings are pooled mean, cls or last");
  ENSURE(!slots.empty(), "embeddings need a KV-cache slot");
  check_inputs(engine, inputs);
  if (std::find(slots.begin(), slots.end(), 0u) != slots.end()) engine.reset();  // slot 0 is overwritten
  uint32_t dim = engine.config().dim;
  std::vector<std::vector<double>> acc(inputs.size(), std::vector<double>(dim));
  std::vector<uint32_t> free(slots.rbegin(), slots.rend());
  std::vector<Running> running;
  size_t next = 0;
  while (next < inputs.size() || !running.empty()) {
    uint32_t budget = engine.max_batch();
    std::vector<SeqChunk> batch;
    std::vector<size_t> owner;  // the running entry of each chunk
    auto add = [&](size_t r) {
      const std::vector<int32_t>& t = inputs[running[r].input];
      uint32_t n = std::min<uint32_t>(budget, uint32_t(t.size()) - running[r].done);
      if (n == 0) return;
      batch.push_back(
          {.slot = running[r].slot, .pos0 = running[r].done, .tokens = std::span(t).subspan(running[r].done, n)});
      owner.push_back(r);
      budget -= n;
    };
    for (size_t r = 0; r < running.size(); ++r) add(r);
    while (budget > 0 && next < inputs.size() && !free.empty()) {
      running.push_back({.input = next++, .slot = free.back()});
      free.pop_back();
      add(running.size() - 1);
    }
    std::span<const float> hidden = engine.transformer().forward(batch, OutputMode::Hidden);
    size_t row = 0;
    for (size_t k = 0; k < batch.size(); ++k) {
      Running& r = running[owner[k]];
      uint32_t n = uint32_t(batch[k].tokens.size()), length = uint32_t(inputs[r.input].size());
      pool_rows(acc[r.input], hidden.data() + row * dim, dim, r.done, n, length, pooling);
      row += n, r.done += n;
    }
    std::erase_if(running, [&](const Running& r) {
      bool finished = r.done == inputs[r.input].size();
      if (finished) free.push_back(r.slot);
      return finished;
    });
  }
  std::vector<std::vector<float>> out(inputs.size());
  for (size_t i = 0; i < inputs.size(); ++i) {
    double scale = pooling == Pooling::Mean ? 1.0 / double(inputs[i].size()) : 1.0;
    out[i].resize(dim);
    for (uint32_t d = 0; d < dim; ++d) out[i][d] = float(acc[i][d] * scale);
  }
  return out;
}

std::vector<std::vector<float>> embed(Engine& engine, std::span<const std::vector<int32_t>> inputs, Pooling pooling) {
  std::vector<uint32_t> slots(engine.slots());
  std::iota(slots.begin(), slots.end(), 0u);
  return embed(engine, inputs, pooling, slots);
}

}  // namespace vkllm
