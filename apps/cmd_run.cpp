// `vkllm run [-m MODEL] -p TEXT [-n N] [--temp T] [--top-k K] [--top-p P] [--seed S] ...`:
// generates text, streaming tokens as they come; ends with prompt and generation tokens/s.
#include <fmt/format.h>
#include <cstdio>
#include <random>

#include "commands.h"
#include "engine/sampler.h"
#include "error.h"
#include "model_options.h"

namespace vkllm::cli {

namespace {

struct RunOptions {
  ModelOptions model;
  std::string prompt;
  uint32_t n = 128;
  SamplerOptions sampling;
  std::optional<uint64_t> seed;
};

void run(RunOptions& o) {
  LoadedModel m = load_model(o.model);
  Engine& engine = *m.engine;
  const Tokenizer& tok = engine.tokenizer();
  o.sampling.seed = o.seed ? *o.seed : std::random_device{}();
  Sampler sampler(o.sampling);
  std::vector<int32_t> prompt = tok.encode(o.prompt, true);
  ENSURE(prompt.size() < engine.n_ctx(), fmt::format("the prompt has {} tokens, more than fit the context of {} "
                                                     "tokens with one to generate (use --ctx)",
                                                     prompt.size(), engine.n_ctx()));
  MemoryReport mem = engine.memory();
  auto mib = [](uint64_t b) { return b / 1048576.0; };
  const KvCache& kv = engine.kv_cache();
  std::fprintf(stderr, "%s on %s: weights %.1f MiB, KV cache %.1f MiB (%u tokens x %llu B, %s), activations %.1f MiB\n",
               m.file->name().c_str(), m.ctx->caps().name.c_str(), mib(mem.weights), mib(mem.kv_cache), engine.n_ctx(),
               static_cast<unsigned long long>(kv.bytes_per_token()), std::string(info(kv.type()).name).c_str(),
               mib(mem.activations));
  std::fwrite(o.prompt.data(), 1, o.prompt.size(), stdout);
  std::fflush(stdout);
  Detokenizer detok(tok);
  GenerationStats stats = generate(engine, sampler, prompt, o.n, [&](int32_t token) {
    if (tok.is_end_of_generation(token)) return false;
    std::string text = detok.push(token);
    std::fwrite(text.data(), 1, text.size(), stdout);
    std::fflush(stdout);
    return true;
  });
  std::string rest = detok.flush();
  std::fwrite(rest.data(), 1, rest.size(), stdout);
  std::fputc('\n', stdout);
  std::fflush(stdout);
  std::fprintf(stderr, "prompt: %u tokens, %.1f tokens/s; generation: %u tokens, %.1f tokens/s (seed %llu)\n",
               stats.prompt_tokens, stats.prompt_tps(), stats.generated_tokens, stats.generation_tps(),
               (unsigned long long)o.sampling.seed);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  auto o = std::make_shared<RunOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("-p,--prompt", o->prompt, "Prompt text")->required();
  cmd->add_option("-n,--n-predict", o->n, "Tokens to generate");
  cmd->add_option("--temp", o->sampling.temperature, "Temperature (0: greedy)")->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-k", o->sampling.top_k, "Keep the k most likely tokens (0: all)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--top-p", o->sampling.top_p, "Keep the most likely tokens up to this total probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--min-p", o->sampling.min_p, "Drop tokens below this fraction of the best's probability")
      ->check(CLI::Range(0.0f, 1.0f));
  cmd->add_option("--repeat-penalty", o->sampling.repeat_penalty, "Penalty for recent tokens (1: off)");
  cmd->add_option("--repeat-last-n", o->sampling.repeat_last_n, "How many recent tokens the penalty sees");
  cmd->add_option("--seed", o->seed, "Random seed (default: random, printed at the end)");
  cmd->callback([o] { run(*o); });
}

}  // namespace vkllm::cli
