// Push constants of the linear-attention (Gated DeltaNet) kernels (included by push.h):
// ssm_conv, l2_norm and the delta rule. gated_rmsnorm uses NormPush, sigmoid_mul UnaryPush.
// The recurrent kernels walk the step's StepParams entries (push.h): sequence s owns the next
// seqs[s].n_tokens tokens of the batch and the state of its slot; pos0 = 0 starts from zeros.

// Causal depthwise conv1d with SiLU over every sequence (the kernel size K is a specialization
// constant): x row t at t * token_stride, y (n_tokens, channels) packed, w (channels, K), state
// (slots, K - 1, channels).
struct SsmConvPush {
  uint n_tokens;  // tokens of all sequences (a bound: entries past it are clipped)
  uint n_seqs;
  uint channels;
  uint token_stride;
  uint slots;  // slots the state binding holds (sequences in other slots are skipped)
};

// y = x / sqrt(sum x^2 + eps) over rows (t, h) of `width`, row (t, h) at offset + t *
// token_stride + h * width of x and of y.
struct L2NormPush {
  uint rows;  // n_tokens * heads
  uint heads;
  uint width;
  uint token_stride;
  uint offset;
  float eps;
};

// The gated delta rule (the head size S is a specialization constant). qkv: token t's q heads at
// q_offset + t * qk_stride, k heads at k_offset + t * qk_stride, v heads at v_offset + t *
// qk_stride (heads packed); alpha, beta (n_tokens, h_v); state (slots, h_v, S, S); o (n_tokens,
// h_v, S). Value head h reads key head h % h_k. The chunked kernels also use max_chunks, the
// chunks the scratch buffer holds (delta_rule_prep.comp).
struct DeltaRulePush {
  uint n_tokens;  // tokens of all sequences (a bound: entries past it are clipped)
  uint n_seqs;
  uint h_k;
  uint h_v;
  uint qk_stride;
  uint q_offset;
  uint k_offset;
  uint v_offset;
  float scale;  // 1 / sqrt(S)
  uint slots;   // slots the state binding holds (sequences in other slots are skipped)
  uint max_chunks;
};

// The Mamba-2 selective scan (ssm_scan.comp; P, N, the group size and the gate are
// specialization constants): x, B and C in the conv output's rows (token t at t * x_stride, x at
// 0, B at b_offset, C at c_offset, group g's N values at g * N), dt and z in the input
// projection's rows (t * dt_stride + dt_offset, t * dt_stride + z_offset); state (slots, heads, P,
// N); y (n_tokens, heads, P).
struct SsmScanPush {
  uint n_tokens;  // tokens of all sequences (a bound: entries past it are clipped)
  uint n_seqs;
  uint heads;
  uint x_stride;
  uint b_offset;
  uint c_offset;
  uint dt_stride;
  uint dt_offset;
  uint z_offset;
  uint slots;  // slots the state binding holds (sequences in other slots are skipped)
};
