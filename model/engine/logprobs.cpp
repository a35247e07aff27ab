// Log-softmax of one position's logits, in double precision.
#include "engine/logprobs.h"

#include <algorithm>
#include <cmath>

namespace vkllm {

TokenLogprob token_logprob(std::span<const float> logits, int32_t token, uint32_t top_n) {
  double max = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (float l : logits) sum += std::exp(double(l) - max);
  double log_z = max + std::log(sum);
  TokenLogprob out{.token = token, .logprob = double(logits[size_t(token)]) - log_z, .top = {}};
  if (top_n == 0) return out;
  std::vector<int32_t> ids(logits.size());
  for (size_t i = 0; i < ids.size(); ++i) ids[i] = int32_t(i);
  size_t n = std::min<size_t>(top_n, ids.size());
  std::partial_sort(ids.begin(), ids.begin() + std::ptrdiff_t(n), ids.end(), [&](int32_t a, int32_t b) {
    return logits[size_t(a)] > logits[size_t(b)] || (logits[size_t(a)] == logits[size_t(b)] && a < b);
  });
  for (size_t i = 0; i < n; ++i) out.top.emplace_back(ids[i], double(logits[size_t(ids[i])]) - log_z);
  return out;
}

}  // namespace vkllm
