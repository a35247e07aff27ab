// `vkllm-bench copy`: the device's copy bandwidth, the yardstick for bandwidth-bound kernels (a
// decode step reads every weight once: its best time is weight bytes / this bandwidth). Two ways,
// both of buffers far larger than any cache (by default an eighth of the device's memory, at most
// 1 GiB each; 256 MiB on a CPU device): a shader copy of 16-byte words (ops::copy_words, what
// kernels can reach; timed by GPU timestamps, the median of 10 replays of 8 copies), and the
// driver's vkCmdCopyBuffer (timed by the wall clock around submits of copies worth at least
// 0.2 s, so the submit does not count; a driver may put it on a copy engine slower than the
// shader cores). GB/s counts the bytes read plus the bytes written, as STREAM's copy does;
// copy_gbps, the yardstick, is the faster of the two.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench.h"
#include "ops.h"

namespace vkllm::bench {

namespace {

struct CopyOptions {
  CommonOptions common;
  uint32_t mib = 0;  // 0: chosen from the device
};

// Each buffer: an eighth of the memory vkllm may use, at most 1 GiB (the largest last-level
// caches are tens of MB: the H200's L2 is 50 MB), 256 MiB on CPU devices, and within one
// binding and allocation.
uint64_t default_bytes(const DeviceCaps& caps) {
  uint64_t bytes = std::min<uint64_t>(1ull << 30, caps.usable_device_bytes() / 8);
  if (caps.type == "cpu") bytes = std::min<uint64_t>(bytes, 256ull << 20);
  return bytes;
}

double gbps(uint64_t bytes, double ms) { return 2.0 * bytes / (ms * 1e6); }

// ms per vkCmdCopyBuffer of `bytes`, the median of 5 submits of n back-to-back copies.
double buffer_copy_ms(const Context& ctx, const Buffer& src, const Buffer& dst) {
  auto submit_ms = [&](Stream& s) {
    auto t0 = std::chrono::steady_clock::now();
    s.submit_wait();
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  };
  Stream one(ctx);
  one.copy(src.view(), dst.view());
  submit_ms(one);
  double first = std::max(submit_ms(one), 1e-3);
  int n = std::clamp(int(200 / first), 1, 256);  // about 0.2 s a submit
  Stream s(ctx);
  for (int i = 0; i < n; ++i) s.copy(src.view(), dst.view());
  submit_ms(s);
  std::vector<double> ms;
  for (int i = 0; i < 5; ++i) ms.push_back(submit_ms(s) / n);
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void run(const CopyOptions& o) {
  Context ctx(o.common.context());
  const DeviceCaps& caps = ctx.caps();
  uint64_t bytes = o.mib ? uint64_t(o.mib) << 20 : default_bytes(caps);
  bytes = std::min({bytes, caps.max_storage_buffer_range, caps.max_buffer_size, caps.max_memory_allocation,
                    uint64_t(UINT32_MAX) * 16}) /
          16 * 16;
  Buffer src(ctx, bytes, Memory::Device, "copy source"), dst(ctx, bytes, Memory::Device, "copy destination");
  const int per_replay = 8;
  Timing shader = time_stream(ctx, [&](Stream& s) {
    for (int i = 0; i < per_replay; ++i) ops::copy_words(s, src.view(), dst.view());
  });
  double shader_ms = shader.ms_median / per_replay, buffer_ms = buffer_copy_ms(ctx, src, dst);
  double shader_gbps = gbps(bytes, shader_ms), buffer_gbps = gbps(bytes, buffer_ms);
  double best = std::max(shader_gbps, buffer_gbps);
  if (o.common.json) {
    nlohmann::json j = {{"op", "copy"},
                        {"bytes", bytes},
                        {"device", caps.name},
                        {"profile", ctx.profile().name},
                        {"shader_copy_ms", shader_ms},
                        {"shader_copy_gbps", shader_gbps},
                        {"buffer_copy_ms", buffer_ms},
                        {"buffer_copy_gbps", buffer_gbps},
                        {"ms_median", best == shader_gbps ? shader_ms : buffer_ms},
                        {"copy_gbps", best}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("copy {:.0f} MiB on {} (profile {}), GB/s read + written:\n", bytes / 1048576.0, caps.name,
             ctx.profile().name);
  fmt::print("  shader copy (16-byte words)  {:9.3f} ms  {:8.1f} GB/s\n", shader_ms, shader_gbps);
  fmt::print("  vkCmdCopyBuffer              {:9.3f} ms  {:8.1f} GB/s\n", buffer_ms, buffer_gbps);
  fmt::print("copy bandwidth: {:.1f} GB/s\n", best);
}

}  // namespace

void add_copy_bench(CLI::App& app) {
  static CopyOptions o;
  CLI::App* cmd = app.add_subcommand("copy", "Device copy bandwidth (GB/s read + written), the decode yardstick");
  cmd->add_option("--mib", o.mib,
                  "Bytes per buffer, in MiB (default: an eighth of the device's memory, at most 1024; 256 on a CPU)")
      ->check(int_range(1, 1 << 20));
  add_common_options(cmd, o.common);
  cmd->callback([] { run(o); });
}

}  // namespace vkllm::bench
