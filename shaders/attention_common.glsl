// Masking rules shared by the flash and naive attention kernels. Vulkan does not promise IEEE
// infinities in shader arithmetic, so "minus infinity" is the finite NEG, always written as
// that exact constant and tested with ==, never fed to exp2.
#ifndef VKLLM_ATTENTION_COMMON_GLSL
#define VKLLM_ATTENTION_COMMON_GLSL

const float NEG = -1.0e30;
const float LOG2E = 1.4426950408889634;  // an attention sink's logit into the base-2 domain

// Whether key position t is visible to a query at absolute position pos (p: AttentionPush).
// Causal: t <= pos. Sliding window of w > 0: pos - t < w (the w most recent keys up to pos).
bool key_visible(int t, int pos) {
  if (p.causal != 0 && t > pos) return false;
  if (p.window != 0 && pos - t >= int(p.window)) return false;
  return true;
}

#endif
