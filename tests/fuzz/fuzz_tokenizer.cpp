// libFuzzer target: a small vocabulary and a text, both from the input, through encode and decode.
// The vocabulary is SentencePiece (<unk> <s> </s>, the 256 byte tokens), byte-level BPE (the 256
// byte characters, <|endoftext|>) with any pre-tokenizer, or SentencePiece-style BPE (gemma4:
// <pad> <eos> <bos> <unk>, the 256 byte tokens), plus tokens of any text and type, scores and
// merges from the input. Checked: no crash or sanitizer report, every id inside the vocabulary,
// decode(encode(s, add), add) == s (where it must hold: no Phi-3 whitespace rule, no U+2581 in
// text for SentencePiece's alphabet), and the streaming Detokenizer giving the pieces' bytes.
#include <fuzzer/FuzzedDataProvider.h>

#include <cstdio>
#include <cstdlib>

#include "error.h"
#include "text/pretokenizer.h"
#include "text/tokenizer.h"

namespace {

using namespace vkllm;

enum Kind { kSpm, kBpe, kSpmBpe };

VocabConfig base_vocab(Kind kind, const std::string& pre) {
  VocabConfig v;
  if (kind != kBpe) {
    v.model = kind == kSpm ? "llama" : "gemma4";
    if (kind == kSpm) {
      v.tokens = {"<unk>", "<s>", "</s>"};
      v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control};
    } else {
      v.tokens = {"<pad>", "<eos>", "<bos>", "<unk>"};
      v.types.assign(4, TokenType::Control);
      v.pad = 0, v.eos = 1, v.bos = 2, v.unk = 3;
    }
    for (int b = 0; b < 256; ++b) {
      char buf[8];
      std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
      v.tokens.push_back(buf);
      v.types.push_back(TokenType::Byte);
    }
    if (kind == kSpm) v.scores.assign(v.tokens.size(), 0.0f);
    return v;
  }
  v.model = "gpt2";
  v.pre = pre;
  for (int b = 0; b < 256; ++b) v.tokens.push_back(std::string(gpt2_byte_char(uint8_t(b))));
  v.types.assign(256, TokenType::Normal);
  v.tokens.push_back("<|endoftext|>");
  v.types.push_back(TokenType::Control);
  v.bos = v.eos = 256;
  return v;
}

void fail(const char* what, const std::string& text) {
  std::fprintf(stderr, "%s for a text of %zu bytes\n", what, text.size());
  std::abort();
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  FuzzedDataProvider in(data, size);
  Kind kind = Kind(in.ConsumeIntegralInRange(0, 2));
  bool spm = kind == kSpm;
  std::vector<std::string_view> pres = PreTokenizer::style_names();
  VocabConfig v = base_vocab(kind, std::string(pres[in.ConsumeIntegralInRange<size_t>(0, pres.size() - 1)]));
  bool phi3 = in.ConsumeIntegralInRange(0, 7) == 0;
  if (phi3) v.model_name = "Phi-3";
  v.add_bos = in.ConsumeBool();
  v.add_eos = in.ConsumeBool();
  if (spm) v.add_space_prefix = in.ConsumeBool();
  // Extra tokens: mostly normal, some of every other type (7 and 0 are invalid types). So that
  // decode(encode(s)) == s must hold, merges must not be able to build the text of a special token
  // (llama.cpp then emits that token, and decodes it verbatim): special texts get a space (which
  // merged text never has: SentencePiece sees U+2581, BPE the character for it), and other texts
  // lose '<' and '>' (which <s>, </s>, <unk>, <|endoftext|> and <0xNN> need).
  int extra = in.ConsumeIntegralInRange(0, 24);
  for (int i = 0; i < extra; ++i) {
    std::string text = in.ConsumeRandomLengthString(12);
    int t = in.ConsumeIntegralInRange(0, 13);
    TokenType type = TokenType(t <= 7 ? t : 1);
    if (kind == kBpe && type == TokenType::Byte) type = TokenType::Normal;  // <0xNN> tokens are SentencePiece's
    if (type == TokenType::Control || type == TokenType::UserDefined || type == TokenType::Unknown)
      text.insert(text.size() / 2, " ");
    else
      for (char& c : text)
        if (c == '<' || c == '>') c = 'x';
    v.tokens.push_back(text);
    v.types.push_back(type);
    if (spm) v.scores.push_back(float(in.ConsumeIntegralInRange(-50, 5)));
  }
  // BPE merges of two texts of the vocabulary; the joined text is added as a token (normal) or not.
  auto mergeable = [](const std::string& s) { return s.find_first_of("<> ") == std::string::npos; };
  if (kind != kSpm)
    for (int i = in.ConsumeIntegralInRange(0, 24); i > 0; --i) {
      std::string l = v.tokens[in.ConsumeIntegralInRange<size_t>(0, v.tokens.size() - 1)];
      std::string r = v.tokens[in.ConsumeIntegralInRange<size_t>(0, v.tokens.size() - 1)];
      if (l.empty() || !mergeable(l) || !mergeable(r)) continue;
      v.merges.push_back(l + " " + r);
      if (in.ConsumeBool()) {
        v.tokens.push_back(l + r);
        v.types.push_back(TokenType::Normal);
      }
    }
  bool add_special = in.ConsumeBool(), parse_special = in.ConsumeBool();
  std::string text = in.ConsumeRemainingBytesAsString();
  try {
    Tokenizer t(v);
    std::vector<int32_t> ids = t.encode(text, add_special, parse_special);
    for (int32_t id : ids)
      if (id < 0 || uint32_t(id) >= t.vocab_size()) fail("id outside the vocabulary", text);
    std::string back = t.decode(ids, add_special);
    bool exact = !phi3 && !(kind != kBpe && text.find("\xe2\x96\x81") != std::string::npos);
    if (exact && back != text) fail("decode(encode(s)) != s", text);
    Detokenizer d(t);
    std::string streamed, pieces;
    for (int32_t id : ids) {
      streamed += d.push(id);
      pieces += t.piece(id);
    }
    if (streamed + d.flush() != pieces) fail("streamed bytes differ from the pieces", text);
  } catch (const Error&) {
  }
  return 0;
}
