// Push-constant blocks, declared once for GLSL and C++. Rules: only 4-byte scalars (uint, int,
// float), so std430 and C++ agree byte for byte; at most 128 bytes (Stream::dispatch asserts).
// In GLSL:  layout(push_constant) uniform PushBlock { RmsnormPush p; };
#ifndef VKLLM_PUSH_H
#define VKLLM_PUSH_H

#ifdef __cplusplus
#include <cstdint>
namespace vkllm::push {
using uint = std::uint32_t;
#endif

// y[i] = a[i] + b[i], i < n
struct AddPush {
  uint n;
};

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w, for r < rows
struct RmsnormPush {
  uint rows;
  uint dim;
  float eps;
};

#ifdef __cplusplus
}  // namespace vkllm::push
#endif
#endif
