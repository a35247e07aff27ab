// What a model will hold in device memory, from the file alone (`vkllm info` says whether it fits
// before any device is touched): the weights as they are uploaded, the KV cache at a context, the
// recurrent state of hybrid models, and the activations at a prefill batch. Weights and KV cache are exact up to buffer
// alignment; the activations are an upper bound (every activation counted apart, as if the planner shared none).
#pragma once
#include <cstdint>

#include "arch/model_config.h"
#include "dtype.h"

namespace vkllm {

class GgufFile;

struct MemoryEstimate {
  uint64_t weights = 0, kv_cache = 0, activations = 0;
  uint64_t recurrent = 0;  // hybrid models: the linear layers' states, `slots` of them and a checkpoint each
  uint64_t total() const { return weights + kv_cache + activations + recurrent; }
};

MemoryEstimate estimate_memory(const GgufFile& file, const ModelConfig& config, uint32_t n_ctx, uint32_t batch,
                               DType kv_type = DType::F16, uint32_t slots = 1);

}  // namespace vkllm
