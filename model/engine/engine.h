// Engine: a loaded model ready to run: weights on the GPU, the KV cache, the Transformer graphs
// and the tokenizer. The single-sequence interface (eval, run/chat/bench) keeps the sequence so
// far (n_past) in slot 0; prefill runs in chunks, then decode. step() runs a batch of several
// sequences, one per KV-cache slot (the scheduler of vkllm serve drives it).
#pragma once
#include <chrono>
#include <functional>
#include <memory>
#include <span>
#include <string_view>
#include <vector>

#include "arch/model_config.h"
#include "engine/output_constraint.h"
#include "engine/reference_check.h"
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
  uint32_t n_ctx = 0;                       // tokens per slot; 0: the model's context length, at most 4096
  uint32_t batch = 512;                     // prefill chunk (tokens per forward)
  uint32_t slots = 1;                       // KV-cache slots: sequences that can run at once
  DType kv_type = DType::F16;               // F16, F32, Q8_0 or Q4_0 (graph/kv_cache.h)
  bool profiling = false;                   // GPU timestamps per dispatch (vkllm bench --profile)
  uint64_t max_weight_buffer = 1ull << 30;  // weights are packed in buffers of at most this
  // Run the reference model beside every forward and report how far each activation is from it
  // (VKLLM_CHECK=1, `vkllm logits --check`); slow. The GgufFile must then outlive the engine.
  bool check = false;
  std::function<void(const CheckReport&)> on_check;
};

struct MemoryReport {
  uint64_t weights = 0, kv_cache = 0;
  uint64_t recurrent = 0;  // linear-attention states, every slot and its checkpoint (hybrid models)
  uint64_t activations = 0;
  uint64_t staging = 0;  // held only while the weights were uploaded (0 on unified memory)
  size_t weight_buffers = 0;
};

// Tokens per KV-cache slot when --ctx is not given: the model's context length, at most 4096.
uint32_t default_context(const ModelConfig& config);
// The default context fitted to a device: default_context halved while estimate_memory at that
// context (weights, `slots` KV caches, activations at `batch`, and the attention scratch the
// device and profile plan) exceeds `usable` device bytes, down to kLeastFittedContext; unchanged
// where even that does not fit (the weights are the problem).
inline constexpr uint32_t kLeastFittedContext = 256;
uint32_t fitted_context(const GgufFile& file, const ModelConfig& config, uint32_t batch, DType kv_type, uint32_t slots,
                        uint64_t usable, const DeviceCaps& caps, const Profile& prof);

class Engine {
 public:
  Engine(const Context& ctx, const GgufFile& file, const EngineOptions& options = {},
         const std::function<void(const LoadProgress&)>& progress = {});
  ~Engine();

  const ModelConfig& config() const { return config_; }
  const Tokenizer& tokenizer() const { return *tokenizer_; }
  const KvCache& kv_cache() const { return *cache_; }
  Transformer& transformer() { return *transformer_; }
  const Weights& weights() const { return *weights_; }
  uint32_t n_ctx() const { return cache_->n_ctx(); }  // per slot
  uint32_t slots() const { return cache_->slots(); }
  uint32_t max_batch() const { return transformer_->max_batch(); }
  uint32_t n_past() const { return n_past_; }
  MemoryReport memory() const;

  // One forward step of several sequences (distinct slots, at most max_batch() tokens in all):
  // the logits of each chunk's last token, (chunks, vocab), valid until the next call. The
  // single-sequence state (n_past) is not touched; slot 0 is shared with it.
  std::span<const float> step(std::span<const SeqChunk> batch) {
    return transformer_->forward(batch, OutputMode::Last);
  }

  // Runs the step shapes a server meets on throwaway tokens, so that every pipeline they take is
  // compiled before the first request: prefills of each length that specialises a kernel (matvec's
  // token counts, attention's row tiles, a long chunk for the tiled matmul and the delta rule), a
  // decode, and with two slots or more a decode beside a prefill. Long contexts' split-K merge is
  // left to first use. Slots 0 and 1 are left holding rows no sequence reads (each writes its own
  // before attending to them, and one starting at position 0 starts from a zero recurrent state);
  // the single sequence is reset. Returns the pipelines compiled.
  size_t warm_up();
  size_t pipelines() const;        // compiled so far on this engine's Context
  double compile_seconds() const;  // spent compiling them

