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
  // The architecture llama.cpp reads these weights as when it has no name for spec.arch (its
  // files of that family carry another one): "" for most.
  std::string oracle_arch = "";
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
// Exact equality holds on one profile but not across kernels that sum in another order (a GPU
// profile's tiled prefill), so `agree()` is the rule the tests check: the sequences are equal, or
// they part at a step where the reference's top-2 logit margin is within twice the largest
// |GPU - reference| logit difference measured at that step (a near tie that rounding may break;
// the steps after it follow different prefixes and say nothing).
struct Greedy {
  std::vector<int32_t> gpu, reference;
  std::vector<double> margin, error;  // per step while the prefixes agree: top-2 margin, max |diff|
  int steps = 0;
  size_t parting() const;
  bool agree() const;
  std::string describe() const;
};
Greedy greedy_both(Loaded& l, const ref::Model& reference, uint32_t vocab, int steps);

// MHA, GQA (qwen2, with biases and neox rope), MQA and MLA (new layout with q_lora, and the old
// fused layout), each with weights in `type`.
std::vector<EngineFixture> engine_fixtures(DType type);

// The fixture registry: at least one fixture of every registered architecture, the one list the
// family tests, the batch tests and the llama.cpp agreement test iterate (a test fails when an
// architecture has none). llama (3.1 rope factors), mistral, qwen2 (biases), qwen3 (head dim !=
// dim / heads), qwen3-embedding (qwen3 with pooling_type last and EOS appended), qwen3moe,
// qwen2moe (biases, gated shared expert), deepseek2 three times (MLA with every block dense; V2
// routing: softmax, groups, shared experts, no q_lora; V3 routing: sigmoid scores, selection
// bias, groups, normalised weights), gemma2 and gemma3 (sliding windows small enough to matter,
// soft-caps), phi3 (fused projections), qwen35 and qwen35moe (Gated DeltaNet beside gated
// attention, a multi-token-prediction block), lfm2 and lfm2moe (gated short convs beside GQA;
// sigmoid routing with a selection bias). Names are "<family> <type>".
std::vector<EngineFixture> family_fixtures(DType type);
// The registry's families once more in the other tensor layouts llama.cpp reads for them
// (docs/formats.md §13), from each architecture's recipe, so that a new architecture gets them
// too: per architecture (and dense / with experts), its first registry fixture with every
// fusion it allows flipped from the usual one (attn_qkv, ffn_gate_up_exps) and every optional
// tensor its llama.cpp loader reads present (q/k/v biases, beside a fused weight where the fixture
// had none; attn_output.bias, the FFN's biases, output.bias; qwen2's usual q/k/v biases left
// out instead), plus, for shared-KV layers, a
// variant whose shared layers carry their own (unused) K and V. Names are "<family>-<what
// changed> <type>"; families with no alternative have none.
std::vector<EngineFixture> layout_fixtures(DType type);
// The registry's fixture named "<name> <type>" (e.g. "qwen3moe"); throws if there is none.
EngineFixture family_fixture(const std::string& name, DType type);

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
