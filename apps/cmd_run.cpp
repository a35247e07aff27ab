// `vkllm run [-m MODEL | -hf USER/REPO[:QUANT]] ([MODEL] TEXT | -p TEXT | -f FILE | a pipe) [-n N]
// [sampling] [--stop S] [--json] ...`: generates text, streaming it as it comes, and ends with
// prompt and generation tokens/s and the seed on stderr. Ctrl-C stops early with the same statistics (exit 130); --json
// prints one object instead: text, tokens, log-probabilities, finish reason and timings.
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>

#include "commands.h"
#include "engine/image_prompt.h"
#include "engine/logprobs.h"
#include "error.h"
#include "graph/vision_encoder.h"
#include "image/image_decode.h"
#include "interrupt.h"
#include "model_options.h"
#include "output.h"
#include "projector_info.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_grammar.h"
#include "text/stop_strings.h"

namespace vkllm::cli {

namespace {

struct RunOptions {
  ModelOptions model;
  PromptOptions prompt;
  GenerationOptions gen;
  bool json = false;
  uint32_t logprobs = 0;
  std::string color = "off";
  std::optional<std::string> grammar_file, schema_file;  // --grammar, --json-schema
  std::vector<std::string> images;                       // --image, repeatable
};

// --image with --mmproj: the projector read and every image decoded and preprocessed before the
// model loads, so a bad file is one error and no wait.
struct Images {
  ProjectorFile proj;
  std::vector<VisionInput> inputs;
};

Images read_images(const RunOptions& o, uint32_t model_dim) {
  Images im;
  if (o.images.empty()) return im;
  ENSURE(!mmproj_path(o.model).empty(), "--image needs the model's projector: --mmproj FILE (its mmproj-*.gguf)");
  im.proj = open_projector(o.model, model_dim);
  for (const std::string& path : o.images)
    im.inputs.push_back(preprocess_image(load_image_file(path), *im.proj.config));
  return im;
}

// The chosen token's log-probability under the model's distribution, and the top n alternatives.
nlohmann::json logprob_entry(const Tokenizer& tok, std::span<const float> logits, int32_t id, uint32_t top_n) {
  TokenLogprob lp = token_logprob(logits, id, top_n);
  nlohmann::json e = {{"token", id}, {"text", tok.piece(id)}, {"logprob", lp.logprob}};
  if (top_n == 0) return e;
  e["top"] = nlohmann::json::array();
  for (auto [t, l] : lp.top) e["top"].push_back({{"token", t}, {"text", tok.piece(t)}, {"logprob", l}});
  return e;
}

// --grammar FILE (GBNF) or --json-schema FILE, compiled against the model's vocabulary; errors
// name the file. Null when neither was given.
std::unique_ptr<OutputConstraint> read_constraint(const RunOptions& o, const Tokenizer& tok) {
  if (!o.grammar_file && !o.schema_file) return nullptr;
  const std::string& path = o.grammar_file ? *o.grammar_file : *o.schema_file;
  std::string text = read_text_file(path), gbnf = text;
  try {
    if (o.schema_file) {
      nlohmann::ordered_json schema = nlohmann::ordered_json::parse(text, nullptr, false);
      ENSURE(!schema.is_discarded(), "not valid JSON");
      gbnf = grammar::json_schema_gbnf(schema);
    }
    auto g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf, &tok));
    auto trie = std::make_shared<const grammar::TokenTrie>(tok);
    ConstraintSpec spec{.automaton = std::make_shared<grammar::GrammarAutomaton>(std::move(g), std::move(trie))};
    return std::make_unique<OutputConstraint>(std::move(spec), tok);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
}

std::string finish_text(FinishReason r, bool stopped_by_user) {
  return stopped_by_user ? "interrupted" : std::string(to_string(r));
}

void run(RunOptions& o) {
  take_positional_model(o.model, o.prompt.positional, names_model);
  std::string prompt_text = read_prompt(o.prompt);
  ModelPlan plan = plan_model(o.model);
  Images im = read_images(o, plan.config.dim);
  // Without a marker the images go first, one marker each (as llama-mtmd-cli places them).
  if (!im.inputs.empty() && prompt_text.find(kMediaMarker) == std::string::npos)
    for (size_t i = 0; i < im.inputs.size(); ++i) prompt_text = std::string(kMediaMarker) + prompt_text;
  Tokenizer file_tok = Tokenizer::from_gguf(*plan.file);
  std::vector<PromptPart> parts;
  std::vector<int32_t> prompt;
  if (im.inputs.empty()) {
    prompt = file_tok.encode(prompt_text, true);
  } else {
    parts = split_image_prompt(file_tok, *im.proj.config, prompt_text, im.inputs.size());
    if (parts.back().image < 0) prompt = std::move(parts.back().tokens), parts.pop_back();
  }
  uint32_t image_tokens = parts.empty() ? 0 : prompt_tokens(parts, im.inputs);
  std::unique_ptr<OutputConstraint> constraint = read_constraint(o, file_tok);  // before any upload
  ENSURE(!prompt.empty(), "the prompt is empty and the model adds no BOS token: give some text");
  if (prompt_text.empty()) std::fprintf(stderr, "warning: the prompt is empty: the text starts from nothing\n");
  ENSURE(prompt.size() + image_tokens < plan.n_ctx,
         fmt::format("the prompt has {}, more than fit a context of {} with one to "
                     "generate (use --ctx)",
                     count(prompt.size() + image_tokens, "token"), plan.n_ctx));
  LoadedModel m = load_model(std::move(plan), o.model);
  print_load_line(m);
  Engine& engine = *m.engine;
  const Tokenizer& tok = engine.tokenizer();
  if (!parts.empty()) {  // the images and the text around them; the last text goes to generate()
    VisionEncoder encoder(*m.ctx, *im.proj.file, *im.proj.config);
    eval_image_prompt(engine, encoder, parts, im.inputs);
  }
  SamplerOptions sampling = sampler_options(o.gen);
  Sampler sampler(sampling);

  // A first run on this device and driver: the prompt's and the generation's steps run once
  // beforehand, so that the driver compiles their kernels (lavapipe: at their first dispatch)
  // outside the prompt's timing, and that time is said as what it is.
  double compiling = 0;
  if (m.first_use) {
    auto t0 = std::chrono::steady_clock::now();
    engine.eval(prompt);
    engine.eval(std::span<const int32_t>(&prompt.back(), 1));
    engine.reset();
    compiling = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
    std::fprintf(stderr, "compiling kernels for this device: %.1f s, once\n", compiling);
    std::error_code ec;  // remembered, so that the next run does not do it again
    std::filesystem::create_directories(m.compiled_marker.parent_path(), ec);
    std::ofstream(m.compiled_marker) << compiling << " s\n";
  }
  clear_interrupt();
  SigintScope sigint;  // Ctrl-C ends generation after the current token; a second one kills as usual
  // --color: the prompt in yellow, the generated text plain, as llama.cpp colours them.
  if (!o.json) write_stdout(use_color(o.color) ? "\033[33m" + prompt_text + "\033[0m" : prompt_text);
  Detokenizer detok(tok);
  StopStrings stops(o.gen.stop);
  std::string text;
  auto emit = [&](const std::string& piece) {
    std::string shown = stops.push(piece);
    text += shown;
    if (!o.json && !shown.empty()) write_stdout(shown);
  };
  nlohmann::json tokens = nlohmann::json::array(), logprobs = nlohmann::json::array();
  GenerateOptions go{.max_tokens = o.gen.n_predict < 0 ? UINT32_MAX : uint32_t(o.gen.n_predict),
                     .ignore_eos = o.gen.ignore_eos,
                     .constraint = constraint.get()};
  go.on_token = [&](int32_t token, std::span<const float> logits) {
    tokens.push_back(token);
    if (o.json) logprobs.push_back(logprob_entry(tok, logits, token, o.logprobs));
    if (!tok.is_end_of_generation(token)) emit(detok.push(token));
    return !stops.stopped() && !interrupted();
  };
  GenerationStats stats = generate(engine, sampler, prompt, go);
  if (!stops.stopped()) emit(detok.flush());
  std::string rest = stops.flush();
  text += rest;
  std::string finish = finish_text(stats.finish, interrupted());
  if (o.json) {
    print_json({{"prompt", prompt_text},
                {"text", text},
                {"prompt_tokens", prompt.size() + image_tokens},
                {"tokens", tokens},
                {"logprobs", logprobs},
                {"finish_reason", finish},
                {"seed", sampling.seed},
                {"n_ctx", engine.n_ctx()},
                {"timings",
                 {{"compile_seconds", compiling + stats.compile_seconds},
                  {"prompt_seconds", stats.prompt_seconds},
                  {"prompt_tokens_per_second", stats.prompt_tps()},
                  {"generated_tokens", stats.generated_tokens},
                  {"generation_seconds", stats.generation_seconds},
                  {"generation_tokens_per_second", stats.generation_tps()}}}});
  } else {
    write_stdout(rest + "\n");
  }
  if (stats.finish == FinishReason::ContextFull)
    std::fprintf(stderr, "stopped: the context of %u tokens is full (use --ctx for more)\n", engine.n_ctx());
  std::fprintf(
      stderr, "%s\n",
      fmt::format("prompt: {}, {:.1f} tokens/s; generation: {}, {:.1f} tokens/s (seed {}{})",
                  count(stats.prompt_tokens, "token"), stats.prompt_tps(), count(stats.generated_tokens, "token"),
                  stats.generation_tps(), sampling.seed, interrupted() ? "; interrupted" : "")
          .c_str());
  if (interrupted()) throw CLI::RuntimeError(130);
}

}  // namespace

