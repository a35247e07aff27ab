// Histogram counts and vLLM's bucket bounds.
#include "engine/histogram.h"

#include <algorithm>

namespace vkllm {

Histogram::Histogram(std::vector<double> bounds) : bounds_(std::move(bounds)), counts_(bounds_.size() + 1) {}

void Histogram::observe(double value) {
  size_t i = size_t(std::lower_bound(bounds_.begin(), bounds_.end(), value) - bounds_.begin());
  ++counts_[i];
  ++count_;
  sum_ += value;
}

uint64_t Histogram::at_most(size_t i) const {
  uint64_t n = 0;
  for (size_t j = 0; j <= i && j < counts_.size(); ++j) n += counts_[j];
  return n;
}

std::vector<double> buckets_1_2_5(double max) {
  std::vector<double> out;
  for (double scale = 1;; scale *= 10)
    for (double m : {1.0, 2.0, 5.0}) {
      if (m * scale > max) return out;
      out.push_back(m * scale);
    }
}

namespace {

// vLLM's request_latency_buckets: end-to-end latency and time in the queue.
std::vector<double> latency_buckets() {
  return {0.3,  0.5,  0.8,  1.0,  1.5,   2.0,   2.5,   5.0,   10.0,   15.0,  20.0,
          30.0, 40.0, 50.0, 60.0, 120.0, 240.0, 480.0, 960.0, 1920.0, 7680.0};
}

}  // namespace

RequestHistograms::RequestHistograms(uint32_t n_ctx)
    : time_to_first_token({0.001, 0.005, 0.01, 0.02, 0.04, 0.06, 0.08, 0.1,  0.25,  0.5,   0.75,
                           1.0,   2.5,   5.0,  7.5,  10.0, 20.0, 40.0, 80.0, 160.0, 640.0, 2560.0}),
      time_per_output_token(
          {0.01, 0.025, 0.05, 0.075, 0.1, 0.15, 0.2, 0.3, 0.4, 0.5, 0.75, 1.0, 2.5, 5.0, 7.5, 10.0, 20.0, 40.0, 80.0}),
      e2e_latency(latency_buckets()),
      queue_time(latency_buckets()),
      prompt_tokens(buckets_1_2_5(n_ctx)),
      generation_tokens(buckets_1_2_5(n_ctx)),
      iteration_tokens({1, 8, 16, 32, 64, 128, 256, 512, 1024, 2048, 4096, 8192, 16384}) {}

}  // namespace vkllm
