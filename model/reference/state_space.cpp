// Reference Mamba-2 selective scan: the recurrence and the chunked (SSD) form.
#include "reference/state_space.h"

#include <algorithm>
#include <cmath>
#include <vector>

namespace vkllm::ref {

namespace {

double silu(double x) { return x / (1 + std::exp(-x)); }
double softplus(double x) { return x > 20 ? x : std::log1p(std::exp(x)); }

struct Strides {
  size_t x, bc, dt, z;
};

Strides strides(const SsmScanShape& p) {
  size_t d_inner = p.heads * p.head_dim;
  return {p.x_stride ? p.x_stride : d_inner, p.bc_stride ? p.bc_stride : p.groups * p.state,
          p.dt_stride ? p.dt_stride : p.heads, p.z_stride ? p.z_stride : d_inner};
}

// y[t][h][p] from the state sum: + D x, times the gate.
float finish(double sum, const SsmScanInputs& in, const Strides& st, size_t t, size_t h, size_t i) {
  double xv = in.x[t * st.x + i];
  double v = sum + double(in.d[h]) * xv;
  return float(in.z ? v * silu(in.z[t * st.z + i]) : v);
}

}  // namespace

void ssm_scan(float* y, float* state, const SsmScanInputs& in, const SsmScanShape& p) {
  Strides st = strides(p);
  size_t P = p.head_dim, N = p.state, per_group = p.heads / p.groups;
  std::vector<double> s(P * N);
  for (size_t h = 0; h < p.heads; ++h) {
    float* sh = state + h * P * N;
    for (size_t i = 0; i < P * N; ++i) s[i] = sh[i];
    size_t g = h / per_group;
    for (size_t t = 0; t < p.n_tokens; ++t) {
      double dt = softplus(double(in.dt[t * st.dt + h]) + in.dt_bias[h]);
      double decay = std::exp(dt * in.a[h]);
      const float *b = in.b + t * st.bc + g * N, *c = in.c + t * st.bc + g * N;
      for (size_t i = 0; i < P; ++i) {
        double xdt = double(in.x[t * st.x + h * P + i]) * dt, sum = 0;
        for (size_t n = 0; n < N; ++n) {
          double& v = s[i * N + n];
          v = v * decay + b[n] * xdt;
          sum += v * c[n];
        }
        y[(t * p.heads + h) * P + i] = finish(sum, in, st, t, h, h * P + i);
      }
    }
    for (size_t i = 0; i < P * N; ++i) sh[i] = float(s[i]);
  }
}

void ssm_scan_chunked(float* y, float* state, const SsmScanInputs& in, const SsmScanShape& p, size_t chunk) {
  Strides st = strides(p);
  size_t P = p.head_dim, N = p.state, per_group = p.heads / p.groups;
  std::vector<double> s(P * N), s_next(P * N), cum(chunk), dts(chunk), cb(chunk * chunk);
  for (size_t h = 0; h < p.heads; ++h) {
    float* sh = state + h * P * N;
    for (size_t i = 0; i < P * N; ++i) s[i] = sh[i];
    size_t g = h / per_group;
    for (size_t t0 = 0; t0 < p.n_tokens; t0 += chunk) {
      size_t len = std::min(chunk, p.n_tokens - t0);
      auto b = [&](size_t j) { return in.b + (t0 + j) * st.bc + g * N; };
      auto c = [&](size_t j) { return in.c + (t0 + j) * st.bc + g * N; };
      double acc = 0;
      for (size_t j = 0; j < len; ++j) {
        dts[j] = softplus(double(in.dt[(t0 + j) * st.dt + h]) + in.dt_bias[h]);
        cum[j] = acc += dts[j] * in.a[h];
      }
      for (size_t t = 0; t < len; ++t)  // C_t · B_j for j <= t: the chunk's "attention" scores
        for (size_t j = 0; j <= t; ++j) {
          double dot = 0;
          for (size_t n = 0; n < N; ++n) dot += double(c(t)[n]) * b(j)[n];
          cb[t * chunk + j] = dot * std::exp(cum[t] - cum[j]) * dts[j];
        }
      for (size_t i = 0; i < P; ++i) {
        auto x = [&](size_t j) { return double(in.x[(t0 + j) * st.x + h * P + i]); };
        for (size_t t = 0; t < len; ++t) {
          double from_state = 0, within = 0;
          for (size_t n = 0; n < N; ++n) from_state += c(t)[n] * s[i * N + n];
          for (size_t j = 0; j <= t; ++j) within += cb[t * chunk + j] * x(j);
          y[((t0 + t) * p.heads + h) * P + i] =
              finish(std::exp(cum[t]) * from_state + within, in, st, t0 + t, h, h * P + i);
        }
        for (size_t n = 0; n < N; ++n) {
          double v = std::exp(cum[len - 1]) * s[i * N + n];
          for (size_t j = 0; j < len; ++j) v += std::exp(cum[len - 1] - cum[j]) * b(j)[n] * x(j) * dts[j];
          s_next[i * N + n] = v;
        }
      }
      s.swap(s_next);
    }
    for (size_t i = 0; i < P * N; ++i) sh[i] = float(s[i]);
  }
}

}  // namespace vkllm::ref
