// vkllm-bench coopmat: the prefill product on cooperative matrices against the tiled f32 kernel,
// per weight type and shape (default: an 8B Llama layer's products at 512 tokens): both timed by
// GPU timestamps, their results compared (NMSE), and the pipelines' self-checks reported. The GPU
// check of issue 39 (scripts/gpu_check_coopmat) runs it; --tile sweeps tiles without a rebuild.
#include <fmt/format.h>
#include <map>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "bench.h"
#include "error.h"
#include "ops.h"
#include "output.h"

namespace vkllm::bench {

namespace {

struct CoopOptions {
  CommonOptions common;
  std::string types = "all";
  std::string shapes = "6144x4096,4096x4096,14336x4096,4096x14336";  // qkv, o, gate|up, down
  uint32_t n = 512;
  std::string tile;  // BMxBNxBK/WMxWN: every product on this tile
  std::string api;   // auto, nv, khr (as VKLLM_COOPMAT)
  int warmup = 2, runs = 5;
};

std::vector<std::string> split(const std::string& s) {
  std::vector<std::string> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');)
    if (!part.empty()) out.push_back(part);
  return out;
}

std::vector<DType> parse_types(const std::string& s) {
  std::vector<DType> out;
  for (DType t : ops::weight_types())
    if (ops::coop_supports(t) && (s == "all" || std::ranges::count(split(s), std::string(info(t).name))))
      out.push_back(t);
  for (const std::string& name : split(s))
    ENSURE(name == "all" || (dtype_named(name) && ops::coop_supports(*dtype_named(name))),
           fmt::format("--type {}: not a weight type with a cooperative-matrix kernel", name));
  return out;
}

std::vector<std::pair<uint32_t, uint32_t>> parse_shapes(const std::string& s) {
  static const std::regex mk(R"((\d{1,6})x(\d{1,6}))");
  std::vector<std::pair<uint32_t, uint32_t>> out;
  for (const std::string& part : split(s)) {
    std::smatch m;
    ENSURE(std::regex_match(part, m, mk), fmt::format("--shapes {}: not MxK", part));
    out.emplace_back(std::stoul(m[1]), std::stoul(m[2]));
    ENSURE(out.back().first > 0 && out.back().second > 0, fmt::format("--shapes {}: empty", part));
  }
  return out;
}

CoopTile parse_tile(const std::string& s) {
  static const std::regex t(R"((\d{1,3})x(\d{1,3})x(\d{1,3})/(\d{1,3})x(\d{1,3}))");
  std::smatch m;
  ENSURE(std::regex_match(s, m, t), fmt::format("--tile {}: not BMxBNxBK/WMxWN (e.g. 128x128x32/64x64)", s));
  return {uint32_t(std::stoul(m[1])), uint32_t(std::stoul(m[2])), uint32_t(std::stoul(m[3])),
          uint32_t(std::stoul(m[4])), uint32_t(std::stoul(m[5]))};
}

double nmse(const std::vector<float>& got, const std::vector<float>& want) {
  double num = 0, den = 0;
  for (size_t i = 0; i < want.size(); ++i) {
    double d = double(got[i]) - want[i];
    num += d * d, den += double(want[i]) * want[i];
  }
  return den > 0 ? num / den : num;
}

struct Row {
  DType type;
  uint32_t m, k, n;
  Timing tiled, coop;
  std::optional<CoopTile> tile;  // none: no checked kernel for it
  double nmse = 0;
};

Row measure(const Context& ctx, const CoopOptions& o, DType t, uint32_t M, uint32_t K) {
  ENSURE(K % info(t).block_values == 0,
         fmt::format("--shapes {}x{}: K is not a multiple of {}'s block", M, K, info(t).name));
  uint32_t N = o.n;
  Row r{.type = t, .m = M, .k = K, .n = N};
  Buffer w = bench_weights(ctx, t, M, K);
  std::vector<float> xs = random_values(size_t(N) * K, 2);
  Buffer x(ctx, xs.size() * 4, Memory::Device, "x"), y_tiled(ctx, uint64_t(N) * M * 4, Memory::Device, "y tiled"),
      y_coop(ctx, uint64_t(N) * M * 4, Memory::Device, "y coopmat");
  x.upload(std::span<const float>(xs));
  auto timed = [&](ops::MatmulKernel kernel, Buffer& y) {
    return time_stream(
        ctx, [&](Stream& s) { ops::matmul_fused(s, t, w, x, y, M, N, K, {.kernel = kernel}); }, o.warmup, o.runs);
  };
  r.tiled = timed(ops::MatmulKernel::Tiled, y_tiled);
  r.tile = ops::coop_choice(ctx, t, M, N);
  if (!r.tile) return r;
  r.coop = timed(ops::MatmulKernel::Coop, y_coop);
  r.nmse = nmse(y_coop.download<float>(size_t(N) * M), y_tiled.download<float>(size_t(N) * M));
  return r;
}

double tflops(const Row& r, const Timing& t) { return 2.0 * r.m * r.n * r.k / (t.ms_median * 1e-3) / 1e12; }

// An 8B Llama forward at N tokens spends, per layer, one product of each default shape but two of
// 14336x4096 (gate and up): the matrix time of 32 layers, where every shape was measured.
std::optional<std::pair<double, double>> llama8b_ms(const std::vector<Row>& rows, DType t) {
  const std::pair<std::pair<uint32_t, uint32_t>, int> layer[] = {
      {{6144, 4096}, 1}, {{4096, 4096}, 1}, {{14336, 4096}, 2}, {{4096, 14336}, 1}};
  double tiled = 0, coop = 0;
  for (const auto& [mk, times] : layer) {
    auto it =
        std::ranges::find_if(rows, [&](const Row& r) { return r.type == t && r.m == mk.first && r.k == mk.second; });
    if (it == rows.end() || !it->tile) return std::nullopt;
    tiled += times * it->tiled.ms_median, coop += times * it->coop.ms_median;
  }
  return std::make_pair(32 * tiled, 32 * coop);
}

void run(const CoopOptions& o) {
  std::vector<DType> types = parse_types(o.types);
  auto shapes = parse_shapes(o.shapes);
  ContextOptions co = o.common.context();
  co.coopmat = o.api;
  Context ctx(co);
  if (!o.tile.empty()) {  // every product on this tile
    Profile p = ctx.profile();
    p.coop_tile = parse_tile(o.tile), p.coop_fill_wgs = 0;
    ctx.set_profile(p);
    if (ctx.coopmat().api != CoopApi::None) {
      ops::CoopTileNeeds n =
          ops::coop_tile_needs(p.coop_tile, ctx.coopmat().shape, ctx.profile().run_subgroup_size, DType::Q4_0);
      ENSURE(n.valid && n.shared_bytes <= ctx.caps().max_shared_memory &&
                 n.threads <= ctx.caps().max_workgroup_invocations,
             fmt::format("--tile {}: not a tile this device and shape {} can run ({} threads, {} B of shared memory)",
                         o.tile, coop_shape_name(ctx.coopmat().shape), n.threads, n.shared_bytes));
    }
  }
  ops::check_all_coop(ctx);
  std::vector<Row> rows;
  for (DType t : types)
    for (auto [M, K] : shapes) rows.push_back(measure(ctx, o, t, M, K));

  if (o.common.json) {
    nlohmann::json out = {
        {"device", ctx.caps().name},
        {"profile", ctx.profile().name},
        {"api", coop_api_name(ctx.coopmat().api)},
        {"shape",
         ctx.coopmat().api == CoopApi::None ? nlohmann::json() : nlohmann::json(coop_shape_name(ctx.coopmat().shape))},
        {"why_not", ctx.coopmat().why_not},
        {"report", coop_report(ctx.coopmat(), ctx.coop_checks())},
        {"rows", nlohmann::json::array()}};
    for (const Row& r : rows) {
      nlohmann::json j = {
          {"type", info(r.type).name},         {"m", r.m}, {"k", r.k}, {"n", r.n}, {"tiled_ms", r.tiled.ms_median},
          {"tiled_tflops", tflops(r, r.tiled)}};
      if (r.tile)
        j.update({{"tile", coop_tile_name(*r.tile)},
                  {"coop_ms", r.coop.ms_median},
                  {"coop_tflops", tflops(r, r.coop)},
                  {"nmse", r.nmse}});
      out["rows"].push_back(j);
    }
    for (DType t : types)
      if (auto ms = llama8b_ms(rows, t))
        out["llama8b"][info(t).name] = {{"tiled_ms", ms->first}, {"coop_ms", ms->second}};
    fmt::print("{}\n", out.dump());
    return;
  }
  fmt::print("coopmat on {} (profile {}, N = {})\n", ctx.caps().name, ctx.profile().name, o.n);
  for (const std::string& line : coop_report(ctx.coopmat(), ctx.coop_checks())) fmt::print("  {}\n", line);
  fmt::print("{:<7} {:>6} {:>6}  {:>9} {:>8}  {:>9} {:>8} {:>7}  {:>9}  {}\n", "type", "M", "K", "tiled ms", "TFLOP/s",
             "coop ms", "TFLOP/s", "speedup", "nmse", "tile");
  for (const Row& r : rows) {
    fmt::print("{:<7} {:>6} {:>6}  {:>9.3f} {:>8.2f}", info(r.type).name, r.m, r.k, r.tiled.ms_median,
               tflops(r, r.tiled));
    if (r.tile)
      fmt::print("  {:>9.3f} {:>8.2f} {:>6.2f}x  {:>9.2e}  {}\n", r.coop.ms_median, tflops(r, r.coop),
                 r.tiled.ms_median / r.coop.ms_median, r.nmse, coop_tile_name(*r.tile));
    else
      fmt::print("  no checked cooperative-matrix kernel\n");
  }
  for (DType t : types)
    if (auto ms = llama8b_ms(rows, t))
      fmt::print(
          "8B Llama at {} tokens, {} matrix products of 32 layers: tiled {:.1f} ms, coopmat {:.1f} ms "
          "(at most {:.0f} tokens/s from them alone)\n",
          o.n, info(t).name, ms->first, ms->second, o.n / (ms->second * 1e-3));
}

}  // namespace

void add_coopmat_bench(CLI::App& app) {
  static CoopOptions o;
  CLI::App* cmd = app.add_subcommand(
      "coopmat", "Prefill products on cooperative matrices vs the tiled kernel (TFLOP/s, NMSE, self-checks)");
  cmd->add_option("--type", o.types, "Weight types, comma-separated, or all")->type_name("TYPES");
  cmd->add_option("--shapes", o.shapes, "Products as MxK, comma-separated (default: an 8B Llama layer's)")
      ->type_name("MxK,...");
  cmd->add_option("--n", o.n, "N: tokens")->type_name("N")->check(int_range(1, 1 << 16));
  cmd->add_option("--tile", o.tile, "Every product on this tile, BMxBNxBK/WMxWN (e.g. 128x128x32/64x64)")
      ->type_name("TILE");
  cmd->add_option("--api", o.api, "Cooperative matrices through: auto, nv, khr (as VKLLM_COOPMAT)")
      ->type_name("API")
      ->check(one_of({"auto", "nv", "khr"}));
  add_repeat_options(cmd, o.warmup, o.runs);
  add_common_options(cmd, o.common);
  cmd->callback([] { run(o); });
}

}  // namespace vkllm::bench
