// The reference's Mamba-2 mixer (docs/formats.md §15, llama.cpp's mamba-base.cpp
// build_mamba2_layer): z | xBC | dt from the normed input; per sequence the causal conv1d (+ bias,
// SiLU) over xBC continuing from its conv state and the selective scan continuing from its SSM
// state (dt's bias and softplus, D's skip, y·silu(z)); each group of y RMS-normed; ssm_out added
// to the residual.
#include "arch/architecture.h"
#include "reference/elementwise.h"
#include "reference/linear_attention.h"
#include "reference/matmul.h"
#include "reference/model.h"
#include "reference/state_space.h"

namespace vkllm::ref {

void Model::mamba2_block(std::vector<float>& x, uint32_t l, const Step& step) const {
  const Mamba2Config& m = c_.ssm;
  size_t n = step.n, dim = c_.dim, D = m.inner, H = m.heads, N = m.state, G = m.groups, C = m.conv_channels();
  size_t K = m.conv_kernel, P = m.head_dim(), width = 2 * D + 2 * G * N + H;
  std::vector<float> h(x.size());
  rmsnorm(h.data(), x.data(), weight(TensorRole::AttnNorm, l).data(), n, dim, c_.norm_eps);
  emit(int(l), "attn_norm", h, dim);
  auto proj = project(weight(TensorRole::SsmIn, l), h.data(), n, dim);  // (n, z | xBC | dt)
  std::vector<float> xbc_in(n * C), bias_store;
  for (size_t t = 0; t < n; ++t) std::copy_n(&proj[t * width + D], C, &xbc_in[t * C]);
  const float* bias = optional(TensorRole::SsmConvBias, int(l), bias_store);
  auto conv_w = weight(TensorRole::SsmConv, l), dt_bias = weight(TensorRole::SsmDt, l);
  auto a = weight(TensorRole::SsmA, l), d = weight(TensorRole::SsmD, l);
  std::vector<float> xbc(n * C), y(n * D);
  for (size_t q = 0; q < step.chunks.size(); ++q) {
    KvState& st = *step.chunks[q].state;
    size_t first = step.first[q], len = step.chunks[q].tokens.size();
    std::vector<float>&conv_state = st.conv_[l], &ssm_state = st.ssm_[l];
    if (conv_state.empty()) conv_state.assign((K - 1) * C, 0.0f), ssm_state.assign(D * N, 0.0f);
    float* u = &xbc[first * C];
    ssm_conv(u, conv_state.data(), &xbc_in[first * C], conv_w.data(), len, C, K, true, bias);
    const float* row = &proj[first * width];
    SsmScanInputs in{.x = u,
                     .b = u + D,
                     .c = u + D + G * N,
                     .dt = row + 2 * D + 2 * G * N,
                     .dt_bias = dt_bias.data(),
                     .a = a.data(),
                     .d = d.data(),
                     .z = row};
    SsmScanShape shape{.n_tokens = len,
                       .heads = H,
                       .head_dim = P,
                       .state = N,
                       .groups = G,
                       .x_stride = C,
                       .bc_stride = C,
                       .dt_stride = width,
                       .z_stride = width};
    ssm_scan(&y[first * D], ssm_state.data(), in, shape);
  }
  // Each group of D / G values normed by its row of ssm_norm (G rows of D / G).
  rmsnorm(y.data(), y.data(), nullptr, n * G, D / G, c_.norm_eps);
  auto norm = weight(TensorRole::SsmNorm, l);
  for (size_t t = 0; t < n; ++t) mul(&y[t * D], &y[t * D], norm.data(), D);
  std::vector<float> out = project(weight(TensorRole::SsmOut, l), y.data(), n, D);
  emit(int(l), "mamba_out", out, dim);
  add_residual(x, out);
}

}  // namespace vkllm::ref
