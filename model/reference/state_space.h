// CPU reference for the Mamba-2 selective scan of the state-space hybrids (Nemotron-H, Granite
// 4.0-H; docs/formats.md §15), token by token (the recurrence, ggml's ssm_scan with a scalar A per
// head) and in chunks (the state-space duality form, SSD, that prefill kernels use). Written from
// the math and llama.cpp's build_mamba2_layer, in double; the specification the kernels are tested
// against.
#pragma once
#include <cstddef>

namespace vkllm::ref {

// The shape of one sequence's scan: H heads of P values (head_dim; H·P = d_inner), a state of N
// values per value (d_state), G groups of B and C (head h reads group h / (H / G)).
struct SsmScanShape {
  size_t n_tokens = 0;
  size_t heads = 0, head_dim = 0, state = 0, groups = 1;
  // Floats between tokens in x, B and C (parts of the conv output's rows, as the layer lays them
  // out), in dt and in z (parts of the input projection's rows); 0: packed.
  size_t x_stride = 0, bc_stride = 0, dt_stride = 0, z_stride = 0;
};

// Per token t and head h, with dt' = softplus(dt[t][h] + dt_bias[h]) and decay = exp(dt' · A[h]):
//   S[h][p][n] = decay · S[h][p][n] + B[t][g][n] · x[t][h][p] · dt'
//   y[t][h][p] = (sum_n S[h][p][n] · C[t][g][n] + D[h] · x[t][h][p]) · silu(z[t][h][p])
// (no gate where z is null). softplus(x) = x above 20, else log(1 + e^x) (ggml's).
//   x (n, H, P); B, C (n, G, N); dt (n, H); dt_bias, A, D (H); z (n, H, P) or null;
//   state (H, P, N), updated in place; y (n, H, P) packed.
struct SsmScanInputs {
  const float *x, *b, *c, *dt, *dt_bias, *a, *d, *z;
};
void ssm_scan(float* y, float* state, const SsmScanInputs& in, const SsmScanShape& shape);

// The same in chunks of `chunk` tokens: with a_t = dt'_t · A[h] and L_t = sum of a over the chunk's
// tokens up to t, per chunk
//   y_t = C_t · (e^{L_t} S_0) + sum_{j <= t} e^{L_t - L_j} (C_t · B_j) x_j dt'_j   (then D and the gate)
//   S_end = e^{L_last} S_0 + sum_j e^{L_last - L_j} B_j x_j dt'_j
// equal to ssm_scan up to rounding.
void ssm_scan_chunked(float* y, float* state, const SsmScanInputs& in, const SsmScanShape& shape, size_t chunk);

}  // namespace vkllm::ref
