// Engine: a loaded model ready to run: weights on the GPU, the KV cache, the Transformer graphs
// and the tokenizer. Keeps the sequence so far (n_past); prefill runs in chunks, then decode.
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <vector>

#include "arch/model_config.h"
#include "engine/check.h"
#include "engine/sampler.h"
#include "graph/kv_cache.h"
#include "graph/transformer.h"
#include "graph/weights.h"
#include "text/tokenizer.h"

namespace vkllm {

class GgufFile;
namespace ref {
class Model;
}

struct EngineOptions {
  uint32_t n_ctx = 0;                       // 0: the model's context length, at most 4096
  uint32_t batch = 512;                     // prefill chunk (tokens per forward)
  DType kv_type = DType::F16;               // F16 or F32
  bool profiling = false;                   // GPU timestamps per dispatch (vkllm bench --profile)
  uint64_t max_weight_buffer = 1ull << 30;  // weights are packed in buffers of at most this
  // Run the reference model beside every forward and report how far each activation is from it
  // (VKLLM_CHECK=1, `vkllm logits --check`); slow. The GgufFile must then outlive the engine.
  bool check = false;
  std::function<void(const CheckReport&)> on_check;
};

struct MemoryReport {
  uint64_t weights = 0, kv_cache = 0, activations = 0;
  size_t weight_buffers = 0;
};

class Engine {
 public:
  Engine(const Context& ctx, const GgufFile& file, const EngineOptions& options = {},
         const std::function<void(const LoadProgress&)>& progress = {});
  ~Engine();

  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const KvCache& kv_cache() const { return *cache_; }
  Transformer& transformer() { return *transformer_; }
  uint32_t n_ctx() const { return cache_->n_ctx(); }
  uint32_t n_past() const { return n_past_; }
  MemoryReport memory() const;

  // Appends tokens to the sequence (in chunks of the batch size) and returns the logits of the
  // last one (vocab), valid until the next call.
  std::span<const float> eval(std::span<const int32_t> tokens);
  // The same, returning the logits of every appended token (n, vocab).
  std::vector<float> eval_all(std::span<const int32_t> tokens);
  // Keeps the first n tokens of the sequence (a chat keeps its history this way).
  void truncate(uint32_t n);
  void reset() { truncate(0); }

 private:
  void check_fits(size_t n) const;
  std::span<const float> forward(std::span<const int32_t> chunk, LogitsMode mode);

  ModelConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Weights> weights_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<Transformer> transformer_;
  uint32_t n_past_ = 0;
  std::vector<int32_t> history_;  // the sequence so far (the check's reference runs over it)
  EngineOptions options_;
  const GgufFile* file_ = nullptr;
  std::unique_ptr<ref::Model> reference_;  // with options.check
};

struct GenerationStats {
  uint32_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generation_seconds = 0;
  double prompt_tps() const { return prompt_seconds > 0 ? prompt_tokens / prompt_seconds : 0; }
  double generation_tps() const { return generation_seconds > 0 ? generated_tokens / generation_seconds : 0; }
};

// Evaluates the prompt, then samples up to max_tokens tokens (stopping at end-of-generation or when
// on_token returns false), calling on_token with each.
GenerationStats generate(Engine& engine, Sampler& sampler, std::span<const int32_t> prompt, uint32_t max_tokens,
                         const std::function<bool(int32_t)>& on_token);

}  // namespace vkllm
