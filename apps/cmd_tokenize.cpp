// `vkllm tokenize [-m FILE] ([MODEL] TEXT | -p TEXT | -f FILE) [--pieces] [--json]`: the ids of a text, BOS
// included when the model adds it; `vkllm detokenize [-m FILE] --tokens 1,2,3 [--no-bos] [--json]`:
// the text of ids, without the BOS tokenize added (with --no-bos every id is text). Only the
// tokenizer is loaded.
#include <fmt/format.h>

#include "commands.h"
#include "error.h"
#include "gguf/reader.h"
#include "model_options.h"
#include "output.h"
#include "text/tokenizer.h"

namespace vkllm::cli {

namespace {

struct TokenizeOptions {
  ModelOptions model;
  PromptOptions text;
  bool pieces = false, no_bos = false, no_special = false, json = false;
};

void tokenize(TokenizeOptions& o) {
  take_positional_model(o.model, o.text.positional, names_model);
  std::string text = read_prompt(o.text);
  GgufFile f = open_model(o.model);
  Tokenizer t = Tokenizer::from_gguf(f);
  std::vector<int32_t> ids = t.encode(text, !o.no_bos, !o.no_special);
  if (o.json) {
    nlohmann::json j = {{"tokens", ids}};
    if (o.pieces) {
      j["pieces"] = nlohmann::json::array();
      for (int32_t id : ids) j["pieces"].push_back(t.piece(id));
    }
    return print_json(j);
  }
  std::string out;
  if (o.pieces)
    for (int32_t id : ids) out += fmt::format("{}\t{}\n", id, escape_piece(t.piece(id)));
  else
    out = fmt::format("{}\n", fmt::join(ids, " "));
  write_stdout(out);
}

struct DetokenizeOptions {
  ModelOptions model;
  std::string tokens;
  bool json = false, no_bos = false;
};

void detokenize(const DetokenizeOptions& o) {
  std::vector<int32_t> ids = parse_token_list(o.tokens);
  GgufFile f = open_model(o.model);
  Tokenizer t = Tokenizer::from_gguf(f);
  check_token_ids(ids, t.vocab_size());
  std::string text = t.decode(ids, !o.no_bos);
  if (o.json) return print_json({{"text", text}});
  write_stdout(text + "\n");
}

}  // namespace

void add_tokenize_commands(CLI::App& app) {
  auto* tok = app.add_subcommand("tokenize", "Print the token ids of a text (only the tokenizer is loaded)");
  auto o = std::make_shared<TokenizeOptions>();
  add_prompt_options(tok, o->text, "The text");
  add_model_options(tok, o->model, false);
  tok->add_flag("--pieces", o->pieces, "One id and its piece per line");
  tok->add_flag("--no-bos", o->no_bos, "Do not add BOS/EOS even when the model does");
  tok->add_flag("--no-parse-special", o->no_special, "Encode control-token texts as plain text");
  tok->add_flag("--json", o->json, "Print one JSON object: tokens (and pieces)");
  tok->callback([o] { tokenize(*o); });

  auto* detok = app.add_subcommand("detokenize", "Print the text of token ids (only the tokenizer is loaded)");
  auto d = std::make_shared<DetokenizeOptions>();
  add_model_options(detok, d->model, false);
  detok->add_option("--tokens", d->tokens, "Token ids, separated by commas or spaces")->type_name("IDS")->required();
  detok->add_flag("--no-bos", d->no_bos,
                  "The ids were made with tokenize --no-bos: a leading BOS is text typed in the prompt, kept");
  detok->add_flag("--json", d->json, "Print one JSON object: text");
  detok->callback([d] { detokenize(*d); });
}

}  // namespace vkllm::cli
