// Timing of recorded streams, test inputs, and the CPU bandwidth yardstick for vkllm-bench.
#include <algorithm>
#include <chrono>
#include <numeric>
#include <random>
#include <thread>
#include <vector>

#include "bench.h"
#include "ops_matmul.h"
#include "reference/reference.h"

namespace vkllm::bench {

Timing time_stream(const Context& ctx, const std::function<void(Stream&)>& record, int warmup, int runs) {
  Stream s(ctx, /*profiling=*/true);
  record(s);
  for (int i = 0; i < warmup; ++i) s.submit_wait();
  std::vector<double> ms;
  for (int i = 0; i < runs; ++i) {
    s.submit_wait();
    double total = 0;
    for (const KernelTime& k : s.timings()) total += k.ms;
    ms.push_back(total);
  }
  std::sort(ms.begin(), ms.end());
  return {.ms_median = ms[ms.size() / 2], .ms_min = ms.front(), .runs = runs};
}

std::vector<float> random_values(size_t n, uint32_t seed) {
  std::mt19937 rng(seed);
  std::uniform_real_distribution<float> dist(-1.0f, 1.0f);
  std::vector<float> v(n);
  for (float& f : v) f = dist(rng);
  return v;
}

Buffer bench_weights(const Context& ctx, DType t, uint32_t M, uint32_t K) {
  const uint32_t distinct = 64;
  std::vector<float> f = random_values(size_t(distinct) * K, 1);
  std::vector<uint8_t> rows = ref::quantize(t, f.data(), distinct, K);
  uint64_t rb = row_bytes(t, K);
  Buffer w(ctx, uint64_t(M) * rb, Memory::Device, "weights");
  for (uint32_t m0 = 0; m0 < M; m0 += distinct)
    w.upload(rows.data(), std::min<uint64_t>(distinct, M - m0) * rb, uint64_t(m0) * rb);
  return w;
}

double cpu_read_gbps() {
  const size_t n = size_t(256) << 20 >> 3;  // 256 MiB of uint64
  std::vector<uint64_t> data(n, 1);
  unsigned threads = std::max(1u, std::thread::hardware_concurrency());
  double best = 0;
  for (int rep = 0; rep < 3; ++rep) {
    std::vector<uint64_t> sums(threads);
    auto t0 = std::chrono::steady_clock::now();
    std::vector<std::thread> pool;
    for (unsigned t = 0; t < threads; ++t)
      pool.emplace_back([&, t] {
        size_t lo = n * t / threads, hi = n * (t + 1) / threads;
        sums[t] = std::accumulate(data.begin() + lo, data.begin() + hi, uint64_t{0});
      });
    for (auto& th : pool) th.join();
    double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    if (std::accumulate(sums.begin(), sums.end(), uint64_t{0}) != n) return 0;  // keeps the sum alive
    best = std::max(best, n * 8 / s / 1e9);
  }
  return best;
}

void add_common_options(CLI::App* cmd, CommonOptions& o) {
  cmd->add_option("--device", o.device, "Vulkan device index (see vkllm devices)")
      ->type_name("I")
      ->check(cli::int_range(0, 1 << 16));
  std::vector<std::string> profiles;
  for (const Profile& p : all_profiles()) profiles.push_back(p.name);
  cmd->add_option("--profile", o.profile, "Force a vendor profile")->type_name("NAME")->check(cli::one_of(profiles));
  cmd->add_flag("--json", o.json, "Print one JSON object");
}

void add_repeat_options(CLI::App* cmd, int& warmup, int& runs) {
  cmd->add_option("--warmup", warmup, "Untimed replays first")->type_name("N")->check(cli::int_range(0, 1000));
  cmd->add_option("--runs", runs, "Timed replays (the median is reported)")
      ->type_name("N")
      ->check(cli::int_range(1, 10000));
}

std::vector<std::string> weight_type_names() {
  std::vector<std::string> names;
  for (DType t : ops::weight_types()) names.emplace_back(info(t).name);
  return names;
}

}  // namespace vkllm::bench
