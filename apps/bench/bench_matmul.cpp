// vkllm-bench matvec / matmul: the weight-matrix kernels timed by GPU timestamps (median of
// several replays after a warm-up), as weight bytes per second (matvec) or FLOP/s (matmul).
// With --experts E --used k, the mixture-of-experts products instead: E matrices of (M, K), each
// token routed to k of them (token t to experts t·k .. t·k + k - 1 mod E), timed with the plan
// that groups the tokens by expert (ops_moe.h); bytes count the experts read.
#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "error.h"
#include "ops.h"
#include "output.h"
#include "reference/reference.h"

namespace vkllm::bench {

namespace {

struct MatOptions {
  CommonOptions common;
  std::string type = "q4_k";
  uint32_t m = 4096, n = 1, k = 4096;
  uint32_t experts = 0, used = 1;  // experts > 0: matmul_id
  int warmup = 3, runs = 10;
};

// The type (already one of ops::weight_types() by its validator) and K's fit to its block, before
// any device is touched.
DType checked_type(const MatOptions& o, const char* k_flag) {
  DType t = *dtype_named(o.type);
  const DTypeInfo& ti = info(t);
  ENSURE(o.k % ti.block_values == 0,
         fmt::format("{} {}: not a multiple of the {} block of {} values", k_flag, o.k, ti.name, ti.block_values));
  return t;
}

// The expert products of N tokens, k experts each: records moe_plan + matmul_id and returns the
// bytes of the experts the tokens read.
double record_experts(const Context& ctx, const MatOptions& o, DType t, Buffer& w, Buffer& x, Buffer& y,
                      std::unique_ptr<Buffer>& ids, std::unique_ptr<Buffer>& plan_buf, Stream& s) {
  uint32_t E = o.experts, k = o.used, N = o.n;
  ops::ExpertPlan plan = ops::expert_plan(ctx, N, k, E);
  std::vector<int32_t> chosen(size_t(N) * k);
  for (size_t p = 0; p < chosen.size(); ++p) chosen[p] = int32_t(p % E);
  ids = std::make_unique<Buffer>(ctx, chosen.size() * 4, Memory::Device, "ids");
  ids->upload(std::span<const int32_t>(chosen));
  plan_buf = std::make_unique<Buffer>(ctx, plan.bytes(), Memory::Device, "plan");
  ops::moe_plan(s, plan, ids->view(), plan_buf->view());
  ops::ExpertSlice all{.first = 0, .count = E, .w = w.view()};
  ops::matmul_id(s, plan, t, std::span(&all, 1), x.view(), plan_buf->view(), y.view(), o.m, o.k, k);
  return double(std::min<uint64_t>(E, chosen.size())) * o.m * row_bytes(t, o.k);
}

void run(const MatOptions& o, bool matvec) {
  DType t = checked_type(o, matvec ? "--cols" : "--k");
  ENSURE(o.used <= std::max(o.experts, 1u), fmt::format("--used {} exceeds --experts {}", o.used, o.experts));
  Context ctx(o.common.context());
  uint32_t M = o.m, N = o.n, K = o.k, E = std::max(o.experts, 1u);
  Buffer w = bench_weights(ctx, t, E * M, K);
  std::vector<float> xs = random_values(size_t(N) * K, 2);
  uint64_t y_rows = uint64_t(N) * (o.experts ? o.used : 1);
  Buffer x(ctx, xs.size() * 4, Memory::Device, "x"), y(ctx, y_rows * M * 4, Memory::Device, "y");
  x.upload(std::span<const float>(xs));
  std::unique_ptr<Buffer> ids, plan_buf;
  double bytes = double(M) * row_bytes(t, K), flops = 2.0 * y_rows * M * K;
  Timing tm = time_stream(
      ctx,
      [&](Stream& s) {
        if (o.experts)
          bytes = record_experts(ctx, o, t, w, x, y, ids, plan_buf, s);
        else if (matvec)
          ops::matvec(s, t, w, x, y, M, N, K);
        else
          ops::matmul(s, t, w, x, y, M, N, K);
      },
      o.warmup, o.runs);
  double seconds = tm.ms_median * 1e-3;
  bool cpu = ctx.caps().type == "cpu";  // lavapipe: compare with what the CPU itself can read
  double cpu_gbps = cpu ? cpu_read_gbps() : 0;
  ops::ExpertPlan plan = ops::expert_plan(ctx, N, o.used, E);
  bool small = o.experts ? !plan.tiled : N < ctx.profile().matmul_tiled_min_n;
  bool coop = o.experts ? bool(ops::coop_id_choice(ctx, t, plan.tile)) : bool(ops::coop_choice(ctx, t, M, N));
  const char* kernel = (matvec && !o.experts) || small ? "matvec" : coop ? "coopmat" : "tiled";
  if (o.common.json) {
    nlohmann::json j = {{"op", matvec ? "matvec" : "matmul"},
                        {"kernel", kernel},
                        {"type", o.type},
                        {"m", M},
                        {"n", N},
                        {"k", K},
                        {"experts", o.experts},
                        {"used", o.experts ? o.used : 0},
                        {"device", ctx.caps().name},
                        {"profile", ctx.profile().name},
                        {"ms_median", tm.ms_median},
                        {"ms_min", tm.ms_min},
                        {"runs", tm.runs},
                        {"gbps", bytes / seconds / 1e9},
                        {"gflops", flops / seconds / 1e9}};
    if (cpu) j["cpu_read_gbps"] = cpu_gbps;
    fmt::print("{}\n", j.dump());
    return;
  }
  std::string moe = o.experts ? fmt::format(", {} of {} experts per token", o.used, o.experts) : "";
  fmt::print("{} {} M={} N={} K={}{} ({} kernel) on {} (profile {})\n", matvec ? "matvec" : "matmul", o.type, M, N, K,
             moe, kernel, ctx.caps().name, ctx.profile().name);
  fmt::print("  median {:.3f} ms (min {:.3f}, {}): {:.2f} GB/s of weights, {:.2f} GFLOP/s\n", tm.ms_median, tm.ms_min,
             cli::count(tm.runs, "run"), bytes / seconds / 1e9, flops / seconds / 1e9);
  if (cpu) fmt::print("  CPU memory read bandwidth (same run): {:.2f} GB/s\n", cpu_gbps);
}

void add_run_options(CLI::App* cmd, MatOptions& o) {
  cmd->add_option("--type", o.type, "Weight type")->type_name("TYPE")->check(one_of(weight_type_names()));
  cmd->add_option("--experts", o.experts, "E > 0: mixture-of-experts products over E matrices (matmul_id)")
      ->type_name("E")
      ->check(int_range(0, 1024));
  cmd->add_option("--used", o.used, "Experts per token (with --experts)")->type_name("COUNT")->check(int_range(1, 64));
  add_repeat_options(cmd, o.warmup, o.runs);
  add_common_options(cmd, o.common);
}

}  // namespace

void add_matvec_bench(CLI::App& app) {
  static MatOptions o;
  CLI::App* cmd = app.add_subcommand("matvec", "Decode matrix-vector product y = W x (GB/s of weights read)");
  cmd->add_option("--rows", o.m, "M: weight rows (outputs)")->type_name("M")->check(int_range(1, 1 << 24));
  cmd->add_option("--cols", o.k, "K: weight columns (inputs), a multiple of the type's block")
      ->type_name("K")
      ->check(int_range(1, 1 << 20));
  cmd->add_option("--tokens", o.n, "N: tokens (decode batches)")->type_name("N")->check(int_range(1, 8));
  add_run_options(cmd, o);
  cmd->callback([] { run(o, true); });
}

void add_matmul_bench(CLI::App& app) {
  static MatOptions o;
  o.n = 512;
  CLI::App* cmd = app.add_subcommand("matmul", "Matrix product through ops::matmul (GFLOP/s)");
  cmd->add_option("--m", o.m, "M: weight rows (outputs)")->type_name("M")->check(int_range(1, 1 << 24));
  cmd->add_option("--n", o.n, "N: tokens")->type_name("N")->check(int_range(1, 1 << 16));
  cmd->add_option("--k", o.k, "K: weight columns (inputs), a multiple of the type's block")
      ->type_name("K")
      ->check(int_range(1, 1 << 20));
  add_run_options(cmd, o);
  cmd->callback([] { run(o, false); });
}

}  // namespace vkllm::bench
