// `vkllm perplexity [-m MODEL] -f TEXTFILE [--ctx N]`: perplexity of a model over a text, scored
// as scripts/train_default_model scores it (docs/decisions.md "Default model"): the text is one
// token stream ([BOS] + tokens); each full chunk of ctx tokens starts over from an empty cache
// with BOS in its first place, and positions 0..ctx-2 predict the next token. llama.cpp scores
// only the second half of each chunk; that number is printed too.
#include <fmt/format.h>
#include <cmath>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "commands.h"
#include "error.h"
#include "model_options.h"

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

std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  ENSURE(in, fmt::format("{}: cannot read the file", path));
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

void perplexity(PerplexityOptions o) {
  std::string text = read_file(o.file);
  if (!o.model.ctx) o.model.ctx = 512;
  LoadedModel m = load_model(o.model);
  Engine& e = *m.engine;
  uint32_t ctx = std::min(o.model.ctx, e.n_ctx());
  std::vector<int32_t> tokens = e.tokenizer().encode(text, true);
  if (tokens.empty() || tokens[0] != e.tokenizer().bos()) tokens.insert(tokens.begin(), e.tokenizer().bos());
  size_t chunks = tokens.size() / ctx;
  ENSURE(chunks > 0,
         fmt::format("{}: {} tokens, fewer than one chunk of {} (use a smaller --ctx)", o.file, tokens.size(), ctx));
  Score s;
  uint32_t vocab = e.config().vocab_size;
  for (size_t c = 0; c < chunks; ++c) {
    std::vector<int32_t> chunk(tokens.begin() + c * ctx, tokens.begin() + (c + 1) * ctx);
    chunk[0] = e.tokenizer().bos();
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
    return fmt::print("{}\n", j.dump(2));
  }
  fmt::print("perplexity {:.4f} over {} tokens ({} chunks of {}); second half of each chunk (llama.cpp): {:.4f}\n", ppl,
             s.n, chunks, ctx, half);
}

}  // namespace

void add_perplexity_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("perplexity", "Perplexity of the model over a text file");
  auto o = std::make_shared<PerplexityOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("-f,--file", o->file, "Text file")->required();
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { perplexity(*o); });
}

}  // namespace vkllm::cli
