// `vkllm tokenize [-m FILE] -p TEXT [--pieces]`: the ids of a text, BOS included when the model adds
// it; `vkllm detokenize [-m FILE] --tokens 1,2,3 [--no-bos]`: the text of ids, without the BOS
// tokenize added (with --no-bos every id is text). Only the tokenizer is loaded.
#include <fmt/format.h>

#include "commands.h"
#include "error.h"
#include "gguf/reader.h"
#include "model_options.h"
#include "text/tokenizer.h"

namespace vkllm::cli {

namespace {

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
}

// A piece on one line: control characters and, in a partial UTF-8 character, every high byte
// are written as escapes.
std::string escape_piece(std::string_view p) {
  bool utf8 = valid_utf8(p);
  std::string out;
  for (char ch : p) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\\')
      out += "\\\\";
    else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8))
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return out;
}

struct TokenizeOptions {
  std::string model, prompt;
  bool pieces = false, no_bos = false, no_special = false;
};

void tokenize(const TokenizeOptions& o) {
  GgufFile f = open_model(o.model);
  Tokenizer t = Tokenizer::from_gguf(f);
  std::vector<int32_t> ids = t.encode(o.prompt, !o.no_bos, !o.no_special);
  if (o.pieces) {
    for (int32_t id : ids) fmt::print("{}\t{}\n", id, escape_piece(t.piece(id)));
    return;
  }
  fmt::print("{}\n", fmt::join(ids, " "));
}

void detokenize(const std::string& model, const std::string& tokens, bool no_bos) {
  GgufFile f = open_model(model);
  Tokenizer t = Tokenizer::from_gguf(f);
  std::vector<int32_t> ids = parse_token_list(tokens);
  for (int32_t id : ids)
    ENSURE(id >= 0 && uint32_t(id) < t.vocab_size(),
           fmt::format("{}: token id {} is outside the vocabulary of {} tokens", f.name(), id, t.vocab_size()));
  std::string text = t.decode(ids, !no_bos);
  std::fwrite(text.data(), 1, text.size(), stdout);
  std::fputc('\n', stdout);
}

}  // namespace

void add_tokenize_commands(CLI::App& app) {
  auto* tok = app.add_subcommand("tokenize", "Print the token ids of a text");
  auto o = std::make_shared<TokenizeOptions>();
  tok->add_option("-m,--model", o->model, "GGUF model file (default: the embedded model)");
  tok->add_option("-p,--prompt", o->prompt, "Text to tokenize")->required();
  tok->add_flag("--pieces", o->pieces, "One id and its piece per line");
  tok->add_flag("--no-bos", o->no_bos, "Do not add BOS/EOS even when the model does");
  tok->add_flag("--no-parse-special", o->no_special, "Encode control-token texts as plain text");
  tok->callback([o] { tokenize(*o); });

  auto* detok = app.add_subcommand("detokenize", "Print the text of token ids");
  auto model = std::make_shared<std::string>(), tokens = std::make_shared<std::string>();
  auto no_bos = std::make_shared<bool>(false);
  detok->add_option("-m,--model", *model, "GGUF model file (default: the embedded model)");
  detok->add_option("--tokens", *tokens, "Token ids, separated by commas or spaces")->required();
  detok->add_flag("--no-bos", *no_bos,
                  "The ids were made with tokenize --no-bos: a leading BOS is text typed in the prompt, kept");
  detok->callback([model, tokens, no_bos] { detokenize(*model, *tokens, *no_bos); });
}

}  // namespace vkllm::cli
