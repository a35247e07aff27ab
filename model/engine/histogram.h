// Histogram: a Prometheus histogram's state (counts per upper bound, sum, count), and the
// histograms vkllm serve keeps of its requests (RequestHistograms, /metrics). The bounds are
// vLLM's (vllm/v1/metrics/loggers.py), so that dashboards and alerts written for vLLM read
// vkllm's numbers on the same buckets.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

namespace vkllm {

class Histogram {
 public:
  explicit Histogram(std::vector<double> bounds = {});
  void observe(double value);
  const std::vector<double>& bounds() const { return bounds_; }
  // Observations at most bounds()[i] (cumulative, as Prometheus's `le` buckets are); i ==
  // bounds().size() is +Inf, every observation.
  uint64_t at_most(size_t i) const;
  uint64_t count() const { return count_; }
  double sum() const { return sum_; }

 private:
  std::vector<double> bounds_;    // ascending upper bounds
  std::vector<uint64_t> counts_;  // per bound, not cumulative; the last is (bounds_.back(), +Inf)
  uint64_t count_ = 0;
  double sum_ = 0;
};

// 1, 2, 5, 10, 20, 50, ... up to `max` (vLLM's build_1_2_5_buckets: token counts up to the context).
std::vector<double> buckets_1_2_5(double max);

// Seconds and tokens of each request and each forward step, as vLLM's histograms of the same names.
struct RequestHistograms {
  explicit RequestHistograms(uint32_t n_ctx = 4096);
  Histogram time_to_first_token;               // submit to the first generated token
  Histogram time_per_output_token;             // between consecutive tokens of a request
  Histogram e2e_latency;                       // submit to the last token
  Histogram queue_time;                        // submit to admission into a slot
  Histogram prompt_tokens, generation_tokens;  // per finished request
  Histogram iteration_tokens;                  // tokens per forward step
};

}  // namespace vkllm
