// The blocks a forward graph is recorded from, free functions of one RecordContext: embeddings,
// each layer's attention (standard, latent) and FFN (dense, mixture of experts), the logits; and
// the shared pieces they are made of. Which block a layer uses is its architecture's recipe and
// its weights (model/arch/, graph/weights.h). blocks.cpp: attention and dense FFN; blocks_moe.cpp:
// mixture of experts; blocks_latent.cpp: MLA; blocks_linear.cpp: Gated DeltaNet; blocks_model.cpp:
// embeddings, layers, logits.
#pragma once
#include <cstdint>

#include "graph/record.h"
#include "ops_attention.h"
#include "ops_position.h"

namespace vkllm::blocks {

// The whole graph of a step, or its parts.
void embeddings(const RecordContext& r);
// Layer l's attention, then (with `ffn`; the attention capture stops before it) its FFN or MoE.
void layer(const RecordContext& r, uint32_t l, bool ffn = true);
void output(const RecordContext& r, OutputMode mode);

// The blocks.
void attention(const RecordContext& r, const AttentionWeights& w, uint32_t l);
void latent_attention(const RecordContext& r, const LatentAttentionWeights& w, uint32_t l);
void linear_attention(const RecordContext& r, const LinearAttentionWeights& w, uint32_t l);
void mamba2(const RecordContext& r, const Mamba2Weights& w, uint32_t l);  // blocks_mamba.cpp
void short_conv(const RecordContext& r, const ShortConvWeights& w, uint32_t l);
void ffn(const RecordContext& r, const FfnWeights& w, uint32_t l);
void moe(const RecordContext& r, const MoeWeights& w, uint32_t l);

// The input of a block's projections: x itself, or with `norm` rmsnorm(x)·norm, which the matvec
// kernel reads in as it goes (ops::MatmulFusion::norm): the norm then costs no dispatch.
struct ProjIn {
  BufferView x;
  const Tensor* norm = nullptr;
};
// The input of a block whose first op is the RMSNorm `norm` of the residual stream: fused into
// the projections where they run on the matvec kernel (decode) and no tap wants the normed
// values, else normed into the h activation (tapped as `tap`; the arena's planning trace takes
// this path).
ProjIn normed_input(const RecordContext& r, const Tensor& norm, uint32_t l, const char* tap);

// Shared pieces. y = x · wᵀ (+ bias) for n rows.
void project(const RecordContext& r, const Tensor& w, BufferView x, BufferView y, uint32_t n,
             const Tensor* bias = nullptr);
void project(const RecordContext& r, const Tensor& w, const ProjIn& in, BufferView y, uint32_t n,
             const Tensor* bias = nullptr);
// x += out (n rows of dim), a block's output into the residual stream, times Granite's residual
// multiplier where the model has one.
void add_residual(const RecordContext& r, BufferView out);
// x += post_norm(in · wᵀ) (times the residual multiplier), a block's last projection into the
// residual stream; `name` is its tap.
void block_output(const RecordContext& r, const Tensor& w, const Tensor* post_norm, BufferView in, uint32_t l,
                  const char* name, const Tensor* bias = nullptr);
// act(gate(h) (+ gate_bias)) ⊙ (up(h) (+ up_bias)) for the step's tokens, into the gate activation
// (which it returns).
BufferView gated_hidden(const RecordContext& r, const Tensor& gate, const Tensor& up, const ProjIn& h, uint32_t hidden,
                        const Tensor* gate_bias = nullptr, const Tensor* up_bias = nullptr);
// act(up(h) (+ up_bias)) for an FFN without a gate (the squared ReLU), into the gate activation.
BufferView ungated_hidden(const RecordContext& r, const Tensor& up, const ProjIn& h, uint32_t hidden,
                          const Tensor* up_bias = nullptr);
// out = down(gated_hidden(h)); without a gate (null) down(ungated_hidden(h)).
void gated(const RecordContext& r, const Tensor* gate, const Tensor& up, const Tensor& down, BufferView h,
           BufferView out, uint32_t hidden);
// Rotates x (n, heads, head_dim; tokens token_stride floats apart) in place as layer l rotates.
void rope(const RecordContext& r, BufferView x, uint32_t heads, uint32_t head_dim, uint32_t token_stride, uint32_t l);
// Layer l's attention over the cache for the step (n tokens of seqs sequences, each over its own
// slot): its scale, window and soft-cap.
ops::AttentionShape attention_shape(const RecordContext& r, uint32_t l, uint32_t kv_heads, uint32_t dk, uint32_t dv);
// After layer l's attention over keys k (with sinks, if any): its probabilities, when this is a
// capture of layer l.
void capture_probs(const RecordContext& r, const ops::AttentionShape& shape, BufferView q, BufferView k, uint32_t l,
                   BufferView sinks = {});

}  // namespace vkllm::blocks
