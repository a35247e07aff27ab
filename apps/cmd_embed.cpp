// `vkllm embed [-m MODEL] ([MODEL] TEXT | -p TEXT | -f FILE)`: one embedding per input, as
// llama.cpp's llama-embedding computes them: inputs split at --embd-separator (a newline), each
// tokenized with the model's special tokens, pooled (--pooling, else the file's pooling_type, else
// the last token) and normalised (--embd-normalize, Euclidean by default); all inputs batched
// into as few forwards as fit. Prints one vector a line, or JSON (--embd-output-format).
#include <fmt/format.h>
#include <algorithm>
#include <cmath>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "engine/embedding.h"
#include "error.h"
#include "model_options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

// More slots than this would not fill a forward better: a step holds at most --batch tokens.
constexpr uint32_t kMaxSlots = 64;

struct EmbedOptions {
  ModelOptions model;
  PromptOptions text;
  std::string pooling, format = "raw", separator = "\n";
  int normalize = 2;
};

// The inputs between separators; a separator at the very end (a file's last newline) ends the
// last input rather than starting an empty one. Empty inputs are an error.
std::vector<std::string> split_inputs(const std::string& text, const std::string& separator) {
  std::vector<std::string> parts;
  for (size_t start = 0;;) {
    size_t end = text.find(separator, start);
    parts.push_back(text.substr(start, end == std::string::npos ? std::string::npos : end - start));
    if (end == std::string::npos) break;
    start = end + separator.size();
  }
  if (parts.size() > 1 && parts.back().empty()) parts.pop_back();
  for (size_t i = 0; i < parts.size(); ++i)
    ENSURE(!parts[i].empty(), parts.size() == 1 ? std::string("the input is empty")
                                                : fmt::format("input {} (of {}) is empty", i + 1, parts.size()));
  return parts;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return aa > 0 && bb > 0 ? ab / std::sqrt(aa * bb) : 0;
}

void print_embeddings(const std::vector<std::vector<float>>& v, const std::string& format) {
  if (format == "raw") {
    std::string out;
    for (const auto& e : v) out += fmt::format("{}\n", fmt::join(e, " "));
    return write_stdout(out);
  }
  nlohmann::json rows = nlohmann::json::array();
  for (const auto& e : v) {
    nlohmann::json row = nlohmann::json::array();
    for (float x : e) row.push_back(json_float(x));
    rows.push_back(std::move(row));
  }
  if (format == "array") return print_json(rows);
  nlohmann::json j = {{"object", "list"}, {"data", nlohmann::json::array()}};
  for (size_t i = 0; i < v.size(); ++i)
    j["data"].push_back({{"object", "embedding"}, {"index", i}, {"embedding", std::move(rows[i])}});
  if (format == "json+" && v.size() > 1) {  // llama.cpp's: the cosine similarity of every pair
    j["cosineSimilarity"] = nlohmann::json::array();
    for (const auto& a : v) {
      nlohmann::json row = nlohmann::json::array();
      for (const auto& b : v) row.push_back(cosine(a, b));
      j["cosineSimilarity"].push_back(std::move(row));
    }
  }
  print_json(j);
}

void embed_command(EmbedOptions& o) {
  take_positional_model(o.model, o.text.positional, names_model);
  std::vector<std::string> texts = split_inputs(read_prompt(o.text), o.separator);
  ModelPlan plan = plan_model(o.model);
  Pooling pooling =
      embedding_pooling(plan.config, o.pooling.empty() ? Pooling::Unspecified : *pooling_named(o.pooling));
  Tokenizer tokenizer = Tokenizer::from_gguf(*plan.file);
  std::vector<std::vector<int32_t>> inputs;
  size_t longest = 0;
  for (size_t i = 0; i < texts.size(); ++i) {
    inputs.push_back(tokenizer.encode(texts[i], true, true));
    std::string which = texts.size() == 1 ? "the input" : fmt::format("input {}", i + 1);
    ENSURE(!inputs.back().empty(), fmt::format("{} gives no tokens", which));
    ENSURE(inputs.back().size() <= plan.n_ctx, fmt::format("{} is {}; the context holds {} (use --ctx)", which,
                                                           count(inputs.back().size(), "token"), plan.n_ctx));
    longest = std::max(longest, inputs.back().size());
  }
  // Each slot needs only the longest input's context; as many slots as one forward can fill.
  plan.n_ctx = uint32_t(longest);
  uint32_t slots = std::clamp<uint32_t>(o.model.batch / uint32_t(longest), 1, kMaxSlots);
  slots = std::min<uint32_t>(slots, uint32_t(inputs.size()));
  LoadedModel m = load_model(std::move(plan), o.model, false, slots);
  std::vector<std::vector<float>> vectors = embed(*m.engine, inputs, pooling);
  for (auto& v : vectors) normalize_embedding(v, o.normalize);
  print_embeddings(vectors, o.format);
}

}  // namespace

void add_embed_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("embed", "Embeddings of texts, one input a line: one vector a line, or JSON");
  auto o = std::make_shared<EmbedOptions>();
  add_model_options(cmd, o->model);
  add_prompt_options(cmd, o->text, "The inputs, one a line (--embd-separator)");
  add_pooling_option(cmd, o->pooling);
  cmd->add_option("--embd-normalize", o->normalize,
                  "-1 none, 0 max absolute to int16, 1 taxicab, 2 Euclidean, >2 p-norm (llama.cpp's)")
      ->type_name("N")
      ->check(int_range(-1, 1000))
      ->capture_default_str();
  cmd->add_option("--embd-output-format", o->format,
                  "raw: one vector a line; json: OpenAI's list object; json+: with the cosine similarity of "
                  "every pair; array: [[...], ...]")
      ->type_name("FORMAT")
      ->check(one_of({"raw", "json", "json+", "array"}))
      ->capture_default_str();
  cmd->add_option("--embd-separator", o->separator, "What separates inputs (default: a newline)")
      ->type_name("TEXT")
      ->check(non_empty);
  cmd->callback([o] { embed_command(*o); });
}

}  // namespace vkllm::cli
