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

}  // namespace vkllm::test
