// Transformer: the multi-layer pre-norm decoder as GPU dispatches. A forward step takes the
// tokens of one or several sequences (decode tokens of running ones, prefill chunks of new ones):
// every matmul sees all tokens of the step, attention runs per sequence over its own KV-cache
// slot. One graph (a recorded Stream) per (tokens, sequences, logits mode), replayed for every
// later step of that shape: per-step values (tokens, positions, cache rows, each sequence's
// StepParams) live in small host-visible buffers the graph reads. The blocks a layer is built
// from (its recipe's attention form, the FFN) are recorded in blocks.cpp.
#pragma once
#include <cstdint>
#include <map>
#include <memory>
#include <span>
#include <string>
#include <tuple>
#include <vector>

#include "arch/model_config.h"
#include "buffer.h"
#include "graph/kv_cache.h"
#include "graph/planner.h"
#include "graph/weights.h"
#include "ops_attention.h"
#include "ops_position.h"
#include "stream.h"

namespace vkllm {

// Last: the logits of each sequence's last token of the step; All: of every token.
enum class LogitsMode { Last, All };

// An activation of a forward pass copied to the host for checking against the reference model
// (VKLLM_CHECK, `vkllm logits --check`): (rows, width) floats, token-major. layer -1: before the
// first layer. Names follow llama.cpp's graph callbacks (docs/decisions.md, issue 16);
// ffn_moe_topk holds the chosen expert ids as i32 bit patterns (the reference emits no such tap).
struct Tap {
  int layer = -1;
  std::string name;
  uint32_t rows = 0, width = 0;
  std::vector<float> values;
};

// One sequence's share of a forward step: tokens at consecutive positions from pos0, stored in
// and attending over KV-cache slot `slot`. The sequences of a step have distinct slots.
struct SeqChunk {
  uint32_t slot = 0;
  uint32_t pos0 = 0;
  std::span<const int32_t> tokens;
};

class Transformer {
 public:
  // max_batch: most tokens per forward (prefill chunk); lowered if an activation would not fit
  // one storage-buffer binding. profiling: graphs record GPU timestamps per dispatch.
  Transformer(const Context& ctx, const ModelConfig& config, const Weights& weights, KvCache& cache, uint32_t max_batch,
              bool profiling = false);
  ~Transformer();

  // Stores the K/V of every chunk's tokens in its slot and returns logits, valid until the next
  // call: Last: (chunks, vocab), each chunk's last token in batch order; All: (tokens, vocab).
  std::span<const float> forward(std::span<const SeqChunk> batch, LogitsMode mode);
  // One sequence in slot 0: Last gives the last token's logits (vocab).
  std::span<const float> forward(std::span<const int32_t> tokens, uint32_t pos0, LogitsMode mode);
  // The same forward, recorded for this call only, that also copies the activations the blocks
  // tap (attention and FFN inputs and outputs, routing) into `taps`, in graph order.
  std::span<const float> forward_tapped(std::span<const int32_t> tokens, uint32_t pos0, LogitsMode mode,
                                        std::vector<Tap>& taps);

  // The softmax probabilities of every head of `layer` over a sequence that starts at position 0
  // in `slot` (attention_capture.cpp): (heads, n, n) f32, element (h, query, key) at
  // (h * n + query) * n + key, 0 for keys after the query. The forward runs in chunks up to that
  // layer's attention, which is followed by ops::attention_probs on the same Q and cached K; the
  // slot's cache is overwritten and layers past `layer` are not run. Recorded afresh per call,
  // never one of the cached graphs, so the normal forward is unchanged.
  std::vector<float> attention_probabilities(std::span<const int32_t> tokens, uint32_t layer, uint32_t slot = 0);

  uint32_t max_batch() const { return max_batch_; }
  uint64_t activation_bytes() const;  // arena + attention scratch + logits + step inputs
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
  Trace trace(uint32_t n, LogitsMode mode, bool unshared = false, uint32_t seqs = 1);

