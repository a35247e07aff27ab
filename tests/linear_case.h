// Shared by the tests of the recurrent linear-attention ops (test_ssm_conv, test_delta_rule): the
// sequences of one step (each in its slot, fresh or continuing) and their StepParams buffer.
#pragma once
#include <fmt/format.h>
#include <string>
#include <vector>

#include "harness.h"
#include "push.h"

namespace vkllm::test {

struct StepSeq {
  uint32_t slot, pos0, n;  // pos0 = 0: a fresh sequence (its slot's state is not read)
};

inline uint32_t total_tokens(const std::vector<StepSeq>& seqs) {
  uint32_t n = 0;
  for (const StepSeq& q : seqs) n += q.n;
  return n;
}

inline std::string describe(const std::vector<StepSeq>& seqs) {
  std::string s;
  for (const StepSeq& q : seqs) s += fmt::format(" [slot {} pos {} n {}]", q.slot, q.pos0, q.n);
  return s;
}

// The step buffer: one StepParams per sequence, in batch order.
inline Buffer step_buffer(const std::vector<StepSeq>& seqs) {
  std::vector<push::StepParams> step;
  for (const StepSeq& q : seqs) step.push_back({.pos0 = q.pos0, .n_tokens = q.n, .n_kv = q.pos0 + q.n, .slot = q.slot});
  Buffer b(gpu(), step.size() * sizeof(push::StepParams), Memory::Host, "step");
  b.upload(step.data(), step.size() * sizeof(push::StepParams));
  return b;
}

}  // namespace vkllm::test
