// `vkllm bench [-m MODEL] [-p 128] [-n 64] [-d 0] [-r 3] [--parallel N] [--json] [--profile]`:
// prompt processing and generation speed, as llama-bench measures them (pp: one prompt of p
// tokens from an empty cache; tg: n single-token steps after d tokens of context, untimed, as
// llama-bench's -d; filled once and kept), median of r runs after a warm-up run; -p 0 measures
// generation only. --parallel N: tg steps decode N sequences at once (one token each, N KV-cache
// slots, from empty slots), the steady state of vkllm serve with N clients; tokens/s counts all
// of them. Also the dispatches one decode step records and the weight bytes it reads. --profile:
// GPU time per kernel of a decode step (the mean over the last run's steps: calls, ms, µs per
// call, share of the step, and which kernels besides the matrix products and attention take more
// than 5%), then of the prompt forward.
#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <chrono>
#include <map>
#include <nlohmann/json.hpp>
#include <random>

#include "commands.h"
#include "error.h"
#include "model_options.h"

namespace vkllm::cli {

namespace {

struct BenchOptions {
  ModelOptions model;
  uint32_t prompt = 128, gen = 64, depth = 0, reps = 3, parallel = 1;
  bool json = false, profile = false;
};

using Clock = std::chrono::steady_clock;

double seconds_since(Clock::time_point t0) { return std::chrono::duration<double>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

double prompt_run(Engine& e, const std::vector<int32_t>& tokens) {
  e.reset();
  auto t0 = Clock::now();
  e.eval(tokens);
  return tokens.size() / seconds_since(t0);
}

struct GenerationRun {
  double tokens_per_second;
  double host_ms_per_token;         // wall time not spent waiting for the GPU: step inputs, submit, argmax
  std::vector<KernelTime> kernels;  // profiling: every dispatch of every step, in order
};

// Keeps the last step's GPU time per dispatch (profiling streams only).
void add_timings(Engine& e, GenerationRun& run) {
  std::vector<KernelTime> t = e.transformer().last_timings();
  run.kernels.insert(run.kernels.end(), t.begin(), t.end());
}

// Every run starts from the same `depth` tokens of context (evaluated once, then kept).
GenerationRun generation_run(Engine& e, uint32_t n, uint32_t depth) {
  e.truncate(depth);
  int32_t token = 0;
  double waited = 0;
  GenerationRun run;
  auto t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) {
    auto logits = e.eval(std::span<const int32_t>(&token, 1));
    waited += e.transformer().last_wait_seconds();
    add_timings(e, run);
    token = int32_t(std::max_element(logits.begin(), logits.end()) - logits.begin());
  }
  double total = seconds_since(t0);
  run.tokens_per_second = n / total, run.host_ms_per_token = 1e3 * (total - waited) / n;
  return run;
}

// n steps that each decode one token of every slot's sequence (the slots start empty).
GenerationRun parallel_generation_run(Engine& e, uint32_t n) {
  uint32_t slots = e.slots(), vocab = e.config().vocab_size;
  std::vector<int32_t> tokens(slots);
  for (uint32_t s = 0; s < slots; ++s) tokens[s] = int32_t(s % vocab);
  std::vector<SeqChunk> batch(slots);
  double waited = 0;
  GenerationRun run;
  auto t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) {
    for (uint32_t s = 0; s < slots; ++s) batch[s] = {.slot = s, .pos0 = i, .tokens = std::span(&tokens[s], 1)};
    auto logits = e.step(batch);
    waited += e.transformer().last_wait_seconds();
    add_timings(e, run);
    for (uint32_t s = 0; s < slots; ++s) {
      auto row = logits.subspan(size_t(s) * vocab, vocab);
      tokens[s] = int32_t(std::max_element(row.begin(), row.end()) - row.begin());
    }
  }
  double total = seconds_since(t0);
  run.tokens_per_second = double(n) * slots / total, run.host_ms_per_token = 1e3 * (total - waited) / n;
  return run;
}

// The matrix products and attention: the kernels a decode step should spend its time in (issue
// 39: no other kernel above 5% of a step).
bool product_or_attention(const std::string& kernel) {
  for (const char* prefix : {"matvec", "matmul", "flash_attn", "attention"})
    if (kernel.starts_with(prefix)) return true;
  return false;
}

// GPU time per kernel over `steps` forwards (their dispatches in `times`), per forward, largest
// first: calls and ms per forward, µs per call, and the share of the forward's GPU time.
nlohmann::json kernel_table(const std::vector<KernelTime>& times, size_t steps = 1) {
  std::map<std::string, std::pair<int, double>> by_kernel;
  double total = 0;
  for (const KernelTime& k : times) by_kernel[k.name].first++, by_kernel[k.name].second += k.ms, total += k.ms;
  std::vector<std::pair<std::string, std::pair<int, double>>> rows(by_kernel.begin(), by_kernel.end());
  std::sort(rows.begin(), rows.end(), [](auto& a, auto& b) { return a.second.second > b.second.second; });
  nlohmann::json out = nlohmann::json::array();
  double n = double(std::max<size_t>(steps, 1));
  for (auto& [name, v] : rows)
    out.push_back({{"kernel", name},
                   {"calls", v.first / n},
                   {"ms", v.second / n},
                   {"us_per_call", 1e3 * v.second / v.first},
                   {"percent", total > 0 ? 100 * v.second / total : 0.0}});
  return out;
}

void print_table(const std::string& title, const nlohmann::json& table) {
  double total = 0;
  for (const auto& r : table) total += r["ms"].get<double>();
  fmt::print("{} {:.3f} ms of GPU time\n  {:<28} {:>7} {:>10} {:>10} {:>7}\n", title, total, "kernel", "calls", "ms",
             "us/call", "share");
  for (const auto& r : table)
    fmt::print("  {:<28} {:>7.4g} {:>10.3f} {:>10.2f} {:>6.1f}%\n", r["kernel"].get<std::string>(),
               r["calls"].get<double>(), r["ms"].get<double>(), r["us_per_call"].get<double>(),
               r["percent"].get<double>());
  std::vector<std::string> over;
  for (const auto& r : table)
    if (!product_or_attention(r["kernel"]) && r["percent"].get<double>() > 5)
      over.push_back(fmt::format("{} {:.1f}%", r["kernel"].get<std::string>(), r["percent"].get<double>()));
  fmt::print("  besides matrix products and attention, over 5%: {}\n",
             over.empty() ? "none" : fmt::format("{}", fmt::join(over, ", ")));
}

std::vector<int32_t> random_tokens(uint32_t n, uint32_t vocab, std::mt19937& rng) {
  std::vector<int32_t> v(n);
  for (int32_t& t : v) t = int32_t(rng() % vocab);
  return v;
}

// Weights a decode step reads: every tensor but the embedding table, of which it reads one row
// (unless the table is also the output projection).
uint64_t weight_bytes_per_token(const Weights& w) {
  bool tied = &w.output() == &w.token_embd();
  return w.device_bytes() - (tied ? 0 : w.token_embd().view.size);
}

void bench(BenchOptions o) {
  // Like llama-bench, a run at depth gets the context it needs (unless --ctx says otherwise).
  if (o.depth && !o.model.ctx) o.model.ctx = std::max(o.prompt, o.depth + o.gen);
  ModelPlan plan = plan_model(o.model);
  ENSURE(o.prompt <= plan.n_ctx,
         fmt::format("-p {}: more prompt tokens than the context of {} (use --ctx)", o.prompt, plan.n_ctx));
  ENSURE(o.gen <= plan.n_ctx,
         fmt::format("-n {}: more generated tokens than the context of {} (use --ctx)", o.gen, plan.n_ctx));
  LoadedModel m = load_model(std::move(plan), o.model, o.profile, o.parallel);
  Engine& e = *m.engine;
  std::mt19937 rng(1);
  std::vector<int32_t> prompt = random_tokens(o.prompt, e.config().vocab_size, rng);
  ENSURE(o.depth == 0 || o.parallel == 1, "-d with --parallel is not supported yet");
  ENSURE(
      o.depth + o.gen <= e.n_ctx(),
      fmt::format("-d {} + -n {} tokens do not fit the context of {} tokens (use --ctx)", o.depth, o.gen, e.n_ctx()));
  auto generate = [&](uint32_t n) {
    return o.parallel > 1 ? parallel_generation_run(e, n) : generation_run(e, n, o.depth);
  };
  if (o.prompt) prompt_run(e, prompt);  // warm-up: records graphs, builds pipelines
  std::vector<double> pp, tg, host_ms;
  for (uint32_t r = 0; r < o.reps && o.prompt; ++r) pp.push_back(prompt_run(e, prompt));
  nlohmann::json ops;
  if (o.profile && o.prompt) ops["prompt"] = kernel_table(e.transformer().last_timings());
  e.reset();
  if (o.depth) {
    e.eval(random_tokens(o.depth, e.config().vocab_size, rng));  // the context every tg run starts from
    e.checkpoint(0, o.depth);                                    // hybrids: each run goes back to it
  }
  generate(std::min(o.gen, 2u));  // warm-up
  size_t dispatches = e.transformer().last_dispatch_count();
  for (uint32_t r = 0; r < o.reps; ++r) {
    GenerationRun g = generate(o.gen);
    tg.push_back(g.tokens_per_second), host_ms.push_back(g.host_ms_per_token);
    if (o.profile && r + 1 == o.reps) ops["generation"] = kernel_table(g.kernels, o.gen);  // per step, the last run's
  }
  nlohmann::json j = {{"model", m.file->name()},
                      {"device", m.ctx->caps().name},
                      {"profile", m.ctx->profile().name},
                      {"n_prompt", o.prompt},
                      {"n_gen", o.gen},
                      {"parallel", o.parallel},
                      {"n_depth", o.depth},
                      {"kv_type", info(e.kv_cache().type()).name},
                      {"kv_bytes_per_token", e.kv_cache().bytes_per_token()},
                      {"repetitions", o.reps},
                      {"prompt_tokens_per_second", o.prompt ? median(pp) : 0.0},
                      {"generation_tokens_per_second", median(tg)},
                      {"prompt_runs", pp},
                      {"generation_runs", tg},
                      {"generation_host_ms_per_token", median(host_ms)},
                      {"dispatches_per_token", dispatches},
                      {"weight_bytes_per_token", weight_bytes_per_token(e.weights())},
                      {"gpu_profiling", o.profile}};
  if (o.profile) j["kernels"] = ops;
  if (o.json) return fmt::print("{}\n", j.dump(2));
  fmt::print("model {} on {} (profile {})\n", m.file->name(), m.ctx->caps().name, m.ctx->profile().name);
  fmt::print("KV cache {} ({} bytes per token)\n", info(e.kv_cache().type()).name, e.kv_cache().bytes_per_token());
  if (o.prompt) fmt::print("pp{}: {:.2f} tokens/s\n", o.prompt, median(pp));
  fmt::print("tg{}{}{}: {:.2f} tokens/s   (median of {}{})\n", o.gen, o.depth ? fmt::format(" @ d{}", o.depth) : "",
             o.parallel > 1 ? fmt::format(" x {} sequences", o.parallel) : "", median(tg), o.reps,
             o.profile ? "; timestamps and barriers between all kernels slow these down" : "");
  fmt::print("host work per generation step: {:.3f} ms (the rest is waiting for the GPU)\n", median(host_ms));
  fmt::print("dispatches per generation step: {}\n", dispatches);
  if (!o.profile) return;
  print_table(fmt::format("GPU time per kernel of a decode step{} (mean of {} steps):",
                          o.parallel > 1 ? fmt::format(" of {} sequences", o.parallel) : "", o.gen),
              ops["generation"]);
  if (o.prompt) print_table(fmt::format("GPU time per kernel, one pp{} forward:", o.prompt), ops["prompt"]);
}

}  // namespace

void add_bench_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("bench", "Measure prompt and generation tokens/s");
  auto o = std::make_shared<BenchOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("-p,--n-prompt", o->prompt, "Prompt tokens (0: measure generation only)")
      ->type_name("N")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("-n,--n-gen", o->gen, "Generated tokens")->type_name("N")->check(int_range(1, 1 << 20));
  cmd->add_option("-d,--depth", o->depth, "Tokens of context before the generation runs (untimed)")
      ->type_name("N")
      ->check(int_range(0, 1 << 20));
  cmd->add_option("-r,--repetitions", o->reps, "Runs per measurement (median)")
      ->type_name("N")
      ->check(int_range(1, 1000));
  cmd->add_option("--parallel", o->parallel, "tg: sequences decoding together, one token each per step")
      ->type_name("N")
      ->check(int_range(1, 256));
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->add_flag("--profile", o->profile, "GPU time per kernel (adds timestamps and barriers)");
  cmd->callback([o] { bench(*o); });
}

}  // namespace vkllm::cli
