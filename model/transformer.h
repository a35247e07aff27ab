// Transformer: the multi-layer pre-norm decoder as GPU dispatches. One graph (a recorded
// Stream) per batch size, replayed for every later call of that size: per-step values (tokens,
// positions, KV length) live in small host-visible buffers the graph reads.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <vector>

#include "buffer.h"
#include "config.h"
#include "kv_cache.h"
#include "planner.h"
#include "stream.h"
#include "weights.h"

namespace vkllm {

enum class LogitsMode { Last, All };

class Transformer {
 public:
  // max_batch: most tokens per forward (prefill chunk); lowered if an activation would not fit
  // one storage-buffer binding. profiling: graphs record GPU timestamps per dispatch.
  Transformer(const Context& ctx, const ModelConfig& config, const Weights& weights, KvCache& cache,
              uint32_t max_batch, bool profiling = false);
  ~Transformer();

  // Stores the K/V of `tokens` (at positions pos0 ..) in the cache and returns logits: the last
  // token's (vocab), or every token's (n, vocab), valid until the next call.
  std::span<const float> forward(std::span<const int32_t> tokens, uint32_t pos0, LogitsMode mode);

  uint32_t max_batch() const { return max_batch_; }
  uint64_t activation_bytes() const;  // arena + attention scratch + logits + step inputs
  uint64_t arena_unshared_bytes() const { return planner_.unshared_bytes(); }
  // GPU time per dispatch of the last forward (profiling only).
  std::vector<KernelTime> last_timings() const;
  // Wall time the last forward waited for the GPU.
  double last_wait_seconds() const;
  size_t graphs_recorded() const { return recorded_; }

 private:
  struct Acts;  // the activation tensors' planner ids
  void plan_arena();
  BufferView act(int id, uint64_t bytes) const;
  Stream& graph(uint32_t n, LogitsMode mode);
  void record(Stream& s, uint32_t n, LogitsMode mode);
  void record_attention(Stream& s, uint32_t layer, uint32_t n);
  void record_mla(Stream& s, uint32_t layer, uint32_t n);
  void record_ffn(Stream& s, uint32_t layer, uint32_t n);
  void record_logits(Stream& s, uint32_t n, LogitsMode mode);
  void project(Stream& s, const Tensor& w, BufferView x, BufferView y, uint32_t n, const Tensor* bias = nullptr);
  void rope(Stream& s, BufferView x, uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride);

  const Context& ctx_;
  const ModelConfig& c_;
  const Weights& w_;
  KvCache& cache_;
  uint32_t max_batch_;
  bool profiling_;
  ArenaPlanner planner_;
  std::unique_ptr<Acts> acts_;
  std::unique_ptr<Buffer> arena_, scratch_;
  Buffer tokens_, positions_, step_;  // (max_batch) int32, (max_batch) int32, StepParams
  std::unique_ptr<Buffer> logits_;    // (rows, vocab) f32, host-visible; grown for LogitsMode::All
  struct Graph {
    std::unique_ptr<Stream> stream;
    uint64_t used;  // for least-recently-used eviction
  };
  std::map<std::pair<uint32_t, int>, Graph> graphs_;  // by (tokens, logits mode)
  uint64_t uses_ = 0;
  Stream* last_ = nullptr;
  size_t recorded_ = 0;
};

}  // namespace vkllm
