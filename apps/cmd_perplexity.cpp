// `vkllm perplexity [-m MODEL] -f TEXTFILE [--ctx N]`: perplexity of a model over a text, scored
// in chunks of ctx tokens (default: the model's training context, at most 4096),
// as scripts/train_default_model scores it (docs/decisions.md "Default model"): the text is one
// token stream ([BOS] + tokens); each full chunk of ctx tokens starts over from an empty cache
// with BOS in its first place, and positions 0..ctx-2 predict the next token. llama.cpp scores
// only the second half of each chunk; that number is printed too.
#include <fmt/format.h>
#include <cmath>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "error.h"
#include "model_options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

struct PerplexityOptions {
  ModelOptions model;
  std::string file;
  bool json = false;
};

struct Score {
  double nll = 0, nll_second_half = 0;
  size_t n = 0, n_second_half = 0;
};

// -log softmax(logits)[target], in double.
double nll(std::span<const float> logits, int32_t target) {
  double max = *std::max_element(logits.begin(), logits.end()), sum = 0;
  for (float l : logits) sum += std::exp(double(l) - max);
  return std::log(sum) + max - logits[size_t(target)];
}

void perplexity(PerplexityOptions o) {
  ENSURE(o.model.ctx == 0 || o.model.ctx >= 2,
         fmt::format("--ctx {}: a chunk needs at least 2 tokens (one predicts the next)", o.model.ctx));
  std::string text = read_text_file(o.file);
  ModelPlan plan = plan_model(o.model);
  uint32_t ctx = plan.n_ctx;
  Tokenizer tokenizer = Tokenizer::from_gguf(*plan.file);
  std::vector<int32_t> tokens = tokenizer.encode(text, true);
  int32_t bos = tokenizer.bos();
  ENSURE(bos >= 0, fmt::format("{}: the model has no BOS token to start each chunk with", plan.file->name()));
  if (tokens.empty() || tokens[0] != bos) tokens.insert(tokens.begin(), bos);
  size_t chunks = tokens.size() / ctx;
  ENSURE(chunks > 0, fmt::format("{}: {} with BOS, fewer than one chunk of {} (use a smaller --ctx)", o.file,
                                 count(tokens.size(), "token"), ctx));
  LoadedModel m = load_model(std::move(plan), o.model);
  Engine& e = *m.engine;
  Score s;
  uint32_t vocab = e.config().vocab_size;
  for (size_t c = 0; c < chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + c * ctx, tokens.begin() + (c + 1) * ctx);
    chunk[0] = bos;
    e.reset();
    std::vector<float> logits = e.eval_all(chunk);
    for (uint32_t j = 0; j + 1 < ctx; ++j) {
      double l = nll(std::span<const float>(logits).subspan(size_t(j) * vocab, vocab), chunk[j + 1]);
      s.nll += l, ++s.n;
      if (j >= ctx / 2) s.nll_second_half += l, ++s.n_second_half;
    }
    if (!o.json) std::fprintf(stderr, "[%zu]%.4f%s", c + 1, std::exp(s.nll / s.n), c + 1 == chunks ? "\n" : " ");
  }
  double ppl = std::exp(s.nll / s.n), half = std::exp(s.nll_second_half / std::max<size_t>(1, s.n_second_half));
  if (o.json) {
    nlohmann::json j = {{"file", o.file},
                        {"ctx", ctx},
                        {"chunks", chunks},
                        {"tokens", tokens.size()},
                        {"scored", s.n},
                        {"perplexity", ppl},
                        {"perplexity_second_half", half},
                        {"nll", s.nll / s.n}};
    return print_json(j);
  }
  write_stdout(fmt::format("perplexity {:.4f} over {} ({} of {}); second half of each chunk (llama.cpp): {:.4f}\n", ppl,
                           count(s.n, "token"), count(chunks, "chunk"), ctx, half));
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of the model over a text file");
  auto o = std::make_shared<PerplexityOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("-f,--file", o->file, "Text file; -: standard input")
      ->type_name("FILE")
      ->required()
      ->check(non_empty);
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { perplexity(*o); });
}

}  // namespace vkllm::cli
