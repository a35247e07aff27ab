// Helpers shared by the gated delta rule kernels (delta_rule.comp, token by token;
// delta_rule_prep.comp and delta_rule_chunk.comp, in chunks). A kernel declares, before including
// this file, `seqs` (StepParams[], the step buffer) and `p` (DeltaRulePush).
#ifndef VKLLM_DELTA_RULE_GLSL
#define VKLLM_DELTA_RULE_GLSL

// log(1 + u) for u in [0, 1], vendor-independent: with z = u / (2 + u) <= 1/3,
// log(1 + u) = 2 atanh(z) = 2 (z + z^3/3 + z^5/5 + ...), the terms up to z^19 (relative error
// below 1e-10). GLSL's log has only an absolute error bound (2^-21) near 1, too coarse here.
float log1p_unit(float u) {
  float z = u / (2.0 + u), z2 = z * z;
  float s = 1.0 / 19.0;
  s = s * z2 + 1.0 / 17.0;
  s = s * z2 + 1.0 / 15.0;
  s = s * z2 + 1.0 / 13.0;
  s = s * z2 + 1.0 / 11.0;
  s = s * z2 + 1.0 / 9.0;
  s = s * z2 + 1.0 / 7.0;
  s = s * z2 + 1.0 / 5.0;
  s = s * z2 + 1.0 / 3.0;
  s = s * z2 + 1.0;
  return 2.0 * z * s;
}

// ggml's softplus: x above 20, else log(1 + e^x) (as x + log(1 + e^-x) for x > 0).
float softplus(float x) {
  if (x > 20.0) return x;
  return x > 0.0 ? x + log1p_unit(exp(-x)) : log1p_unit(exp(x));
}

// 1 / (1 + e^-x); exp(-x) overflows to inf for x < -88: 1 / inf = 0, the right limit.
float sigmoid(float x) { return 1.0 / (1.0 + exp(-x)); }

// The tokens sequence s has in this batch, starting at token0: its n_tokens clipped to the
// batch's n_tokens, and 0 for an unused entry or a slot outside the state binding (p.slots).
uint seq_tokens(StepParams sp, uint token0) {
  if (token0 >= p.n_tokens || sp.slot >= p.slots) return 0;
  return min(sp.n_tokens, p.n_tokens - token0);
}

// Sequence `seq` of the step: its first token in the batch, token count (seq_tokens), slot and
// pos0, and its first chunk (of `chunk` tokens) among the chunks of all sequences in batch order.
struct Seq {
  uint token0, n, slot, pos0, chunk0;
};

Seq find_seq(uint seq, uint chunk) {
  Seq r = Seq(0, 0, 0, 0, 0);
  for (uint s = 0; s < seq; ++s) {
    uint n = seq_tokens(seqs[s], r.token0);
    r.token0 += seqs[s].n_tokens, r.chunk0 += (n + chunk - 1) / chunk;
  }
  StepParams sp = seqs[seq];
  r.n = seq_tokens(sp, r.token0), r.slot = sp.slot, r.pos0 = sp.pos0;
  return r;
}

#endif
