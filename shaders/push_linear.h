// Push constants of the linear-attention (Gated DeltaNet) kernels (included by push.h):
// ssm_conv and l2_norm. gated_rmsnorm uses NormPush, sigmoid_mul UnaryPush.
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
