// `vkllm attention [-m MODEL] (--tokens 1,2,3 | -p TEXT) --layer L [--json]`: the softmax
// probabilities of every head of layer L over a sequence, from the GPU forward's own Q and KV
// cache (Engine::attention_probabilities). --json: {"layer", "tokens", "pieces", "heads":
// [head][query][key]} on one line; otherwise the few keys each query of each head attends to most.
#include <fmt/format.h>

#include "arch/architecture.h"
#include "commands.h"
#include "engine/attention_map.h"
#include "error.h"
#include "model_options.h"
#include "output.h"
#include "text/tokenizer.h"

namespace vkllm::cli {

namespace {

constexpr size_t kTopKeys = 3;  // keys per query in the text view

struct AttentionOptions {
  ModelOptions model;
  std::string tokens;
  std::optional<std::string> prompt;
  uint32_t layer = 0;
  bool json = false;
};

// Token ids from --tokens or the tokenized -p text (BOS as the model adds it), checked against
// the model before anything is loaded.
std::vector<int32_t> input_tokens(const AttentionOptions& o, const ModelPlan& plan) {
  std::vector<int32_t> ids;
  if (o.prompt) {
    ENSURE(!o.prompt->empty(), "-p: the text is empty");
    ids = Tokenizer::from_gguf(*plan.file).encode(*o.prompt, true, true);
    ENSURE(!ids.empty(), "-p: the text gives no tokens");
  } else {
    ids = parse_token_list(o.tokens);
  }
  check_token_ids(ids, plan.config.vocab_size);
  ENSURE(ids.size() <= plan.n_ctx,
         fmt::format("{} do not fit a context of {} (use --ctx)", count(ids.size(), "token"), plan.n_ctx));
  return ids;
}

std::string text_view(const AttentionMap& m, const std::string& model) {
  std::string out = fmt::format("layer {} of {}: {}, {} (the {} keys each query attends to most)\n", m.layer, model,
                                count(m.heads, "head"), count(m.size(), "token"), kTopKeys);
  std::vector<double> sinks = m.sinks ? sink_shares(m) : std::vector<double>{};
  for (uint32_t h = 0; h < m.heads; ++h) {
    out += sinks.empty() ? fmt::format("head {}\n", h)
                         : fmt::format("head {} (its sink takes {:.1f}% on average)\n", h, 100 * sinks[h]);
    for (size_t q = 0; q < m.size(); ++q) {
      out += fmt::format("  {:>4} {:<16}", q, fmt::format("'{}'", escape_piece(m.pieces[q])));
      for (size_t k : top_keys(m, h, q, kTopKeys))
        out += fmt::format("  {} '{}' {:.3f}", k, escape_piece(m.pieces[k]), m.at(h, q, k));
      out += '\n';
    }
  }
  return out;
}

void attention(const AttentionOptions& o) {
  ModelPlan plan = plan_model(o.model);
  ENSURE(o.layer < plan.config.n_layers,
         fmt::format("--layer {}: {} has {} layers (0 to {})", o.layer, plan.file->name(), plan.config.n_layers,
                     plan.config.n_layers - 1));
  ENSURE(plan.config.has_attention(o.layer),
         fmt::format("--layer {}: that layer of {} is {}, which has no attention map (layers with one: {})", o.layer,
                     plan.file->name(), describe(plan.config.mixer(o.layer)), attention_layers(plan.config)));
  std::vector<int32_t> ids = input_tokens(o, plan);
  std::string name = plan.file->name();
  LoadedModel m = load_model(std::move(plan), o.model);
  std::vector<float> probs = m.engine->attention_probabilities(ids, o.layer);
  AttentionMap map = attention_map(m.engine->tokenizer(), ids, o.layer, std::move(probs));
  map.sinks = m.engine->config().architecture().recipe.attention.sinks;
  if (o.json) return write_stdout(to_json(map).dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
  write_stdout(text_view(map, name));
}

}  // namespace

void add_attention_command(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("attention", "Print the attention probabilities of every head of one layer over a sequence");
  auto o = std::make_shared<AttentionOptions>();
  add_model_options(cmd, o->model);
  auto* tokens = cmd->add_option("--tokens", o->tokens, "Token ids, separated by commas or spaces")->type_name("IDS");
  auto* prompt = cmd->add_option("-p,--prompt", o->prompt, "A text, tokenized (BOS as the model adds it)")
                     ->type_name("TEXT")
                     ->excludes(tokens);
  tokens->excludes(prompt);
  cmd->add_option("--layer", o->layer, "The layer (0 is the first)")
      ->type_name("L")
      ->required()
      ->check(int_range(0, 1 << 20))
      ->default_str("");
  cmd->add_flag("--json", o->json, R"(One JSON line: {"layer", "tokens", "pieces", "heads": [head][query][key]})");
  cmd->callback([o, tokens, prompt] {
    if (tokens->count() + prompt->count() == 0)  // a bad command line: exit 2
      throw CLI::ValidationError("no sequence: give --tokens IDS or -p TEXT");
    attention(*o);
  });
}

}  // namespace vkllm::cli
