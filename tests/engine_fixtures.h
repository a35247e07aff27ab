// The fixture models the engine tests run: the four attention kinds, each in F16, Q8_0 and Q4_0.
#pragma once
#include <string>
#include <vector>

#include "fixture/fixture.h"

namespace vkllm::test {

struct EngineFixture {
  std::string name;
  FixtureSpec spec;
};

// MHA, GQA (qwen2, with biases and neox rope), MQA and MLA (new layout with q_lora, and the old
// fused layout), each with weights in `type`.
std::vector<EngineFixture> engine_fixtures(DType type);

// One fixture of each family beyond those (issue 16): qwen3 (head dim != dim / heads), qwen3moe,
// qwen2moe (biases, gated shared expert), deepseek2 with V3 routing (a dense block, sigmoid
// scores, selection bias, groups, shared expert), gemma2 and gemma3 (sliding windows small
// enough to matter, soft-caps), phi3 (fused projections).
std::vector<EngineFixture> family_fixtures(DType type);

}  // namespace vkllm::test
