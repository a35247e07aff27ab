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
