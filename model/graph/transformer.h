// Transformer: the multi-layer pre-norm decoder as GPU dispatches. A forward step takes the
// tokens of one or several sequences (decode tokens of running ones, prefill chunks of new ones):
// every matmul sees all tokens of the step, attention runs per sequence over its own KV-cache
// slot. One graph (a recorded Stream) per (tokens, sequences, logits mode), replayed for every
// later step of that shape: per-step values (tokens, positions, cache rows, each sequence's
// StepParams) are written before each replay and brought to device memory by the graph's first
// command (graph/step_inputs.h). The blocks a layer is built
// from (its recipe's attention form, the FFN) are free functions of a RecordContext (graph/blocks.h):
// the Transformer owns the arena, the step inputs and the recorded graphs, never a recording mode.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "arch/model_config.h"
#include "arch/projector.h"
#include "buffer.h"
#include "graph/kv_cache.h"
#include "graph/planner.h"
#include "graph/record.h"
#include "graph/step_inputs.h"
#include "graph/weights.h"
#include "ops_attention.h"
#include "ops_position.h"
#include "stream.h"

namespace vkllm {

// One sequence's share of a forward step: tokens at consecutive positions from pos0, stored in
// and attending over KV-cache slot `slot`. The sequences of a step have distinct slots.
struct SeqChunk {
  uint32_t slot = 0;
  uint32_t pos0 = 0;
  std::span<const int32_t> tokens;
  // An image's tokens instead of text (a step of one sequence; tokens then holds n zeros, the id
  // the per-layer embeddings of gemma4 take for embedding rows, as llama.cpp's does): its rows
  // (n, dim) f32, how they attend among themselves, and for M-RoPE the grid they fill (grid_x
  // tokens per row, raster order): token j turns with time p, row p + j / grid_x and column
  // p + j % grid_x, p = pos0 + rope_shift. 0: positions as text tokens'.
  std::span<const float> embd;
  ImageAttention attention = ImageAttention::Causal;
  uint32_t grid_x = 0;
  uint32_t grid_first = 0;  // the image's token that is this chunk's first (an image over several steps)
  // Rope positions run rope_shift apart from cache rows (M-RoPE: an image of nx·ny tokens advances
  // the positions by max(nx, ny)): a text token j turns at pos0 + j + rope_shift.
  int32_t rope_shift = 0;
};

class Transformer {
 public:
  // max_batch: most tokens per forward (prefill chunk); lowered if an activation would not fit
  // one storage-buffer binding. profiling: graphs record GPU timestamps per dispatch.
  // recurrent: the linear-attention layers' states (hybrid models; null for others).
  Transformer(const Context& ctx, const ModelConfig& config, const Weights& weights, KvCache& cache, uint32_t max_batch,
              bool profiling = false, RecurrentCache* recurrent = nullptr);
  ~Transformer();

  // Stores the K/V of every chunk's tokens in its slot and returns its output, valid until the
  // next call: Last: (chunks, vocab) logits, each chunk's last token in batch order; All: (tokens,
  // vocab) logits; Hidden: (tokens, dim), the final-normed hidden states.
  std::span<const float> forward(std::span<const SeqChunk> batch, OutputMode mode);
  // One sequence in slot 0: Last gives the last token's logits (vocab).
  std::span<const float> forward(std::span<const int32_t> tokens, uint32_t pos0, OutputMode mode);
  // The same forward, recorded for this call only, that also copies the activations the blocks
  // tap (attention and FFN inputs and outputs, routing) into `taps`, in graph order.
  std::span<const float> forward_tapped(std::span<const int32_t> tokens, uint32_t pos0, OutputMode mode,
                                        std::vector<Tap>& taps);

