// Log-probabilities of generated tokens under the model's own distribution (the softmax of its
// logits, before penalties, biases and grammar masks): what `vkllm run --json --logprobs` prints
// and what vkllm serve returns for logprobs / top_logprobs.
#pragma once
#include <cstdint>
#include <span>
#include <utility>
#include <vector>

namespace vkllm {

struct TokenLogprob {
  int32_t token = -1;
  double logprob = 0;
  std::vector<std::pair<int32_t, double>> top;  // the most likely tokens, best first (ties: lower id)
};

// log softmax(logits)[token], and the top_n most likely tokens.
TokenLogprob token_logprob(std::span<const float> logits, int32_t token, uint32_t top_n);

}  // namespace vkllm