 private:
  // Planner ids of the activation tensors, each sized for max_batch tokens.
  struct Acts {
    int x = -1;              // (B, dim) the residual stream, alive throughout
    int h = -1;              // (B, dim) normed input of a block
    int q = -1;              // (B, H·hd) (MLA)
    int qkv = -1;            // (B, H·hd), (B, G·hd), (B, G·vd) at qkv_offset(0, 1, 2)
    int attn = -1;           // (B, H·vd) attention output
    int proj = -1;           // (B, dim) a block's output before the residual add
    int gate = -1, up = -1;  // (B, hidden)
    // MLA: compressed query, latent row, its two parts, the absorbed query and latent output
    int qa = -1, kv = -1, c = -1, kpe = -1, qpe = -1, qcat = -1, olat = -1;
    // MoE: router logits then scores (B, E), chosen ids and weights (B, k), the plan, the experts'
    // gate/up (B·k, F) and down (B·k, dim) products, the shared expert's gate logit (B)
    int logits = -1, ids = -1, weights = -1, plan = -1, exp_gate = -1, exp_up = -1, exp_down = -1, shared_gate = -1;
  };
  void declare_activations();
  void plan_arena();
  BufferView act(int id, uint64_t bytes, uint64_t offset = 0) const;  // bytes from offset into id
  uint64_t qkv_offset(int part) const;
  uint64_t attention_scratch_need() const;           // for any step shape
  void fit_logits(uint32_t rows);                    // grows the logits buffer to `rows` rows
  void write_step(std::span<const SeqChunk> batch);  // the step's host-visible inputs
  Stream& graph(uint32_t n, uint32_t seqs, LogitsMode mode);
  void record(Stream& s, uint32_t n, uint32_t seqs, LogitsMode mode);
  void record_logits(Stream& s, uint32_t n, LogitsMode mode);
  void record_embeddings(Stream& s, uint32_t n);
  void record_layer(Stream& s, uint32_t layer, uint32_t n, bool ffn);
  // The attention capture: a graph of layers 0 .. capture.layer for n tokens of one sequence.
  struct Capture {
    uint32_t layer = 0;
    BufferView out;  // (heads, n, n_keys) f32
    uint32_t n_keys = 0;
  };
  void record_capture(Stream& s, uint32_t n, const Capture& capture);
  // After layer l's attention: its probabilities, when a capture of layer l is being recorded.
  void capture_probs(Stream& s, const ops::AttentionShape& shape, BufferView q, uint32_t l);
  // Attention over the cache for the step being recorded (n tokens of seqs_ sequences).
  ops::AttentionShape attention_shape(uint32_t n, uint32_t kv_heads, uint32_t dk, uint32_t dv) const;
  // The shared blocks (blocks.cpp).
  void record_attention(Stream& s, const AttentionWeights& w, uint32_t layer, uint32_t n);
  void record_latent_attention(Stream& s, const LatentAttentionWeights& w, uint32_t layer, uint32_t n);
  void record_ffn(Stream& s, const FfnWeights& w, uint32_t layer, uint32_t n);
  void record_moe(Stream& s, const MoeWeights& w, uint32_t layer, uint32_t n);  // blocks_moe.cpp
  void gated(Stream& s, const Tensor& gate, const Tensor& up, const Tensor& down, BufferView h, BufferView out,
             uint32_t n, uint32_t hidden);
  void project(Stream& s, const Tensor& w, BufferView x, BufferView y, uint32_t n, const Tensor* bias = nullptr);
  void block_output(Stream& s, const Tensor& w, const Tensor* post_norm, BufferView in, uint32_t n, uint32_t layer,
                    const char* name);
  void project_qkv(Stream& s, const AttentionWeights& w, BufferView h, uint32_t n);
  BufferView gated_hidden(Stream& s, const Tensor& gate, const Tensor& up, BufferView h, uint32_t n, uint32_t hidden);
  void rope(Stream& s, BufferView x, uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride,
            uint32_t layer);
  void rope_qk(Stream& s, BufferView q, BufferView k, uint32_t n, uint32_t H, uint32_t G, uint32_t hd, uint32_t layer);
  ops::RopeParams rope_params(uint32_t n, uint32_t heads, uint32_t head_dim, uint32_t token_stride,
                              uint32_t layer) const;
  // Copies (rows, width) floats of `v` to the host when recording a tapped forward; else nothing.
  void tap(Stream& s, int layer, const char* name, BufferView v, uint32_t rows, uint32_t width);

  const Context& ctx_;
  const ModelConfig& c_;
  const Weights& w_;
  KvCache& cache_;
  uint32_t max_batch_;
  bool profiling_;
  ArenaPlanner planner_;
  VkBuffer unshared_ = VK_NULL_HANDLE;  // while tracing unshared: act() gives views into this placeholder
  Acts acts_;
  struct Tapped {
    Tap tap;
    std::unique_ptr<Buffer> host;
  };
  std::vector<Tapped>* tapping_ = nullptr;  // while recording a tapped forward
  std::unique_ptr<Buffer> arena_, scratch_;
  // Step inputs, host-visible: per token its id, position and KV-cache row (slot * n_ctx +
  // position); per sequence its StepParams and the batch index of its last token.
  Buffer tokens_, positions_, kv_rows_, step_, last_rows_;
  std::unique_ptr<Buffer> logits_;    // (rows, vocab) f32, host-visible; grown for LogitsMode::All
  uint32_t seqs_ = 1;                 // sequences of the step being recorded
  const Capture* capture_ = nullptr;  // set while a capture graph is being recorded
  struct Graph {
    std::unique_ptr<Stream> stream;
    uint64_t used;  // for least-recently-used eviction
  };
  std::map<std::tuple<uint32_t, uint32_t, int>, Graph> graphs_;  // by (tokens, sequences, logits mode)
  uint64_t uses_ = 0;
  Stream* last_ = nullptr;
  size_t recorded_ = 0;
};

}  // namespace vkllm
