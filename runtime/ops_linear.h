// Kernels of the recurrent layers of hybrid models: Gated DeltaNet linear attention (Qwen3.5/3.6)
// and the Mamba-2 state-space mixer (Nemotron-H, Granite 4.0-H). The causal conv1d with its state
// carried over, the L2 norm of q/k, the gated delta rule (token by token for decode, in chunks of
// 64 for prefill), the gated RMSNorm of the output, the sigmoid output gate of the full-attention
// layers, and the Mamba-2 selective scan. Each has its specification in
// model/reference/linear_attention.h and state_space.h (ref::ssm_conv, ...).
//
// The recurrent ops run over the sequences of a step as flash attention does: `step` holds one
// StepParams per sequence (push.h), whose tokens are consecutive in the batch after those of the
// sequences before it; a sequence reads and writes the state of its slot (`slot`), and one that
// starts at position 0 (pos0 = 0) starts from a zero state instead of reading it.
#pragma once
#include "buffer.h"
#include "stream.h"

namespace vkllm::ops {

// The conv1d of every sequence of the step, + bias where one is bound (Mamba-2's), SiLU applied
// unless silu is false (LFM2's short conv) (ref::ssm_conv per sequence):
//   x (n_tokens, channels): the step's inputs, rows token_stride floats apart (0: channels)
//   w (channels, kernel) f32
//   state (slots, kernel - 1, channels) f32, read and written per the sequence's slot (the slots
//         the view holds: a sequence whose slot lies outside it is skipped)
//   y (n_tokens, channels) packed
// kernel: 2 to 8. One thread per channel walks each sequence's tokens.
struct SsmConvParams {
  uint32_t n_tokens = 0, seqs = 1;
  uint32_t channels = 0, kernel = 4;
  uint32_t token_stride = 0;
  bool silu = true;
  // LFM2's gated short conv: x's rows hold b, c and x (channels each, token_stride at least 3 ·
  // channels); the conv runs over b · x (the state keeps those) and y = c · conv.
  bool gated = false;
};
void ssm_conv(Stream& s, BufferView x, BufferView w, BufferView state, BufferView step, BufferView y,
              const SsmConvParams& p, BufferView bias = {});

// y = x / sqrt(sum x^2 + eps) over rows of `width` (ref::l2_norm): n_tokens x heads rows, row
// (t, h) at offset + t * token_stride + h * width floats of x and of y; y may be x.
struct L2NormParams {
  uint32_t n_tokens = 0, heads = 0, width = 0;
  uint32_t token_stride = 0;  // 0: heads * width
  uint32_t offset = 0;
  float eps = 1e-6f;
};
void l2_norm(Stream& s, BufferView x, BufferView y, const L2NormParams& p);

// The gated delta rule of every sequence of the step (ref::delta_rule per sequence):
//   qkv: the conv output, token t's q heads at q_offset + t * qk_stride, its k heads at
//        k_offset + t * qk_stride, its v heads at v_offset + t * qk_stride (floats; heads packed)
//   alpha, beta (n_tokens, h_v): the raw projections (the kernel applies softplus/sigmoid)
//   dt_bias, a (h_v) f32
//   state (slots, h_v, s, s) f32, read and written per the sequence's slot (the slots the view
//        holds: a sequence whose slot lies outside it is skipped)
//   o (n_tokens, h_v, s) packed
//   scratch: at least delta_rule_scratch_bytes(p) bytes (an empty view when that is 0)
// chunked: the chunked (WY) form, chunks of 64 tokens of one sequence, for prefill; it gives what
// the token-by-token form gives (within f32 rounding), for any mix of sequence lengths (1-token
// sequences too). Two kernels: delta_rule_prep (per chunk and value head, the state-independent
// triangular solve into scratch) and delta_rule_chunk (per block of value rows, the chunks of a
// sequence in order); see shaders/delta_rule_prep.comp. Not chunked: one kernel, token by token
// (shaders/delta_rule.comp), no scratch.
// s: a multiple of 4, at most 256; h_v a multiple of h_k (value head h reads key head h % h_k).
// The sequences of a step are in distinct slots. On a device with a loop iteration limit
// (lavapipe) the tokens of one call are bounded, an Error naming the limit: at s = 128 about 1400
// token by token and 2500 chunked (llvmpipe profile).
struct DeltaRuleParams {
  uint32_t n_tokens = 0, seqs = 1;
  uint32_t h_k = 0, h_v = 0, s = 0;
  uint32_t qk_stride = 0, q_offset = 0, k_offset = 0, v_offset = 0;
  bool chunked = false;
};
constexpr uint32_t kDeltaRuleChunk = 64;  // tokens per chunk of the chunked form
// Scratch bytes delta_rule() needs: 0 unless chunked, else (chunks) * h_v * (2 * 64^2 + 64) * 4
// with chunks = ceil(n_tokens / 64) + min(seqs, n_tokens) - 1 (any split of the tokens into
// sequences), about 33 KB per chunk and value head.
uint64_t delta_rule_scratch_bytes(const DeltaRuleParams& p);
void delta_rule(Stream& s, BufferView qkv, BufferView alpha, BufferView beta, BufferView dt_bias, BufferView a,
                BufferView state, BufferView step, BufferView o, BufferView scratch, const DeltaRuleParams& p);

// y(rows, width) = rmsnorm(x) * w(width) * silu(z) per row (ref::gated_rmsnorm); y may be x.
void gated_rmsnorm(Stream& s, BufferView x, BufferView w, BufferView z, BufferView y, uint32_t rows, uint32_t width,
                   float eps);

// The Mamba-2 selective scan of every sequence of the step (ref::ssm_scan per sequence), token by
// token:
//   xbc: the conv output, token t's x (heads, head_dim) at t * x_stride, its B and C (groups,
//        state) at b_offset and c_offset from there
//   proj: the input projection, token t's dt (heads) at t * dt_stride + dt_offset and its gate z
//        (heads, head_dim) at t * dt_stride + z_offset (no gate: gate = false)
//   dt_bias, a, d (heads) f32
//   state (slots, heads, head_dim, state) f32, read and written per the sequence's slot (the
//        slots the view holds: a sequence whose slot lies outside it is skipped)
//   y (n_tokens, heads, head_dim) packed
// state: a multiple of 4 up to 256; heads a multiple of groups. On a device with a loop iteration
// limit (lavapipe) the tokens of one call are bounded, an Error naming the limit.
struct SsmScanParams {
  uint32_t n_tokens = 0, seqs = 1;
  uint32_t heads = 0, head_dim = 0, state = 0, groups = 1;
  uint32_t x_stride = 0, b_offset = 0, c_offset = 0;
  uint32_t dt_stride = 0, dt_offset = 0, z_offset = 0;
  bool gate = true;
};
void ssm_scan(Stream& s, BufferView xbc, BufferView proj, BufferView dt_bias, BufferView a, BufferView d,
              BufferView state, BufferView step, BufferView y, const SsmScanParams& p);

// y(n) = x * sigmoid(g) (ref::sigmoid_mul); y may be x.
void sigmoid_mul(Stream& s, BufferView x, BufferView g, BufferView y, uint32_t n);

}  // namespace vkllm::ops