  // The softmax probabilities of every head of `layer` over a sequence that starts at position 0
  // in `slot` (attention_capture.cpp): (heads, n, n) f32, element (h, query, key) at
  // (h * n + query) * n + key, 0 for keys after the query. The forward runs in chunks up to that
  // layer's attention, which is followed by ops::attention_probs on the same Q and cached K; the
  // slot's cache is overwritten and layers past `layer` are not run. Recorded afresh per call,
  // never one of the cached graphs, so the normal forward is unchanged.
  std::vector<float> attention_probabilities(std::span<const int32_t> tokens, uint32_t layer, uint32_t slot = 0);
  // The same over a sequence given as chunks that follow one another from position 0 (text runs
  // and images' rows, as steps take them; their slots are `slot`).
  std::vector<float> attention_probabilities(std::span<const SeqChunk> parts, uint32_t layer, uint32_t slot);

  uint32_t max_batch() const { return max_batch_; }
  uint64_t activation_bytes() const;  // arena + attention scratch + logits + step inputs
  const StepInputs& step_inputs() const { return inputs_; }
  uint64_t arena_unshared_bytes() const { return planner_.unshared_bytes(); }
  // GPU time per dispatch of the last forward (profiling only).
  std::vector<KernelTime> last_timings() const;
  // Wall time the last forward waited for the GPU.
  double last_wait_seconds() const;
  size_t graphs_recorded() const { return recorded_; }
  // Dispatches the last forward's graph holds (vkllm bench: dispatches per decoded token).
  size_t last_dispatch_count() const { return last_ ? last_->dispatch_count() : 0; }

  // The activation arena's plan (lifetimes derived from a traced recording at max_batch).
  const ArenaPlanner& arena_plan() const { return planner_; }
  // The commands of the graph for n tokens, traced without recording: with the planned arena,
  // or (unshared) with every activation in a range of its own (planner.unshared_offset) of a
  // placeholder arena. Tests replay both to prove that no live value is clobbered.
  struct Trace {
    std::vector<TracedCommand> commands;
    VkBuffer arena;  // the buffer the activation views name
  };
  Trace trace(uint32_t n, OutputMode mode, bool unshared = false, uint32_t seqs = 1);

 private:
  void declare_activations();
  void plan_arena();
  uint64_t attention_scratch_need() const;                                   // for any step shape
  uint64_t output_floats(uint32_t n, uint32_t seqs, OutputMode mode) const;  // what a step gives back
  void fit_output(uint64_t floats);                                          // grows the output buffer to hold `floats`
  void write_step(std::span<const SeqChunk> batch);                          // the step's host-visible inputs
  bool write_image(std::span<const SeqChunk> batch);                         // an image step's rows
  // The blocks' view of a recording of n tokens of seqs sequences into s (no taps, no capture).
  RecordContext context(Stream& s, uint32_t n, uint32_t seqs, VkBuffer unshared = VK_NULL_HANDLE) const;
  Stream& graph(uint32_t n, uint32_t seqs, OutputMode mode, uint32_t plan_kv,
                ImageAttention image = ImageAttention::Causal, bool embd = false);
  uint32_t one_tile_kv() const;
  void record(const RecordContext& r, OutputMode mode);

  const Context& ctx_;
  const ModelConfig& c_;
  const Weights& w_;
  KvCache& cache_;
  RecurrentCache* recurrent_;
  uint32_t max_batch_;
  bool profiling_;
  ArenaPlanner planner_;
  Acts acts_;
  std::unique_ptr<Buffer> arena_, scratch_, linear_scratch_;
  StepInputs inputs_;
  std::unique_ptr<Buffer> logits_;  // the output (output_floats) f32, host-visible; grown as needed
  struct Graph {
    std::unique_ptr<Stream> stream;
    uint64_t used;  // for least-recently-used eviction
  };
  // By (tokens, sequences, logits mode, plan_kv, input: 0 tokens, else 1 + an image's
  // ImageAttention): steps whose sequences all hold at most short_kv_ keys (one attention tile)
  // replay a graph recorded with plan_kv = short_kv_, without split-K.
  std::map<std::tuple<uint32_t, uint32_t, int, uint32_t, int>, Graph> graphs_;
  std::unique_ptr<Buffer> embd_;  // an image step's rows (max_batch, dim) f32, host-visible; made when first needed
  uint32_t short_kv_ = 0;
  uint64_t uses_ = 0;
  Stream* last_ = nullptr;
  size_t recorded_ = 0;
};

}  // namespace vkllm
