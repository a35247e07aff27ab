// VocabConfig from the tokenizer.ggml.* keys and back, and tokenizer.chat_template: the only file
// that spells them.
#include "text/vocab.h"

#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

constexpr std::string_view kTokenizerModel = "tokenizer.ggml.model";
constexpr std::string_view kChatTemplate = "tokenizer.chat_template";

std::string tok_key(std::string_view k) { return "tokenizer.ggml." + std::string(k); }

int32_t read_token_id(const GgufFile& f, const std::string& key) {
  int64_t v = f.get_int(key, -1);
  return v < 0 || v > INT32_MAX ? -1 : int32_t(v);
}

std::vector<std::string> copy_strings(const std::vector<std::string_view>& v) { return {v.begin(), v.end()}; }

std::optional<bool> read_optional_bool(const GgufFile& f, const std::string& key) {
  if (!f.has(key)) return std::nullopt;
  return f.get_bool(key);
}

}  // namespace

bool has_vocab(const GgufFile& f) { return f.has(kTokenizerModel); }

VocabConfig read_vocab(const GgufFile& f) {
  VocabConfig v;
  if (!has_vocab(f)) f.fail("has no tokenizer (tokenizer.ggml.model is missing)");
  v.model = std::string(f.get_string(kTokenizerModel));
  v.pre = std::string(f.get_string(tok_key("pre"), ""));
  v.tokens = copy_strings(f.get_string_array(tok_key("tokens")));
  if (f.has(tok_key("scores"))) v.scores = f.get_float_array(tok_key("scores"));
  if (f.has(tok_key("token_type")))
    for (int64_t t : f.get_int_array(tok_key("token_type"))) v.types.push_back(TokenType(int32_t(t)));
  if (f.has(tok_key("merges"))) v.merges = copy_strings(f.get_string_array(tok_key("merges")));
  v.bos = read_token_id(f, tok_key("bos_token_id"));
  v.eos = read_token_id(f, tok_key("eos_token_id"));
  v.unk = read_token_id(f, tok_key("unknown_token_id"));
  v.pad = read_token_id(f, tok_key("padding_token_id"));
  v.eot = read_token_id(f, tok_key("eot_token_id"));
  v.eom = read_token_id(f, tok_key("eom_token_id"));
  // The FIM keys, each with the older name llama.cpp still reads when the new one is missing.
  auto fim = [&](std::string_view key, std::string_view old) {
    int32_t id = read_token_id(f, tok_key(key));
    return id >= 0 || old.empty() ? id : read_token_id(f, tok_key(old));
  };
  v.fim_pre = fim("fim_pre_token_id", "prefix_token_id");
  v.fim_suf = fim("fim_suf_token_id", "suffix_token_id");
  v.fim_mid = fim("fim_mid_token_id", "middle_token_id");
  v.fim_pad = fim("fim_pad_token_id", "");
  v.fim_rep = fim("fim_rep_token_id", "");
  v.fim_sep = fim("fim_sep_token_id", "");
  v.model_name = std::string(f.get_string(GgufFile::kNameKey, ""));
  v.add_bos = read_optional_bool(f, tok_key("add_bos_token"));
  v.add_eos = read_optional_bool(f, tok_key("add_eos_token"));
  v.add_space_prefix = read_optional_bool(f, tok_key("add_space_prefix"));
  return v;
}

void write_vocab(GgufWriter& w, const VocabConfig& v) {
  w.add(kTokenizerModel, v.model);
  if (!v.pre.empty()) w.add(tok_key("pre"), v.pre);
  w.add_array(tok_key("tokens"), v.tokens);
  if (!v.scores.empty()) w.add_array(tok_key("scores"), v.scores);
  if (!v.types.empty()) {
    std::vector<int32_t> types;
    for (TokenType t : v.types) types.push_back(int32_t(t));
    w.add_array(tok_key("token_type"), types);
  }
  if (!v.merges.empty()) w.add_array(tok_key("merges"), v.merges);
  auto id = [&](std::string_view key, int32_t value) {
    if (value >= 0) w.add(tok_key(key), uint32_t(value));
  };
  id("bos_token_id", v.bos);
  id("eos_token_id", v.eos);
  id("unknown_token_id", v.unk);
  id("padding_token_id", v.pad);
  id("eot_token_id", v.eot);
  id("eom_token_id", v.eom);
  id("fim_pre_token_id", v.fim_pre);
  id("fim_suf_token_id", v.fim_suf);
  id("fim_mid_token_id", v.fim_mid);
  id("fim_pad_token_id", v.fim_pad);
  id("fim_rep_token_id", v.fim_rep);
  id("fim_sep_token_id", v.fim_sep);
  if (v.add_bos) w.add(tok_key("add_bos_token"), *v.add_bos);
  if (v.add_eos) w.add(tok_key("add_eos_token"), *v.add_eos);
  if (v.add_space_prefix) w.add(tok_key("add_space_prefix"), *v.add_space_prefix);
}

std::optional<std::string> read_chat_template(const GgufFile& f) {
  if (!f.has(kChatTemplate)) return std::nullopt;
  return std::string(f.get_string(kChatTemplate));
}

void write_chat_template(GgufWriter& w, const std::string& source) { w.add(kChatTemplate, source); }

}  // namespace vkllm
