// The gate activations of gated feed-forwards, shared by the elementwise kernels (gelu.comp,
// swiglu.comp) and the gate|up product's epilogue (matvec.glsl with GLU).

// SiLU: x / (1 + exp(-x)). exp(-x) overflows to inf for x < -88: x / inf = -0, the right limit.
float silu(float x) { return x / (1.0 + exp(-x)); }

// GELU, tanh approximation (as GGML and GPT-2 use): 0.5 x (1 + tanh(z)), z = sqrt(2/pi) (x +
// 0.044715 x^3). Computed as x * sigmoid(2z), the same function, because 1 + tanh(z) cancels for
// negative x and some tanh implementations return NaN for large |z|.
float gelu_tanh(float x) {
  const float SQRT_2_OVER_PI = 0.79788456080286536;
  float z = SQRT_2_OVER_PI * x * (1.0 + 0.044715 * x * x);
  return x / (1.0 + exp(-2.0 * z));
}
