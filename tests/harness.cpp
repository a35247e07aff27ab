// Test helpers shared by every test file.
#include "harness.h"

#include <fmt/format.h>
#include <cmath>
#include <cstdio>
#include <random>

#include "catch.h"
#include "context.h"
#include "error.h"

namespace vkllm::test {

Context& gpu() {
  static Context ctx(ContextOptions{.validation = true});
  return ctx;
}

void for_each_profile(const std::function<void(const Profile&)>& body) {
  struct Restore {
    ~Restore() { gpu().set_profile(choose_profile(gpu().caps())); }
  } restore;
  for (const Profile& p : all_profiles()) {
    gpu().set_profile(p);
    body(gpu().profile());
  }
}

std::vector<float> random_floats(size_t n, uint32_t seed, float lo, float hi) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(lo, hi);
  std::vector<float> v(n);
  for (float& x : v) x = dist(rng);
  return v;
}

namespace {

template <class T>
Buffer upload_to_gpu(std::span<const T> data, const std::string& name) {
  Buffer b(gpu(), std::max<size_t>(data.size_bytes(), 4), Memory::Device, name);
  if (!data.empty()) b.upload(data);
  return b;
}

}  // namespace

Buffer to_gpu(std::span<const float> data, const std::string& name) { return upload_to_gpu(data, name); }
Buffer to_gpu(std::span<const int32_t> data, const std::string& name) { return upload_to_gpu(data, name); }

std::vector<float> from_gpu(const Buffer& b) { return b.download<float>(b.size() / sizeof(float)); }

Comparison compare(std::span<const float> got, std::span<const float> want) {
  Comparison c;
  double num = 0, den = 0;
  size_t n = std::min(got.size(), want.size());
  for (size_t i = 0; i < n; ++i) {
    if (!std::isfinite(want[i])) continue;
    if (!std::isfinite(got[i])) {
      ++c.extra_nonfinite;
      continue;
    }
    double d = double(got[i]) - want[i];
    num += d * d;
    den += double(want[i]) * want[i];
    if (std::abs(d) > c.max_abs) c.max_abs = std::abs(d), c.worst = i;
  }
  c.nmse = den > 0 ? num / den : num;
  return c;
}

void check_nmse(std::span<const float> got, std::span<const float> want, double bound, const std::string& what) {
  REQUIRE(got.size() == want.size());
  Comparison c = compare(got, want);
  fmt::print("nmse {}: {:.3e} (max |diff| {:.3e} at {})\n", what, c.nmse, c.max_abs, c.worst);
  INFO(fmt::format("{}: nmse {:.3e} bound {:.1e}; worst at {}: got {} want {}", what, c.nmse, bound, c.worst,
                   got.empty() ? 0.f : got[c.worst], want.empty() ? 0.f : want[c.worst]));
  CHECK(c.extra_nonfinite == 0);
  CHECK(c.nmse <= bound);
}

namespace {
std::vector<std::string> g_skipped;
}

void skip(const std::string& reason) {
  std::printf("skipped: %s\n", reason.c_str());
  std::fflush(stdout);
  g_skipped.push_back(reason);
}

const std::vector<std::string>& skipped() { return g_skipped; }

namespace {
std::vector<void (*)()>& starters() {
  static std::vector<void (*)()> s;  // a function's static: safe from static initializers
  return s;
}
}  // namespace

bool at_start(void (*add)()) {
  starters().push_back(add);
  return true;
}

void run_at_start() {
  for (void (*add)() : starters()) add();
}

double batching_bound(std::initializer_list<uint32_t> batch_sizes, double exact) {
  constexpr double kF32Bound = 1e-7, kF16Bound = 1e-5;
  uint32_t min_n = gpu().profile().matmul_tiled_min_n;
  bool tiled = false, matvec = false;
  for (uint32_t n : batch_sizes) (n >= min_n ? tiled : matvec) = true;
  bool coop = gpu().coopmat().api != CoopApi::None && gpu().profile().coopmat;
  return tiled && matvec ? std::max(exact, coop ? kF16Bound : kF32Bound) : exact;
}

std::string error_of(const std::function<void()>& fn) {
  try {
    fn();
  } catch (const Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace vkllm::test
