// One recording of the forward graph, as the blocks see it: the model, its weights and caches,
// the activation arena and the step's input buffers (what every recording shares), and what this
// recording is for: the step's tokens and sequences, and at most one of taps (VKLLM_CHECK), an
// attention capture, or tracing with every activation in a range of its own (arena planning).
// The blocks (graph/blocks.h) are free functions of a RecordContext, so the Transformer holds no
// recording modes between calls.
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "arch/model_config.h"
#include "arch/projector.h"
#include "buffer.h"
#include "graph/kv_cache.h"
#include "graph/planner.h"
#include "graph/recurrent_cache.h"
#include "graph/step_inputs.h"
#include "graph/weights.h"
#include "stream.h"

namespace vkllm {

class Context;

// What a step gives back. Last: the logits of each sequence's last token of the step; All: of
// every token; Hidden: every token's final-normed hidden state, the output projection skipped
// (embeddings: the caller pools them per sequence).
enum class OutputMode { Last, All, Hidden };

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

// A tap while its forward runs: the host buffer the graph copies it into.
struct TapCopy {
  Tap tap;
  std::unique_ptr<Buffer> host;
};

// The attention capture: layer `layer`'s probabilities of the step's queries over n_keys keys.
struct Capture {
  uint32_t layer = 0;
  BufferView out;  // (heads, n, n_keys) f32
  uint32_t n_keys = 0;
};

// Planner ids of the activation tensors, each sized for the most tokens a step may have.
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
  // gate and up products (B·k, F) each, gate then up (one product writes both for fused experts),
  // and down (B·k, dim) products, the shared expert's gate logit (B)
  int logits = -1, ids = -1, weights = -1, plan = -1, exp_gate_up = -1, exp_down = -1, shared_gate = -1;
  int moe_out = -1;  // (B, dim) the experts' weighted sum, normed apart (gemma4) or scaled (Granite)
  // gemma4's per-layer embeddings: every layer's inputs (B, n_layers · P), the table's rows while
  // they are made, and per layer the gate and this layer's inputs (B, P), P = per_layer_embd
  int per_layer = -1, per_layer_tok = -1, per_layer_h = -1, per_layer_in = -1;
  // Gated attention: the doubled query projection (B, 2·H·hd) is `q`; the gate (B, H·hd)
  int attn_gate = -1;
  // Linear attention: q|k|v before and after the conv (B, channels), the output gate z and the
  // output (B, v_heads·s), the raw alpha and beta (B, v_heads)
  int lin_qkv = -1, lin_conv = -1, lin_z = -1, lin_o = -1, lin_alpha = -1, lin_beta = -1;
  // Mamba-2: the input projection z | xBC | dt, the conv's output (B, conv channels), the scan's
  // output y (B, inner); MoE at a latent width: the experts' input (B, latent)
  int ssm_proj = -1, ssm_xbc = -1, ssm_y = -1, moe_latent = -1;
  // LFM2's short conv: b|c|x (B, 3·dim) and the gated conv's output (B, dim)
  int sc_bcx = -1, sc_y = -1;
  uint64_t qkv_offsets[3] = {0, 0, 0};  // bytes of the q, k and v parts into qkv
};

struct RecordContext {
  // What every recording shares.
  Stream& s;
  const Context& ctx;
  const ModelConfig& c;
  const Weights& w;
  KvCache& cache;
  RecurrentCache* recurrent;  // the linear layers' states; null for a model without them
  const Acts& acts;
  const ArenaPlanner& planner;
  const Buffer* arena;           // null while tracing unshared
  const StepInputs& in;          // the step's token ids, positions, cache rows, StepParams (graph/step_inputs.h)
  const Buffer* scratch;         // attention's split-K partials; null when no step needs them
  const Buffer* linear_scratch;  // the chunked delta rule's per-chunk matrices (hybrid models)
  const Buffer& logits;          // (rows, vocab) f32, host-visible; Hidden: (n, dim)
  // What this recording is for.
  uint32_t n = 0;                        // tokens of the step
  uint32_t seqs = 1;                     // sequences of the step (one per KV-cache slot)
  uint32_t plan_kv = 0;                  // > 0: no replay has a sequence with more keys (plans split-K)
  VkBuffer unshared = VK_NULL_HANDLE;    // tracing: act() gives views into this placeholder
  std::vector<TapCopy>* taps = nullptr;  // a tapped forward: the activations to copy out
  const Capture* capture = nullptr;      // an attention capture
  // An image's rows in place of token embeddings (one sequence; its rows in `embd`, (n, dim) f32),
  // and how its tokens attend among themselves.
  const Buffer* embd = nullptr;
  ImageAttention image_attention = ImageAttention::Causal;

  // `bytes` from `offset` into activation `id` (for the n tokens of this step).
  BufferView act(int id, uint64_t bytes, uint64_t offset = 0) const;
  // Floats of activation id for this step's n tokens, `per_token` each.
  BufferView act_rows(int id, uint64_t per_token) const { return act(id, 4ull * n * per_token); }
  // The step's positions; a sectioned rope's with every section (StepInputs::section_positions).
  BufferView positions() const {
    const uint32_t* s = c.rope.sections;
    return s[0] + s[1] + s[2] + s[3] ? in.section_positions() : in.positions(n);
  }
  BufferView kv_rows() const { return in.kv_rows(n); }
  BufferView step_params() const { return in.step(seqs); }
  BufferView scratch_view() const { return scratch ? scratch->view() : BufferView{}; }
  // Copies (rows, width) floats of v to the host when this is a tapped forward; else nothing.
  void tap(int layer, const char* name, BufferView v, uint32_t rows, uint32_t width) const;
};

}  // namespace vkllm
