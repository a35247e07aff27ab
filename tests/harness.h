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

// The NMSE bound between two runs of one model that differ only in how its tokens are batched
// (chunks, decode steps, a truncated tail), given every batch size either run evaluates. Where
// ops::matmul picks one kernel for all of them (the profile's matmul_tiled_min_n is on one side
// of all), both runs sum in the same order and `exact` holds. Where some batches take matvec and
// others the tiled kernel (GPU profiles from 9 tokens), the orders differ: each run is an f32
// computation of the same value, so they may differ by the f32-arithmetic bound (docs/design.md,
// 1e-7 for long reductions), including the rare K/V value that rounds to the neighbouring f16.
// Measured under the nvidia profile on lavapipe: 1.2e-10 to 1.9e-9 (docs/decisions.md, issue 32).
// Where the device runs prefill on cooperative matrices (f16 inputs, ops_matmul_coop.h), the
// orders differ and one side rounds its inputs to f16: the bound through f16, 1e-5.
double batching_bound(std::initializer_list<uint32_t> batch_sizes, double exact);

// The message of the vkllm::Error fn throws, or "(no error)".
std::string error_of(const std::function<void()>& fn);

// Marks the running test case skipped (what it needs is missing) and prints "skipped: <reason>";
// the caller returns right after. The runner then exits 77, which ctest reports as skipped, never
// as passed (tests/main.cpp).
void skip(const std::string& reason);
const std::vector<std::string>& skipped();

// Test cases registered from data (one per registry fixture): `add` runs in main, before Catch
// reads its registry, once every static object (the architecture registry among them) exists;
// at_start itself may be called from a static initializer.
bool at_start(void (*add)());
void run_at_start();

}  // namespace vkllm::test
