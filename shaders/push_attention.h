// Push constants of the attention kernels (included by push.h; plain structs only).
// Per-step values (each sequence's pos0, n_tokens, n_kv, slot) are NOT here: kernels read them
// from the StepParams entries so a recorded decode graph replays for the next token unchanged.

// Flash attention and the naive baseline. Element (token t, head h, i) of Q is at
// t * q_row_stride + h * dk + i, of O at t * o_row_stride + h * dv + i; K element (kv head g,
// key position t of the sequence in `slot`, i) at g * k_head_stride + (slot * max_kv + t) *
// k_row_stride + i, V likewise (all in elements). Query head h reads KV head h / (n_heads /
// n_kv_heads).
struct AttentionPush {
  uint n_q;         // query tokens of all sequences (sequence s: seqs[s].n_tokens of them at
                    // positions seqs[s].pos0 ..)
  uint n_heads;     // query heads
  uint n_kv_heads;  // divides n_heads
  uint dk;          // Q/K head dim (flash: also a specialization constant)
  uint dv;          // V/O head dim
  uint q_row_stride;
  uint o_row_stride;
  uint k_head_stride;
  uint k_row_stride;
  uint v_head_stride;
  uint v_row_stride;
  uint max_kv;         // keys one KV-cache slot holds; each sequence's n_kv is clamped to it
  float scale_log2;    // softmax scale * log2(e): scores are kept in the base-2 domain
  uint causal;         // 1: key t visible to the query at position q only if t <= q
  uint window;         // > 0: key t visible only if q - t < window (sliding window)
  uint n_splits;       // flash: 1 writes O; > 1 writes split-K partials for the merge pass
  uint v_from_k;       // flash: 1 when V is the first dv elements of each K row (MLA), so
                       // the K tile in shared memory serves as the V tile
  float softcap_log2;  // flash: > 0: score = softcap_log2 * tanh(q.k * scale_log2), where then
                       // scale_log2 = scale / cap and softcap_log2 = cap * log2(e) (gemma2)
  uint n_seqs;         // StepParams entries (flash; the naive baseline reads the first only)
  uint has_sinks;      // 1: sinks[head] (natural log) joins each row's softmax denominator and
                       // weighs no value (gpt-oss); flash: split 0 starts from it
};

// Attention probabilities of one sequence (the capture for `vkllm attention`): the softmax of
// each (query head, query token) row over the keys, as the forward's attention computes them.
// Q, K, the masks and the scale are those of AttentionPush (the same layouts); row (h, r) of the
// output is element (h * n_q + r) * n_keys + t for key t, 0 where t is masked or past n_kv.
struct AttentionProbsPush {
  uint n_q;         // query tokens (the step's one sequence: StepParams entry 0)
  uint n_heads;     // query heads
  uint n_kv_heads;  // divides n_heads
  uint dk;          // Q/K head dim
  uint q_row_stride;
  uint k_head_stride;
  uint k_row_stride;
  uint max_kv;       // keys one KV-cache slot holds (K rows of slot z start at z * max_kv)
  float scale_log2;  // softmax scale * log2(e), or scale / cap with a soft-cap (as in AttentionPush)
  uint causal;
  uint window;
  uint n_keys;         // output row length (keys reported per query; at least the step's n_kv)
  float softcap_log2;  // > 0: score = softcap_log2 * tanh(q.k * scale_log2) (gemma2), as in flash
  uint has_sinks;      // as in AttentionPush: the sink's share of a row is 1 - its sum
};
