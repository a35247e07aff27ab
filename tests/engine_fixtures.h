// The fixture models the engine tests run: the four attention kinds, each in F16, Q8_0 and Q4_0.
#pragma once
#include <memory>
#include <span>
#include <string>
#include <vector>

#include "engine/engine.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "reference/model.h"

namespace vkllm::test {

struct EngineFixture {
  std::string name;
  FixtureSpec spec;
};

// A fixture file parsed and an engine on the test GPU over it.
struct Loaded {
  GgufFile file;
  std::unique_ptr<Engine> engine;
};
Loaded load(const FixtureSpec& spec, EngineOptions options = {});

// n token ids below vocab, spread by a multiplicative hash; a seed gives another sequence.
std::vector<int32_t> some_tokens(size_t n, uint32_t vocab, uint32_t seed);

// The argmax of a logits row (greedy sampling).
int32_t best(std::span<const float> logits);

// `steps` greedy tokens after a fixed 5-token prompt, decoded by the engine (one token per eval,
// from a reset cache) and by the reference model (a whole forward per token): {gpu, reference}.
struct Greedy {
  std::vector<int32_t> gpu, reference;
};
Greedy greedy_both(Loaded& l, const ref::Model& reference, uint32_t vocab, int steps);

// MHA, GQA (qwen2, with biases and neox rope), MQA and MLA (new layout with q_lora, and the old
// fused layout), each with weights in `type`.
std::vector<EngineFixture> engine_fixtures(DType type);

// One fixture of each family beyond those (issue 16): qwen3 (head dim != dim / heads), qwen3moe,
// qwen2moe (biases, gated shared expert), deepseek2 with V3 routing (a dense block, sigmoid
// scores, selection bias, groups, shared expert), gemma2 and gemma3 (sliding windows small
// enough to matter, soft-caps), phi3 (fused projections).
std::vector<EngineFixture> family_fixtures(DType type);

// A GQA llama whose matrices have rows of 256 and 512 (so K-quants and IQ types apply), its
// tensors typed as llama.cpp's quantizer types a file of `mix` ("Q3_K_M", "IQ3_M", ...).
FixtureSpec mix_fixture(const std::string& mix);

// The mixes of the types issue 17 added, each with the types its fixture file holds.
struct MixCase {
  const char* mix;
  std::vector<DType> types;  // the matrix types of mix_fixture(mix), sorted by ggml id
};
const std::vector<MixCase>& mix_cases();

}  // namespace vkllm::test
