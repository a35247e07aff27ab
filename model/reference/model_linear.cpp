// The reference's Gated DeltaNet block (docs/formats.md §10, llama.cpp's qwen35.cpp
// build_layer_attn_linear): q|k|v, z, beta and alpha from the normed input; per sequence the
// causal conv1d (SiLU) over q|k|v continuing from its conv state, the L2 norm of q and k, the
// gated delta rule continuing from its state; the gated RMSNorm by z; the output projection
// added to the residual.
#include "arch/architecture.h"
#include "reference/elementwise.h"
#include "reference/linear_attention.h"
#include "reference/matmul.h"
#include "reference/model.h"

namespace vkllm::ref {

void Model::linear_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  const LinearAttentionConfig& a = c_.linear;
  size_t n = step.n, dim = c_.dim, C = a.conv_channels(), K = a.conv_kernel, S = a.head_dim, Hv = a.v_heads;
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::AttnNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "attn_norm", h, dim);
  auto qkv = project(weight(TensorRole::LinearQkv, l), h.data(), n, dim);  // (n, C)
  auto z = project(weight(TensorRole::LinearGate, l), h.data(), n, dim);   // (n, Hv·S)
  auto beta = project(weight(TensorRole::SsmBeta, l), h.data(), n, dim);   // (n, Hv)
  auto alpha = project(weight(TensorRole::SsmAlpha, l), h.data(), n, dim);
  auto conv_w = weight(TensorRole::SsmConv, l), dt = weight(TensorRole::SsmDt, l), decay = weight(TensorRole::SsmA, l);
  std::vector<float> conv(n * C), o(n * Hv * S);
  for (size_t c = 0; c < step.chunks.size(); ++c) {
    KvState& st = *step.chunks[c].state;
    size_t first = step.first[c], m = step.chunks[c].tokens.size();
    std::vector<float>&conv_state = st.conv_[l], &delta_state = st.ssm_[l];
    if (conv_state.empty()) conv_state.assign((K - 1) * C, 0.0f), delta_state.assign(Hv * S * S, 0.0f);
    float* u = &conv[first * C];
    ssm_conv(u, conv_state.data(), &qkv[first * C], conv_w.data(), m, C, K);
    for (size_t t = 0; t < m; ++t) l2_norm(u + t * C, u + t * C, 2 * a.k_heads, S, c_.norm_eps);  // q and k heads
    DeltaRuleShape shape{.n_tokens = m, .h_k = a.k_heads, .h_v = Hv, .s = S, .qk_stride = C, .v_stride = C};
    delta_rule(&o[first * Hv * S], delta_state.data(), u, u + a.key_dim(), u + 2 * a.key_dim(), &alpha[first * Hv],
               &beta[first * Hv], dt.data(), decay.data(), shape);
  }
  gated_rmsnorm(o.data(), o.data(), weight(TensorRole::SsmNorm, l).data(), z.data(), n * Hv, S, c_.norm_eps);
  std::vector<float> out = project(weight(TensorRole::SsmOut, l), o.data(), n, Hv * S);
  emit(int(l), "attn_out", out, dim);
  add_residual(x, out);
  emit(int(l), "ffn_inp", x, dim);
}

}  // namespace vkllm::ref
