// Attention: flash attention (tiled online softmax in shared memory, prefill and split-K decode)
// for MHA, GQA, MQA and MLA, the naive baseline that writes the score matrix to memory, and the
// probabilities of one sequence written out on request (the attention capture).
// See ops.h for the conventions; the math and the recurrence are in shaders/flash_attn.glsl.
#pragma once
#include "buffer.h"
#include "caps.h"
#include "dtype.h"
#include "stream.h"

namespace vkllm {
class Context;
}

namespace vkllm::ops {

// What one attention call computes, fixed when it is recorded. Per-step values come from the
// step buffer instead: one StepParams per sequence (`seqs` of them). Sequence s owns the next
// seqs[s].n_tokens query tokens of the batch; its token r sits at absolute position
// seqs[s].pos0 + r and sees keys 0 .. seqs[s].n_kv - 1 (clamped to max_kv) of its slot.
//   q: (n_q, n_heads, dk) f32, element (r, h, i) at r * q_row_stride + h * dk + i
//   o: (n_q, n_heads, dv) f32, element (r, h, i) at r * o_row_stride + h * dv + i
//   k: element (kv head g, key t of slot z, i) at g * k_head_stride + (z * max_kv + t) *
//      k_row_stride + i, of kv_type
//   v: likewise with the v_ strides (may be a view of k: MLA passes V = the first dv elements
//      of each K row, same buffer and strides)
// Query head h uses KV head h / (n_heads / n_kv_heads). The KV cache ([n_kv_heads][kv_slots *
// n_ctx][d]) has head stride kv_slots * n_ctx * d and row stride d.
struct AttentionShape {
  uint32_t n_q = 1;       // query tokens of all sequences
  uint32_t seqs = 1;      // StepParams entries (sequences; unused entries have n_tokens 0)
  uint32_t seq_q = 0;     // most query tokens one sequence has (0: n_q); plans the row tile
  uint32_t kv_slots = 1;  // slots of max_kv keys the K/V bindings hold
  uint32_t n_heads = 1, n_kv_heads = 1;
  uint32_t dk = 0, dv = 0;
  uint32_t q_row_stride = 0, o_row_stride = 0;   // 0: n_heads * dk and n_heads * dv
  uint32_t k_head_stride = 0, k_row_stride = 0;  // 0: kv_slots * max_kv * dk and dk
  uint32_t v_head_stride = 0, v_row_stride = 0;  // 0: kv_slots * max_kv * dv and dv
  DType kv_type = DType::F16;                    // F16, F32, or Q8_0 / Q4_0 (element e in block e / 32; flash only)
  float scale = 0;                               // 0: 1 / sqrt(dk)
  bool causal = true;                            // key t visible to a query at position q only if t <= q
  uint32_t window = 0;                           // > 0: also only if q - t < window; 0: no sliding window
  float softcap = 0;          // > 0: a score s = q.k * scale becomes softcap * tanh(s / softcap) (flash, probs)
  uint32_t max_kv = 0;        // upper bound on n_kv (a slot's capacity): sizes K/V, plans splits
  uint32_t plan_kv = 0;       // > 0: no step run with this plan has n_kv above it (plans splits; 0: max_kv)
  uint32_t force_splits = 0;  // tests and benchmarks: this split count instead of the planned one
  // Tests: this tile (query rows, keys, threads) instead of the planned one, so a shape planned
  // for another device runs here; it must fit this device (else attention_plan throws).
  uint32_t force_br = 0, force_bc = 0, force_wg = 0;
};

// Tile sizes and split count one call runs with (specialization constants and grid).
struct AttentionPlan {
  uint32_t br = 0;      // query rows per workgroup (rows: (token, head) pairs of one KV group)
  uint32_t bc = 0;      // keys per tile
  uint32_t wg = 0;      // threads per workgroup
  uint32_t splits = 1;  // key splits (split-K); 1: one pass writes O directly
  bool subgroup = false;
  uint32_t shared_bytes = 0;
};

// Rule: br is the profile's attn_br, lowered to the rows one sequence has in a KV group (seq_q *
// n_heads / n_kv_heads) and so that each thread keeps at most 64 output accumulators; then bc and br are
// halved (the larger first) until the tiles fit the device's shared memory; wg shrinks to
// br * bc threads when that is fewer (not below the widest subgroup). Split-K (decode)
// is used when the query blocks (of seq_q-token sequences) give fewer workgroups than the target,
// attention_target_workgroups(caps, profile): attn_wgs_per_cu per compute unit where the device
// reports its compute units, else the profile's attn_target_wgs; and max_kv holds at least two splits of attn_split_min
// keys: splits = enough workgroups to reach the target, at most max_kv / attn_split_min and 64; no split at all when
// plan_kv keys fit one tile. The split count depends on max_kv or plan_kv (record time), never on step.n_kv, so the
// graph can be replayed for every step within plan_kv; each split takes its share of
// the runtime key range. On a device with a loop iteration limit (lavapipe, DeviceCaps) the
// split count is raised, forced or not, until each workgroup's loops stay well under it.
// The plan depends only on the device description and the profile, so tests can plan for a
// device that is not here (tests/device_descriptions.h); the Context overload plans for its own.
AttentionPlan attention_plan(const DeviceCaps& caps, const Profile& prof, const AttentionShape& shape);
AttentionPlan attention_plan(const Context& ctx, const AttentionShape& shape);

// Bytes of the scratch buffer attention() needs for split-K partials (0: none); planned for a
// device description and profile, or for the Context's own.
uint64_t attention_scratch_bytes(const DeviceCaps& caps, const Profile& prof, const AttentionShape& shape);
uint64_t attention_scratch_bytes(const Context& ctx, const AttentionShape& shape);
// Zeroes a new scratch buffer, as attention() needs it before its first use (one submit).
void clear_attention_scratch(const Context& ctx, const Buffer& scratch);

// o = softmax(q k^T * scale + mask) v, flash attention. step: `seqs` StepParams. scratch:
// at least attention_scratch_bytes(); may be an empty view when that is 0; it must hold zeros
// before its first use (Stream::fill), and split-K leaves its counters at zero again. K/V are read two
// elements at a time: dk, dv and the K/V strides must be even (Q8_0/Q4_0: multiples of 32, so
// every row starts a block; the tile loader dequantises as it fills shared memory).
// sinks: (n_heads) f32 attention-sink logits (natural log, not scaled): each joins its heads'
// softmax denominator and weighs no value (gpt-oss); an empty view: none.
void attention(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView v, BufferView step,
               BufferView o, BufferView scratch, BufferView sinks = {});

// Bytes of the score matrix the naive path writes: n_heads * n_q * max_kv f32.
uint64_t attention_naive_scratch_bytes(const AttentionShape& shape);

// The same result through a score matrix in device memory (baseline for tests and benchmarks),
// for one sequence in slot 0 (seqs == 1), f16 or f32 K/V only. Throws when the scores do not fit
// one storage buffer binding of this device.
void attention_naive(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView v, BufferView step,
                     BufferView o, BufferView scores, BufferView sinks = {});

// Bytes of attention_probs' output: n_heads * n_q * n_keys f32.
uint64_t attention_probs_bytes(const AttentionShape& shape, uint32_t n_keys);

// The softmax probabilities attention() weights V with, written out (for visualisation), from
// the same Q, K, scale and masks as attention() with this shape; any KV type; one sequence
// (seqs == 1, its StepParams in step). out: (n_heads, n_q, n_keys) f32, element (h, r, t) at
// (h * n_q + r) * n_keys + t; keys masked or at or past the step's n_kv give 0, keys past
// n_keys are not reported. Throws when out does not fit one binding, or (on a device with a
// loop iteration limit) when a row is too long for one workgroup's loops.
void attention_probs(Stream& s, const AttentionShape& shape, BufferView q, BufferView k, BufferView step,
                     BufferView out, uint32_t n_keys, BufferView sinks = {});

}  // namespace vkllm::ops
