// The special-token rules llama.cpp applies when it loads a vocabulary (llama-vocab.cpp, load):
// token types corrected by text, the end-of-generation set, and the whitespace rule of Phi-3's
// special tokens. Each rule is listed with its source in docs/formats.md §4.7.
#include <algorithm>
#include <cctype>

#include "text/tokenizer.h"

namespace vkllm {

namespace {

// Texts that end generation; a token with one of them is CONTROL whatever the file says.
constexpr std::string_view kEogTexts[] = {"<|eot_id|>",
                                          "<|im_end|>",
                                          "<|end|>",
                                          "<|return|>",
                                          "<|call|>",
                                          "<|flush|>",
                                          "<|calls|>",
                                          "<end_of_turn>",
                                          "<|endoftext|>",
                                          "</s>",
                                          "<|eom_id|>",
                                          "<EOT>",
                                          "_<EOT>",
                                          "[EOT]",
                                          "[EOS]",
                                          "<|end_of_text|>",
                                          "<end_of_utterance>",
                                          "<eos>",
                                          "<turn|>",
                                          "<|tool_response>",
                                          "<\xef\xbd\x9c"
                                          "end\xe2\x96\x81of\xe2\x96\x81sentence\xef\xbd\x9c>",
                                          "[e~["};

// Fill-in-the-middle tokens by text, for each FIM role the file gives no id for.
constexpr std::string_view kFimPre[] = {"<|fim_prefix|>",
                                        "<fim-prefix>",
                                        "<fim_prefix>",
                                        "<\xef\xbd\x9c"
                                        "fim\xe2\x96\x81"
                                        "begin\xef\xbd\x9c>",
                                        "<PRE>",
                                        "\xe2\x96\x81<PRE>",
                                        "<|code_prefix|>",
                                        "<|prefix|>"};
constexpr std::string_view kFimSuf[] = {"<|fim_suffix|>",
                                        "<fim-suffix>",
                                        "<fim_suffix>",
                                        "<\xef\xbd\x9c"
                                        "fim\xe2\x96\x81"
                                        "hole\xef\xbd\x9c>",
                                        "<SUF>",
                                        "\xe2\x96\x81<SUF>",
                                        "<|code_suffix|>",
                                        "<|suffix|>"};
constexpr std::string_view kFimMid[] = {"<|fim_middle|>",
                                        "<fim-middle>",
                                        "<fim_middle>",
                                        "<\xef\xbd\x9c"
                                        "fim\xe2\x96\x81"
                                        "end\xef\xbd\x9c>",
                                        "<MID>",
                                        "\xe2\x96\x81<MID>",
                                        "<|code_middle|>",
                                        "<|middle|>"};
constexpr std::string_view kFimPad[] = {"<|fim_pad|>", "<fim-pad>", "<fim_pad>", "<PAD>", "[PAD]"};
constexpr std::string_view kFimRep[] = {"<|fim_repo|>", "<|repo_name|>", "<fim-repo>", "<REPO>", "<reponame>"};
constexpr std::string_view kFimSep[] = {"<|file_sep|>"};

// gpt-oss's message-structure tokens, which llama.cpp always prints (USER_DEFINED).
constexpr std::string_view kAlwaysShown[] = {"<|channel|>", "<|message|>", "<|start|>", "<|constrain|>"};

bool contains_any(const std::string& s, std::initializer_list<std::string_view> parts) {
  return std::any_of(parts.begin(), parts.end(), [&](std::string_view p) { return s.find(p) != std::string::npos; });
}

}  // namespace

void Tokenizer::fix_token_types(const VocabConfig& v) {
  auto make_control = [&](int32_t id) {
    if (id >= 0) type_[size_t(id)] = TokenType::Control;
  };
  // A FIM role without an id in the file takes the lowest id whose text is on its list.
  auto fim = [&](int32_t given, std::span<const std::string_view> texts) {
    if (given >= 0 && size_t(given) < text_.size()) return given;
    int32_t found = -1;
    for (std::string_view t : texts)
      if (int32_t id = find(t); id >= 0 && (found < 0 || id < found)) found = id;
    make_control(found);
    return found;
  };
  fim(v.fim_pre, kFimPre);
  fim(v.fim_suf, kFimSuf);
  fim(v.fim_mid, kFimMid);
  std::vector<int32_t> eog;
  for (int32_t id : {fim(v.fim_pad, kFimPad), fim(v.fim_rep, kFimRep), fim(v.fim_sep, kFimSep)})
    if (id >= 0) eog.push_back(id);
  for (std::string_view t : kEogTexts)
    if (int32_t id = find(t); id >= 0) {
      make_control(id);
      eog.push_back(id);
    }
  for (std::string_view t : kAlwaysShown)
    if (int32_t id = find(t); id >= 0) type_[size_t(id)] = TokenType::UserDefined;
  int32_t n = int32_t(text_.size());
  for (int32_t id : {eos_, v.eot, v.eom})
    if (id >= 0 && id < n) eog.push_back(id);
  auto in_eog = [&](std::string_view t) {
    int32_t id = find(t);
    return id >= 0 && std::find(eog.begin(), eog.end(), id) != eog.end() ? id : -1;
  };
  auto drop_eog = [&](int32_t id, TokenType type) {
    std::erase(eog, id);
    type_[size_t(id)] = type;
  };
  // gpt-oss (harmony) and Solar Open end a message, not the generation, with <|end|>.
  if (int32_t end = in_eog("<|end|>"); end >= 0 && ((in_eog("<|return|>") >= 0 && in_eog("<|call|>") >= 0) ||
                                                    (in_eog("<|calls|>") >= 0 && in_eog("<|flush|>") >= 0)))
    drop_eog(end, TokenType::UserDefined);
  // Gemma 4 has </s> as a plain token.
  if (int32_t s = in_eog("</s>"); s >= 0 && in_eog("<|tool_response>") >= 0) drop_eog(s, TokenType::Normal);
  for (int32_t id : eog)
    if (!is_end_of_generation(id)) eog_.push_back(id);
}

void Tokenizer::build_specials(const VocabConfig& v) {
  std::string name = v.model_name;
  std::transform(name.begin(), name.end(), name.begin(), [](unsigned char c) { return char(std::tolower(c)); });
  // Phi-3: the whitespace after a special token is dropped, except after these three.
  bool phi3 = contains_any(name, {"phi-3", "phi3"});
  std::vector<SpecialToken> specials;
  for (size_t i = 0; i < text_.size(); ++i) {
    int32_t id = int32_t(i);
    if (!is_special(id)) continue;
    const std::string& t = text_[i];
    bool rstrip = phi3 && t != "<unk>" && t != "<s>" && t != "<|endoftext|>";
    specials.push_back({id, t, type_[i] != TokenType::UserDefined, rstrip});
  }
  // Longest first; equal lengths by id.
  std::stable_sort(specials.begin(), specials.end(),
                   [](const SpecialToken& a, const SpecialToken& b) { return a.text.size() > b.text.size(); });
  specials_ = SpecialTokens(std::move(specials));
}

bool Tokenizer::is_special(int32_t id) const {
  TokenType t = type_[size_t(id)];
  return t == TokenType::Control || t == TokenType::UserDefined || t == TokenType::Unknown;
}

bool Tokenizer::is_end_of_generation(int32_t id) const { return std::find(eog_.begin(), eog_.end(), id) != eog_.end(); }

}  // namespace vkllm