  // Appends tokens to the sequence (in chunks of the batch size) and returns the logits of the
  // last one (vocab), valid until the next call.
  std::span<const float> eval(std::span<const int32_t> tokens);
  // The same, returning the logits of every appended token (n, vocab).
  std::vector<float> eval_all(std::span<const int32_t> tokens);
  // Appends an image's tokens: rows (n, dim) f32 from the vision encoder, in chunks of the batch
  // as llama.cpp's mtmd helpers decode them, attending among themselves as `attention` says; a
  // model with M-RoPE places them on their grid_x x grid_y grid and moves the sequence's later
  // positions on by max(grid_x, grid_y) rather than n. Returns the last row's logits.
  std::span<const float> eval_image(std::span<const float> rows, uint32_t grid_x, uint32_t grid_y,
                                    ImageAttention attention);
  bool uses_mrope() const;  // a sectioned rope: images take 2D positions
  // The attention probabilities of every head of `layer` over a sequence of tokens from position
  // 0, evaluated in KV-cache slot `slot` (overwritten; slot 0 also ends the single sequence:
  // n_past becomes 0): (heads, n, n) f32, [head][query][key], causal (keys after the query 0).
  // GQA/MQA heads over their KV head's keys, MLA heads over the latent rows. See
  // Transformer::attention_probabilities.
  std::vector<float> attention_probabilities(std::span<const int32_t> tokens, uint32_t layer, uint32_t slot = 0);
  // The same over chunks that follow one another from position 0 (text and images' rows, as
  // steps take them: Transformer::attention_probabilities).
  std::vector<float> attention_probabilities(std::span<const SeqChunk> parts, uint32_t layer, uint32_t slot);
  // Keeps the first n tokens of the sequence (a chat keeps its history this way). A hybrid model
  // cannot rewind its recurrent state: it keeps none, all, or the tokens slot 0's checkpoint
  // covers (resumable() says which n work).
  void truncate(uint32_t n);
  void reset() { truncate(0); }

  // The longest prefix of at most n tokens that a sequence in slot `slot`, which holds `live`
  // tokens, can keep: n itself for a model without linear-attention layers; for a hybrid `live`
  // when that is at most n, else the slot's checkpoint's length when that is, else 0.
  uint32_t resumable(uint32_t n, uint32_t slot, uint32_t live) const;
  uint32_t resumable(uint32_t n) const { return resumable(n, 0, n_past_); }
  // Hybrid models: saves slot's recurrent state as it is after its first n tokens (the end of a
  // turn's prompt: the next turn of the talk starts with those tokens), for a later sequence.
  // Nothing for other models.
  void checkpoint(uint32_t slot, uint32_t n);
  // Hybrid models: a sequence in `slot` goes on from its first n tokens (resumable()): from the
  // checkpoint when n is its length and not `live`, else as it is. Nothing for other models.
  void resume(uint32_t slot, uint32_t n, uint32_t live);
  const RecurrentCache* recurrent_cache() const { return recurrent_.get(); }

 private:
  void check_fits(size_t n) const;
  std::span<const float> forward(std::span<const int32_t> chunk, OutputMode mode);

  ModelConfig config_;
  std::unique_ptr<Tokenizer> tokenizer_;
  std::unique_ptr<Weights> weights_;
  std::unique_ptr<KvCache> cache_;
  std::unique_ptr<RecurrentCache> recurrent_;  // hybrid models only
  std::unique_ptr<Transformer> transformer_;
  uint32_t n_past_ = 0;
  // M-RoPE: from cache row `first` on, positions run `shift` apart from rows (after each image)
  struct RopeShift {
    uint32_t first;
    int32_t shift;
  };
  std::vector<RopeShift> shifts_;
  int32_t rope_shift() const { return shifts_.empty() ? 0 : shifts_.back().shift; }
  std::vector<int32_t> history_;  // the sequence so far (the check's reference runs over it)
  EngineOptions options_;
  const GgufFile* file_ = nullptr;
  const Context* ctx_ = nullptr;
  std::unique_ptr<ref::Model> reference_;  // with options.check
};

// Why generation stopped.
enum class FinishReason {
  Length,           // max_tokens generated
  EndOfGeneration,  // the model sampled an end-of-generation token
  Stopped,          // on_token returned false (a stop string, Ctrl-C: the caller knows which)
  ContextFull,      // the context has no room for another token
};
std::string_view to_string(FinishReason r);  // "length", "eog", "stop", "context"

struct GenerationStats {
  uint32_t prompt_tokens = 0, generated_tokens = 0;
  double prompt_seconds = 0, generation_seconds = 0;  // not counting compile_seconds
  double compile_seconds = 0;  // compiling kernels met for the first time (once per device and shape)
  FinishReason finish = FinishReason::Length;
  double prompt_tps() const { return prompt_seconds > 0 ? prompt_tokens / prompt_seconds : 0; }
  double generation_tps() const { return generation_seconds > 0 ? generated_tokens / generation_seconds : 0; }
};

struct GenerateOptions {
  uint32_t max_tokens = UINT32_MAX;  // UINT32_MAX: until end of generation or a full context
  bool ignore_eos = false;           // end-of-generation tokens are never sampled
  // Each sampled token (end-of-generation ones included) with the logits it was drawn from (the
  // model's, before penalties and masks); returning false stops.
  std::function<bool(int32_t token, std::span<const float> logits)> on_token;
  OutputConstraint* constraint = nullptr;  // a grammar the tokens must follow
};

// Evaluates the prompt, then samples tokens until one of the FinishReasons.
GenerationStats generate(Engine& engine, Sampler& sampler, std::span<const int32_t> prompt,
                         const GenerateOptions& options);
// The same with up to max_tokens tokens and a callback that sees only the token.
GenerationStats generate(Engine& engine, Sampler& sampler, std::span<const int32_t> prompt, uint32_t max_tokens,
                         const std::function<bool(int32_t)>& on_token);

// Throws "token id X is outside the vocabulary of N tokens (0 to N-1)" for the first id out of
// range: the one wording for every command and the engine itself.
void check_token_ids(std::span<const int32_t> ids, uint32_t vocab_size);

}  // namespace vkllm
