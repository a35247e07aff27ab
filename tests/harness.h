// Test helpers: the shared validated GPU context, random inputs, upload/download, and the
// NMSE comparison every kernel test uses (docs/design.md "Numerics").
#pragma once
#include <functional>
#include <span>
#include <string>
#include <vector>

#include "buffer.h"
#include "context.h"

namespace vkllm::test {

// One context for the whole test process, validation layer on (required).
Context& gpu();

// Runs body once under every built-in profile, then restores the device's own profile.
void for_each_profile(const std::function<void(const Profile&)>& body);

std::vector<float> random_floats(size_t n, uint32_t seed, float lo = -1.0f, float hi = 1.0f);
Buffer to_gpu(std::span<const float> data, const std::string& name = "test input");
Buffer to_gpu(std::span<const int32_t> data, const std::string& name = "test input");  // token ids, positions
std::vector<float> from_gpu(const Buffer& b);

struct Comparison {
  double nmse = 0;             // sum (a-b)^2 / sum b^2
  double max_abs = 0;          // largest |a-b|
  size_t worst = 0;            // index of it
  size_t extra_nonfinite = 0;  // NaN/inf in `got` where the reference is finite
};
Comparison compare(std::span<const float> got, std::span<const float> want);

// Checks NMSE <= bound and no NaN/inf the reference lacks; prints "nmse <what>: <value>".
void check_nmse(std::span<const float> got, std::span<const float> want, double bound, const std::string& what);

// Marks the running test case skipped (what it needs is missing) and prints "skipped: <reason>";
// the caller returns right after. The runner then exits 77, which ctest reports as skipped, never
// as passed (tests/main.cpp).
void skip(const std::string& reason);
const std::vector<std::string>& skipped();

}  // namespace vkllm::test
