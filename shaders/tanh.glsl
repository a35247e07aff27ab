// tanh without the builtin's unspecified accuracy (Vulkan inherits it from sinh/cosh, which may
// lose all relative precision near 0): a Taylor polynomial for |x| < 1/8 (error below 2^-30),
// else (1 - e^-2|x|) / (1 + e^-2|x|), which never overflows. Used by the logit soft-caps.
#ifndef VKLLM_TANH_GLSL
#define VKLLM_TANH_GLSL

float tanh_accurate(float x) {
  float a = abs(x);
  if (a < 0.125) {
    float x2 = x * x;
    return x * (1.0 + x2 * (-1.0 / 3.0 + x2 * (2.0 / 15.0 + x2 * (-17.0 / 315.0 + x2 * (62.0 / 2835.0)))));
  }
  float t = exp(-2.0 * a);
  return sign(x) * (1.0 - t) / (1.0 + t);
}

#endif