void add_run_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("run", "Generate text from a prompt");
  auto o = std::make_shared<RunOptions>();
  add_prompt_options(cmd, o->prompt);
  add_model_options(cmd, o->model);
  add_generation_options(cmd, o->gen);
  auto* json = cmd->add_flag("--json", o->json,
                             "Print one JSON object: text, tokens, log-probabilities, finish reason, timings");
  cmd->add_option("--logprobs", o->logprobs, "With --json: the N most likely alternatives of each token")
      ->needs(json)
      ->type_name("N")
      ->check(int_range(0, 100));
  add_color_option(cmd, o->color);
  auto* grammar = cmd->add_option("--grammar", o->grammar_file, "Constrain the output to a GBNF grammar (llama.cpp's)")
                      ->type_name("FILE")
                      ->check(non_empty);
  cmd->add_option("--json-schema", o->schema_file, "Constrain the output to JSON valid for a JSON Schema")
      ->type_name("FILE")
      ->check(non_empty)
      ->excludes(grammar);
  cmd->add_option("--image", o->images,
                  "An image for the prompt (JPEG, PNG, GIF, BMP, WebP; repeatable): at each <__media__> of the "
                  "prompt, or before it")
      ->type_name("FILE")
      ->check(non_empty);
  add_mmproj_options(cmd, o->model);
  cmd->callback([o] { run(*o); });
}

}  // namespace vkllm::cli
