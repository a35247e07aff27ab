// Reference conv1d, norms, output gate and gated delta rule of the linear-attention layers.
#include "reference/linear_attention.h"

#include <cmath>
#include <vector>

namespace vkllm::ref {

namespace {

double silu(double x) { return x / (1 + std::exp(-x)); }
double sigmoid(double x) { return 1 / (1 + std::exp(-x)); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

}  // namespace

void ssm_conv(float* y, float* state, const float* x, const float* w, size_t n, size_t C, size_t K, bool use_silu,
              const float* bias) {
  size_t keep = K - 1;
  std::vector<float> u((n + keep) * C);
  for (size_t i = 0; i < keep * C; ++i) u[i] = state[i];
  for (size_t i = 0; i < n * C; ++i) u[keep * C + i] = x[i];
  for (size_t t = 0; t < n; ++t)
    for (size_t c = 0; c < C; ++c) {
      double sum = 0;
      for (size_t j = 0; j < K; ++j) sum += double(w[c * K + j]) * u[(t + j) * C + c];
      if (bias) sum += bias[c];
      y[t * C + c] = float(use_silu ? silu(sum) : sum);
    }
  for (size_t i = 0; i < keep * C; ++i) state[i] = u[n * C + i];
}

void short_conv_gated(float* y, float* state, const float* bcx, const float* w, size_t n, size_t C, size_t K) {
  std::vector<float> bx(n * C);
  for (size_t t = 0; t < n; ++t)
    for (size_t c = 0; c < C; ++c) bx[t * C + c] = bcx[t * 3 * C + c] * bcx[t * 3 * C + 2 * C + c];
  ssm_conv(y, state, bx.data(), w, n, C, K, false);
  for (size_t t = 0; t < n; ++t)
    for (size_t c = 0; c < C; ++c) y[t * C + c] *= bcx[t * 3 * C + C + c];
}

void l2_norm(float* y, const float* x, size_t rows, size_t width, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    double ss = 0;
    for (size_t i = 0; i < width; ++i) ss += double(x[r * width + i]) * x[r * width + i];
    double inv = 1 / std::sqrt(ss + eps);
    for (size_t i = 0; i < width; ++i) y[r * width + i] = float(x[r * width + i] * inv);
  }
}

void gated_rmsnorm(float* y, const float* x, const float* w, const float* z, size_t rows, size_t width, float eps) {
  for (size_t r = 0; r < rows; ++r) {
    const float *xr = x + r * width, *zr = z + r * width;
    double ss = 0;
    for (size_t i = 0; i < width; ++i) ss += double(xr[i]) * xr[i];
    double inv = 1 / std::sqrt(ss / double(width) + eps);
    for (size_t i = 0; i < width; ++i) y[r * width + i] = float(xr[i] * inv * w[i] * silu(zr[i]));
  }
}

void sigmoid_mul(float* y, const float* x, const float* g, size_t n) {
  for (size_t i = 0; i < n; ++i) y[i] = float(x[i] * sigmoid(g[i]));
}

void delta_rule(float* o, float* state, const float* q, const float* k, const float* v, const float* alpha,
                const float* b, const float* dt_bias, const float* a, const DeltaRuleShape& p) {
  size_t S = p.s, qk_stride = p.qk_stride ? p.qk_stride : p.h_k * S;
  size_t v_stride = p.v_stride ? p.v_stride : p.h_v * S, ab_stride = p.ab_stride ? p.ab_stride : p.h_v;
  double scale = 1 / std::sqrt(double(S));
  std::vector<double> M(S * S), d(S);
  for (size_t h = 0; h < p.h_v; ++h) {
    float* st = state + h * S * S;
    for (size_t i = 0; i < S * S; ++i) M[i] = st[i];
    size_t hk = h % p.h_k;
    for (size_t t = 0; t < p.n_tokens; ++t) {
      const float *qt = q + t * qk_stride + hk * S, *kt = k + t * qk_stride + hk * S, *vt = v + t * v_stride + h * S;
      double decay = std::exp(softplus(double(alpha[t * ab_stride + h]) + dt_bias[h]) * a[h]);
      double beta = sigmoid(b[t * ab_stride + h]);
      for (double& m : M) m *= decay;
      for (size_t j = 0; j < S; ++j) {
        double sk = 0;
        for (size_t i = 0; i < S; ++i) sk += M[j * S + i] * kt[i];
        d[j] = beta * (vt[j] - sk);
      }
      for (size_t j = 0; j < S; ++j)
        for (size_t i = 0; i < S; ++i) M[j * S + i] += d[j] * kt[i];
      for (size_t j = 0; j < S; ++j) {
        double sq = 0;
        for (size_t i = 0; i < S; ++i) sq += M[j * S + i] * qt[i];
        o[(t * p.h_v + h) * S + j] = float(sq * scale);
      }
    }
    for (size_t i = 0; i < S * S; ++i) st[i] = float(M[i]);
  }
}

}  // namespace vkllm::ref
