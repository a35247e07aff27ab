// vkllm-bench: kernel benchmarks (not tests). Each apps/bench_<name>.cpp adds one subcommand;
// the helpers here time a recorded stream by GPU timestamps and measure CPU memory bandwidth.
#pragma once
#include <CLI/CLI.hpp>
#include <functional>

#include "buffer.h"
#include "context.h"
#include "dtype.h"
#include "options.h"
#include "stream.h"

namespace vkllm::bench {

using cli::int_range;
using cli::one_of;

struct Timing {
  double ms_median = 0;
  double ms_min = 0;
  int runs = 0;
};

// Records `record` once into a profiling stream, replays it `warmup` times untimed, then `runs`
// times, and returns the GPU time (first to last timestamp) per replay.
Timing time_stream(const Context& ctx, const std::function<void(Stream&)>& record, int warmup = 2, int runs = 10);

// Host memory read bandwidth in GB/s (sum over a buffer larger than the caches, all cores).
double cpu_read_gbps();

// n values drawn uniformly from [-1, 1) with this seed.
std::vector<float> random_values(size_t n, uint32_t seed);
// M rows of realistic weights of type t: 64 distinct random rows quantised by the reference,
// repeated (a matrix of random bytes would hold NaN and subnormal scales).
Buffer bench_weights(const Context& ctx, DType t, uint32_t M, uint32_t K);

// Common options: --device, --profile, --json.
struct CommonOptions {
  std::optional<uint32_t> device;
  std::string profile;
  bool json = false;
  ContextOptions context() const { return {.device = device, .profile = profile}; }
};
void add_common_options(CLI::App* cmd, CommonOptions& o);
// --warmup N (>= 0) and --runs N (>= 1).
void add_repeat_options(CLI::App* cmd, int& warmup, int& runs);
// The names of ops::weight_types(): what --type accepts.
std::vector<std::string> weight_type_names();

void add_copy_bench(CLI::App& app);
void add_matvec_bench(CLI::App& app);
void add_matmul_bench(CLI::App& app);
void add_coopmat_bench(CLI::App& app);
void add_attention_bench(CLI::App& app);
void add_fixture_command(CLI::App& app);
void add_elementwise_bench(CLI::App& app);
void add_serve_bench(CLI::App& app);
void add_tokenize_bench(CLI::App& app);
void add_grammar_bench(CLI::App& app);
void add_vision_bench(CLI::App& app);

}  // namespace vkllm::bench
