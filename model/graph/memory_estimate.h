// What a model will hold in device memory, from the file (and, for attention's scratch, the
// device's plan: `vkllm info` says whether it fits before any buffer is made): the weights as they are uploaded, the KV
// cache at a context, the recurrent state of hybrid models, and the activations at a prefill batch. Weights and KV
// cache are exact up to buffer alignment; the activations are an upper bound (every activation counted apart, as if the
// planner shared none).
#pragma once
#include <cstdint>

#include <vector>

#include "arch/model_config.h"
#include "dtype.h"
#include "graph/kv_cache.h"

namespace vkllm {

class GgufFile;
struct DeviceCaps;
struct Profile;

struct MemoryEstimate {
  uint64_t weights = 0, kv_cache = 0, activations = 0;
  uint64_t recurrent = 0;  // hybrid models: the linear layers' states, `slots` of them and a checkpoint each
  // Attention's split-K partials: planned by the device and profile, so 0 in the file-only estimate
  // (a wide GPU's profile splits even prefill over a 1024-token context: 2 MiB at batch 512 for a
  // 4-head fixture; attention_scratch_bytes below).
  uint64_t scratch = 0;
  uint64_t total() const { return weights + kv_cache + activations + recurrent + scratch; }
};

MemoryEstimate estimate_memory(const GgufFile& file, const ModelConfig& config, uint32_t n_ctx, uint32_t batch,
                               DType kv_type = DType::F16, uint32_t slots = 1);

// The same with the attention scratch this device and profile plan (what fits is judged by it).
MemoryEstimate estimate_memory(const GgufFile& file, const ModelConfig& config, uint32_t n_ctx, uint32_t batch,
                               DType kv_type, uint32_t slots, const DeviceCaps& caps, const Profile& prof);

// Attention's split-K scratch for the worst step of this model's graph: n tokens of m sequences
// (n up to `batch`, m up to `slots`) over every KV geometry, as the device and profile plan it
// (Transformer allocates this much).
uint64_t attention_scratch_bytes(const DeviceCaps& caps, const Profile& prof, uint32_t n_heads,
                                 const std::vector<KvCache::Geometry>& geometries, uint32_t n_ctx, uint32_t batch,
                                 uint32_t slots);

}  // namespace vkllm
