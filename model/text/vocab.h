// VocabConfig: a tokenizer's data as a GGUF file stores it (tokens, scores, types, merges, special
// ids, flags), read from and written to the tokenizer.ggml.* keys (docs/formats.md §4.1).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <vector>

namespace vkllm {

class GgufFile;
class GgufWriter;

enum class TokenType : int32_t { Normal = 1, Unknown = 2, Control = 3, UserDefined = 4, Unused = 5, Byte = 6 };

struct VocabConfig {
  std::string model;                // "llama" (SentencePiece BPE with scores) or "gpt2" (byte-level BPE)
  std::string pre;                  // BPE pre-tokenizer: "llama-bpe", "qwen2", "smollm", "gpt-2", ...
  std::vector<std::string> tokens;  // (vocab) text of each id
  std::vector<float> scores;        // (vocab) SPM scores; may be empty
  std::vector<TokenType> types;     // (vocab) may be empty (all normal)
  std::vector<std::string> merges;  // BPE merges "left right", index = rank
  int32_t bos = -1, eos = -1, unk = -1, pad = -1, eot = -1, eom = -1;  // -1: none
  // Fill-in-the-middle: prefix, suffix, middle, pad, repository, file separator (-1: none; found by
  // text when the file has no id, docs/formats.md §4.7).
  int32_t fim_pre = -1, fim_suf = -1, fim_mid = -1, fim_pad = -1, fim_rep = -1, fim_sep = -1;
  std::optional<bool> add_bos, add_eos, add_space_prefix;  // nullopt: the kind's default
  // general.name, read (not written) because llama.cpp gives Phi-3's special tokens their
  // whitespace rule by the model's name (docs/formats.md §4.7).
  std::string model_name;
};

bool has_vocab(const GgufFile& f);
VocabConfig read_vocab(const GgufFile& f);  // errors name the file
void write_vocab(GgufWriter& w, const VocabConfig& v);
// tokenizer.chat_template: the model's Jinja2 chat template, if it has one.
std::optional<std::string> read_chat_template(const GgufFile& f);
void write_chat_template(GgufWriter& w, const std::string& source);

}  // namespace vkllm
