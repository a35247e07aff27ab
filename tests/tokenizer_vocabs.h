// Tiny hand-made vocabularies for the tokenizer tests. The expected ids in the tests are worked
// out by hand from these lists (ids in the comments).
#pragma once
#include <string>
#include <vector>

#include "arch/model_config.h"
#include "fixture/fixture.h"
#include "text/tokenizer.h"

namespace vkllm::test {

constexpr const char* kSpm = "\xe2\x96\x81";  // ▁

// SentencePiece: 0 <unk>, 1 <s>, 2 </s>, 3..258 <0x00>..<0xFF>, then the pieces below.
inline VocabConfig spm_test_vocab() {
  VocabConfig v;
  v.model = "llama";
  v.tokens = {"<unk>", "<s>", "</s>"};
  v.types = {TokenType::Unknown, TokenType::Control, TokenType::Control};
  v.scores = {0, 0, 0};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    v.tokens.push_back(buf);
    v.types.push_back(TokenType::Byte);
    v.scores.push_back(0);
  }
  std::string s = kSpm;
  // Only a merged piece's score matters: the highest-scoring pair merges first.
  struct P {
    std::string text;
    float score;
  };
  std::vector<P> pieces = {
      {s, -1000},          // 259
      {"h", -1000},        // 260
      {"e", -1000},        // 261
      {"l", -1000},        // 262
      {"o", -1000},        // 263
      {"w", -1000},        // 264
      {"r", -1000},        // 265
      {"d", -1000},        // 266
      {"he", -1},          // 267
      {"ll", -2},          // 268
      {"llo", -3},         // 269
      {"hello", -4},       // 270
      {s + "hello", -5},   // 271
      {"or", -6},          // 272
      {"wor", -7},         // 273
      {"ld", -8},          // 274
      {"world", -9},       // 275
      {s + "world", -10},  // 276
      {"<|user|>", 0},     // 277 user-defined
      {"a", -1000},        // 278
      {"b", -1000},        // 279
      {"c", -1000},        // 280
      {"ab", -2},          // 281
      {"bc", -1},          // 282: scores higher than ab
  };
  for (const P& p : pieces) {
    v.tokens.push_back(p.text);
    v.scores.push_back(p.score);
    v.types.push_back(p.text == "<|user|>" ? TokenType::UserDefined : TokenType::Normal);
  }
  v.unk = 0, v.bos = 1, v.eos = 2;
  return v;
}

// Byte-level BPE: ids 0..255 are the bytes' GPT-2 characters (id = byte value), 256
// <|endoftext|>, then the merges below in rank order, and 267 <|im_end|>.
inline VocabConfig bpe_test_vocab(const std::string& pre) {
  VocabConfig v = gpt2_byte_vocab(pre);
  std::string g = std::string(gpt2_byte_char(' '));  // Ġ
  // rank: merge -> token id
  std::vector<std::pair<std::string, std::string>> merges = {
      {"h", "e"},         // 0 -> 257 he
      {"l", "l"},         // 1 -> 258 ll
      {"ll", "o"},        // 2 -> 259 llo
      {"he", "llo"},      // 3 -> 260 hello
      {g, "w"},           // 4 -> 261 Ġw
      {"o", "r"},         // 5 -> 262 or
      {g + "w", "or"},    // 6 -> 263 Ġwor
      {"l", "d"},         // 7 -> 264 ld
      {g + "wor", "ld"},  // 8 -> 265 Ġworld
      {g, "hello"},       // 9 -> 266 Ġhello
  };
  for (auto& [l, r] : merges) {
    v.merges.push_back(l + " " + r);
    v.tokens.push_back(l + r);
    v.types.push_back(TokenType::Normal);
  }
  v.tokens.push_back("<|im_end|>");  // 267
  v.types.push_back(TokenType::Control);
  v.merges.push_back("3 3");  // 10 -> 268 33
  v.tokens.push_back("33");
  v.types.push_back(TokenType::Normal);
  v.merges.push_back("33 3");  // 11 -> 269 333
  v.tokens.push_back("333");
  v.types.push_back(TokenType::Normal);
  v.bos = v.eos = 256;
  return v;
}

}  // namespace vkllm::test
