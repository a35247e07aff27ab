// `vkllm-bench copy`: the device's copy bandwidth, the yardstick for bandwidth-bound kernels (a
// decode step reads every weight once: its best time is weight bytes / this bandwidth). The
// driver's own buffer copy (vkCmdCopyBuffer, the fastest path a device has) of a buffer larger
// than caches, several per submit, timed by the wall clock (median of 10 submits after warm-up);
// GB/s counts the bytes read plus the bytes written, as STREAM's copy does.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <vector>

#include "bench.h"

namespace vkllm::bench {

namespace {

struct CopyOptions {
  CommonOptions common;
  uint32_t mib = 256;
};

void run(const CopyOptions& o) {
  Context ctx(o.common.context());
  uint64_t bytes = std::min<uint64_t>(uint64_t(o.mib) << 20, ctx.caps().max_buffer_size) / 16 * 16;
  Buffer src(ctx, bytes, Memory::Device, "copy source"), dst(ctx, bytes, Memory::Device, "copy destination");
  const int per_submit = 4;
  Stream s(ctx);
  for (int i = 0; i < per_submit; ++i) s.copy(src.view(), dst.view());
  for (int i = 0; i < 2; ++i) s.submit_wait();
  std::vector<double> ms;
  for (int i = 0; i < 10; ++i) {
    auto t0 = std::chrono::steady_clock::now();
    s.submit_wait();
    ms.push_back(std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count() / per_submit);
  }
  std::sort(ms.begin(), ms.end());
  Timing t{.ms_median = ms[ms.size() / 2], .ms_min = ms.front(), .runs = 10};
  double gbps = 2.0 * bytes / (t.ms_median * 1e6);
  if (o.common.json) {
    nlohmann::json j = {{"op", "copy"},
                        {"bytes", bytes},
                        {"device", ctx.caps().name},
                        {"profile", ctx.profile().name},
                        {"ms_median", t.ms_median},
                        {"copy_gbps", gbps}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print("copy {:.0f} MiB on {} (profile {}): median {:.3f} ms, {:.2f} GB/s (read + written)\n", bytes / 1048576.0,
             ctx.caps().name, ctx.profile().name, t.ms_median, gbps);
}

}  // namespace

void add_copy_bench(CLI::App& app) {
  static CopyOptions o;
  CLI::App* cmd = app.add_subcommand("copy", "Device copy bandwidth (GB/s read + written), the decode yardstick");
  cmd->add_option("--mib", o.mib, "Bytes to copy, in MiB (at most one binding)")->capture_default_str();
  add_common_options(cmd, o.common);
  cmd->callback([] { run(o); });
}

}  // namespace vkllm::bench
