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

// SentencePiece-style BPE ("gemma4"): 0 <pad>, 1 <eos>, 2 <bos>, 3 <unk>, 4 <turn|>, 5
// <|tool_response>, 6 </s>, 7..262 <0x00>..<0xFF>, then the characters below and the merges'
// results in rank order.
inline VocabConfig gemma4_test_vocab() {
  VocabConfig v;
  v.model = "gemma4";
  v.tokens = {"<pad>", "<eos>", "<bos>", "<unk>", "<turn|>", "<|tool_response>", "</s>"};
  v.types = {TokenType::Control, TokenType::Control,     TokenType::Control, TokenType::Control,
             TokenType::Control, TokenType::UserDefined, TokenType::Normal};
  for (int b = 0; b < 256; ++b) {
    char buf[8];
    std::snprintf(buf, sizeof(buf), "<0x%02X>", b);
    v.tokens.push_back(buf);
    v.types.push_back(TokenType::Byte);
  }
  std::string s = kSpm;
  // 263..273; "\n\n\n" is a token that no merge makes.
  for (std::string c : {"\n", "\n\n", "\n\n\n", kSpm, "h", "e", "l", "o", "w", "r", "d"}) {
    v.tokens.push_back(c);
    v.types.push_back(TokenType::Normal);
  }
  // rank: merge -> token id
  std::vector<std::pair<std::string, std::string>> merges = {
      {"l", "l"},         // 0 -> 274 ll
      {s, "h"},           // 1 -> 275 ▁h
      {"ll", "o"},        // 2 -> 276 llo
      {s + "h", "e"},     // 3 -> 277 ▁he
      {s + "he", "llo"},  // 4 -> 278 ▁hello
      {"h", "e"},         // 5 -> 279 he
      {"he", "llo"},      // 6 -> 280 hello
      {"\n", "\n"},       // 7 -> 264 \n\n (already a token)
      {"o", "r"},         // 8 -> 281 or
      {s, "w"},           // 9 -> 282 ▁w
      {s + "w", "or"},    // 10 -> 283 ▁wor
      {"l", "d"},         // 11 -> 284 ld
      {s + "wor", "ld"},  // 12 -> 285 ▁world
      {"w", "o"},         // 13 -> "wo", which is no token
  };
  for (auto& [l, r] : merges) {
    v.merges.push_back(l + " " + r);
    if (l + r == "\n\n" || l + r == "wo") continue;
    v.tokens.push_back(l + r);
    v.types.push_back(TokenType::Normal);
  }
  v.tokens.push_back("\xc3\xa9");  // 286 é
  v.types.push_back(TokenType::Normal);
  v.bos = 2, v.eos = 1, v.unk = 3, v.pad = 0;
  v.add_bos = false;  // overridden: Gemma 4 always gets its BOS
  return v;
}

}  // namespace vkllm::test
