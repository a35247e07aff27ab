// The reference's LFM2 short-conv block (docs/formats.md §15.1, llama.cpp's lfm2.cpp
// build_shortconv_block): in_proj of the normed input gives b, c and x per token; per sequence
// the causal conv (no bias, no SiLU) over b·x continuing from its conv state, times c
// (ref::short_conv_gated); the output projection added to the residual.
#include "reference/elementwise.h"
#include "reference/linear_attention.h"
#include "reference/matmul.h"
#include "reference/model.h"

namespace vkllm::ref {

void Model::short_conv_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  size_t n = step.n, dim = c_.dim, K = c_.short_conv.kernel;
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::AttnNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "attn_norm", h, dim);
  std::vector<float> bcx = project(weight(TensorRole::ShortConvIn, l), h.data(), n, dim);  // (n, 3·dim)
  std::vector<float> taps = weight(TensorRole::ShortConvTaps, l), y(n * dim);
  for (size_t c = 0; c < step.chunks.size(); ++c) {
    std::vector<float>& state = step.chunks[c].state->conv_[l];
    if (state.empty()) state.assign((K - 1) * dim, 0.0f);
    size_t first = step.first[c];
    short_conv_gated(&y[first * dim], state.data(), &bcx[first * 3 * dim], taps.data(), step.chunks[c].tokens.size(),
                     dim, K);
  }
  std::vector<float> out = project(weight(TensorRole::ShortConvOut, l), y.data(), n, dim);
  emit(int(l), "attn_out", out, dim);
  add_residual(x, out);
  emit(int(l), "ffn_inp", x, dim);
}

}  // namespace vkllm::ref
