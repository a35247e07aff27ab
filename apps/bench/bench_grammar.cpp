// `vkllm-bench grammar`: the cost of constrained decoding. For each vocabulary (by default the
// repository's qwen2 and llama-bpe, and Gemma 4's where scripts/fetch_llamacpp put it; --vocab
// names others), a nested JSON schema
// is compiled and a valid document, tokenized by that vocabulary, is replayed token by token:
// mask, then accept. Cold: a freshly compiled grammar, every mask computed on first use (what
// the first request with a schema pays); warm: the same grammar again, masks cached (an agent's
// next turn with the same tools). Then tokens/s of the default model (or -m) generating with and
// without that schema. And what the grammar adds to the sampler's own cost per token, greedy and
// at top-k 40, when the whole mask is computed and when the sampler asks its best candidates one
// by one first (Sampler::sample with a TokenFilter): logits are noise with the document's token
// on top, so the best candidates beside it are random tokens (a pessimistic model: a trained one
// puts its next best on tokens that fit). CPU wall clock; medians of --runs.
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <random>

#include "bench.h"
#include "engine/engine.h"
#include "error.h"
#include "gguf/reader.h"
#include "text/grammar/gbnf.h"
#include "text/grammar/json_schema_grammar.h"
#include "text/tokenizer.h"

namespace vkllm::bench {

namespace {

using Clock = std::chrono::steady_clock;
using json = nlohmann::ordered_json;

// Nested objects, arrays of objects, enums, bounded integers and strings, a $ref, optional fields.
const char* const kSchema = R"({
  "$defs": {"address": {"type": "object", "properties": {
      "street": {"type": "string"}, "city": {"type": "string"}, "zip": {"type": "string", "maxLength": 10},
      "country": {"enum": ["NO", "SE", "DK", "FI", "IS"]}}, "required": ["street", "city", "country"]}},
  "type": "object",
  "properties": {
    "id": {"type": "integer", "minimum": 1, "maximum": 1000000},
    "name": {"type": "string", "minLength": 1, "maxLength": 80},
    "email": {"type": "string"},
    "active": {"type": "boolean"},
    "score": {"type": "number"},
    "home": {"$ref": "#/$defs/address"},
    "orders": {"type": "array", "maxItems": 8, "items": {"type": "object", "properties": {
        "sku": {"type": "string"}, "quantity": {"type": "integer", "minimum": 1, "maximum": 99},
        "price": {"type": "number"}, "tags": {"type": "array", "items": {"type": "string"}, "maxItems": 4}},
        "required": ["sku", "quantity", "price"]}},
    "notes": {"type": ["string", "null"]}},
  "required": ["id", "name", "active", "home", "orders", "notes"]})";

// A document valid for kSchema, written as a model would (some spacing, unicode in strings).
const char* const kDocument =
    R"({"id": 4821, "name": "Åse Nordmann-Lindqvist", "email": "ase.nordmann@example.no", "active": true, "score": 87.25,
 "home": {"street": "Storgata 12B", "city": "Tromsø", "zip": "9008", "country": "NO"},
 "orders": [{"sku": "BK-20931", "quantity": 2, "price": 349.9, "tags": ["book", "gift"]},
  {"sku": "EL-77102-X", "quantity": 1, "price": 1299.0, "tags": ["electronics"]},
  {"sku": "HM-0042", "quantity": 12, "price": 19.95}],
 "notes": "Deliver after 16:00; ring twice (leilighet 3)."})";

const char* const kGemmaVocab = VKLLM_BUILD_DIR "/llamacpp/vocab/ggml-vocab-gemma-4.gguf";

struct GrammarOptions {
  std::vector<std::string> vocabs;  // empty: the defaults above
  std::string model = VKLLM_SOURCE_DIR "/models/default.gguf";
  int runs = 5, gen = 96;
  bool no_model = false, json = false;
};

double seconds_since(Clock::time_point t) { return std::chrono::duration<double>(Clock::now() - t).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Replays `tokens` through a matcher: each token's mask, then the token. Seconds per token.
double replay(const std::shared_ptr<grammar::GrammarAutomaton>& a, const std::vector<int32_t>& tokens,
              const std::string& vocab) {
  grammar::GrammarMatcher m(a);
  auto t0 = Clock::now();
  for (int32_t t : tokens) {
    std::shared_ptr<const grammar::TokenMask> mask = m.allowed();
    ENSURE(grammar::allowed(*mask, t), fmt::format("{}: the document's token {} is not allowed", vocab, t));
    ENSURE(m.accept(t), "accept failed");
  }
  double s = seconds_since(t0) / double(tokens.size());
  ENSURE(m.accepting(), fmt::format("{}: the document is incomplete for the grammar", vocab));
  return s;
}

// kDocument as the tokens a model would write, their texts adding up to it exactly (SentencePiece
// puts a space in front of the first word: that first token is taken without it).
std::vector<int32_t> document_tokens(const Tokenizer& tok, const std::string& vocab) {
  std::vector<int32_t> doc = tok.encode(kDocument, false, false);
  if (std::string first = doc.empty() ? "" : tok.piece(doc[0]);
      first.starts_with(' ') && tok.find(first.substr(1)) >= 0)
    doc[0] = tok.find(first.substr(1));
  std::string text;
  for (int32_t t : doc) text += tok.piece(t);
  ENSURE(text == kDocument, fmt::format("{}: the document's tokens do not spell it", vocab));
  return doc;
}

enum class Path { Free, Mask, Filter };

// The sampler's seconds per token over the document, the grammar cold: free (no constraint), with
// the whole mask, or through the filter. The document's token is accepted whatever was drawn.
double sample_replay(const std::shared_ptr<const grammar::Grammar>& g,
                     const std::shared_ptr<const grammar::TokenTrie>& trie, const Tokenizer& tok,
                     const std::vector<int32_t>& doc, const SamplerOptions& so, Path path) {
  std::mt19937_64 rng(17);
  std::normal_distribution<float> normal(0.0f, 2.0f);
  std::vector<float> noise(tok.vocab_size()), logits(noise.size());
  for (float& x : noise) x = normal(rng);
  auto a = std::make_shared<grammar::GrammarAutomaton>(g, trie);
  grammar::GrammarMatcher m(a);
  OutputConstraint c(ConstraintSpec{.automaton = a}, tok);
  Sampler sampler(so);
  double seconds = 0;
  for (size_t i = 0; i < doc.size(); ++i) {
    for (size_t v = 0; v < logits.size(); ++v) logits[v] = noise[(v + i * 7919) % noise.size()];
    logits[size_t(doc[i])] = 12.0f;  // 6 sigma: on top
    auto t0 = Clock::now();
    if (path == Path::Free) sampler.sample(logits);
    if (path == Path::Mask) sampler.sample(logits, m.allowed().get());
    if (path == Path::Filter) c.sample(sampler, logits);
    seconds += seconds_since(t0);
    ENSURE(m.accept(doc[i]), "accept failed");
    c.accept(doc[i]);
    sampler.accept(doc[i]);
  }
  return seconds / double(doc.size());
}

// What the grammar adds to sampling (µs per token, medians) by each path, greedy and at top-k 40.
json bench_sampling(const std::shared_ptr<const grammar::Grammar>& g,
                    const std::shared_ptr<const grammar::TokenTrie>& trie, const Tokenizer& tok,
                    const std::vector<int32_t>& doc, int runs) {
  json out;
  const std::pair<const char*, SamplerOptions> modes[] = {{"greedy", {.temperature = 0}},
                                                          {"top_k_40", {.temperature = 0.8f, .top_k = 40}}};
  for (const auto& [name, so] : modes) {
    std::vector<double> free, mask, filter;
    for (int r = 0; r < runs; ++r) {
      free.push_back(sample_replay(g, trie, tok, doc, so, Path::Free) * 1e6);
      mask.push_back(sample_replay(g, trie, tok, doc, so, Path::Mask) * 1e6);
      filter.push_back(sample_replay(g, trie, tok, doc, so, Path::Filter) * 1e6);
    }
    out[name] = {{"free_us_per_token", median(free)},
                 {"mask_added_us_per_token", median(mask) - median(free)},
                 {"filter_added_us_per_token", median(filter) - median(free)}};
  }
  return out;
}

json bench_vocab(const std::string& path, const GrammarOptions& o) {
  std::string name = std::filesystem::path(path).stem().string();
  if (name.starts_with("ggml-vocab-")) name.erase(0, 11);
  Tokenizer tok = Tokenizer::from_gguf(GgufFile::open(path));
  auto t0 = Clock::now();
  auto trie = std::make_shared<const grammar::TokenTrie>(tok);
  double trie_ms = seconds_since(t0) * 1e3;
  std::string gbnf = grammar::json_schema_gbnf(json::parse(kSchema));
  std::vector<int32_t> doc = document_tokens(tok, name);
  std::vector<double> cold, warm, compile;
  size_t states = 0;
  std::shared_ptr<const grammar::Grammar> g;
  for (int r = 0; r < o.runs; ++r) {
    auto c0 = Clock::now();
    g = std::make_shared<const grammar::Grammar>(grammar::parse_gbnf(gbnf, &tok));
    auto a = std::make_shared<grammar::GrammarAutomaton>(g, trie);
    compile.push_back(seconds_since(c0) * 1e3);
    cold.push_back(replay(a, doc, name) * 1e6);
    warm.push_back(replay(a, doc, name) * 1e6);
    states = a->states();
  }
  return {{"vocab", name},
          {"vocab_size", tok.vocab_size()},
          {"trie_nodes", trie->nodes()},
          {"trie_ms", trie_ms},
          {"tokens", doc.size()},
          {"compile_ms", median(compile)},
          {"cold_us_per_token", median(cold)},
          {"warm_us_per_token", median(warm)},
          {"states", states},
          {"sampling", bench_sampling(g, trie, tok, doc, o.runs)}};
}

// Tokens/s of the model generating o.gen tokens greedily, free and under the schema.
json bench_model(const GrammarOptions& o) {
  Context ctx(ContextOptions{});
  GgufFile file = GgufFile::open(o.model);
  Engine engine(ctx, file, EngineOptions{});
  const Tokenizer& tok = engine.tokenizer();
  auto trie = std::make_shared<const grammar::TokenTrie>(tok);
  std::vector<int32_t> prompt = tok.encode("And God said, Let there be light:", true);
  json out = {{"model", std::filesystem::path(o.model).filename().string()}, {"device", ctx.caps().name}};
  for (bool constrained : {false, true}) {
    std::vector<double> tps;
    uint32_t generated = 0;
    for (int r = 0; r < o.runs; ++r) {
      engine.reset();
      Sampler sampler(SamplerOptions{.temperature = 0});
      std::unique_ptr<OutputConstraint> c;
      if (constrained) {
        auto g = std::make_shared<const grammar::Grammar>(
            grammar::parse_gbnf(grammar::json_schema_gbnf(json::parse(kSchema)), &tok));
        c = std::make_unique<OutputConstraint>(
            ConstraintSpec{.automaton = std::make_shared<grammar::GrammarAutomaton>(g, trie)}, tok);
      }
      GenerationStats s = generate(engine, sampler, prompt,
                                   {.max_tokens = uint32_t(o.gen), .ignore_eos = !constrained, .constraint = c.get()});
      tps.push_back(s.generation_tps());
      generated = s.generated_tokens;
    }
    out[constrained ? "constrained" : "free"] = {{"tokens", generated}, {"tokens_per_second", median(tps)}};
  }
  return out;
}

std::vector<std::string> default_vocabs() {
  std::vector<std::string> v = {VKLLM_SOURCE_DIR "/tests/data/vocab/ggml-vocab-qwen2.gguf",
                                VKLLM_SOURCE_DIR "/tests/data/vocab/ggml-vocab-llama-bpe.gguf"};
  if (std::filesystem::exists(kGemmaVocab))
    v.push_back(kGemmaVocab);
  else
    fmt::print(stderr, "no {} (scripts/fetch_llamacpp takes it from npm's node-llama-cpp): gemma-4 left out\n",
               kGemmaVocab);
  return v;
}

void run_grammar(const GrammarOptions& o) {
  json results = json::array();
  if (!o.json)
    fmt::print("{:<12} {:>7} {:>9} {:>8} {:>7} {:>11} {:>10} {:>10} {:>7}\n", "vocabulary", "size", "trie", "trie ms",
               "tokens", "compile ms", "cold us/t", "warm us/t", "states");
  for (const std::string& v : o.vocabs.empty() ? default_vocabs() : o.vocabs) {
    json r = bench_vocab(v, o);
    results.push_back(r);
    if (!o.json)
      fmt::print("{:<12} {:>7} {:>9} {:>8.1f} {:>7} {:>11.2f} {:>10.1f} {:>10.2f} {:>7}\n",
                 r["vocab"].get<std::string>(), r["vocab_size"].get<uint32_t>(), r["trie_nodes"].get<size_t>(),
                 r["trie_ms"].get<double>(), r["tokens"].get<size_t>(), r["compile_ms"].get<double>(),
                 r["cold_us_per_token"].get<double>(), r["warm_us_per_token"].get<double>(), r["states"].get<size_t>());
  }
  if (!o.json) {
    fmt::print(
        "\nwhat the grammar adds to sampling, us per token (cold; logits: noise, the document's token on top)\n");
    fmt::print("{:<12} {:>12} {:>10} {:>10} {:>12} {:>10} {:>10}\n", "vocabulary", "greedy free", "+ mask", "+ filter",
               "top-40 free", "+ mask", "+ filter");
    for (const json& r : results) {
      const json &gr = r["sampling"]["greedy"], &tk = r["sampling"]["top_k_40"];
      fmt::print("{:<12} {:>12.1f} {:>10.1f} {:>10.1f} {:>12.1f} {:>10.1f} {:>10.1f}\n", r["vocab"].get<std::string>(),
                 gr["free_us_per_token"].get<double>(), gr["mask_added_us_per_token"].get<double>(),
                 gr["filter_added_us_per_token"].get<double>(), tk["free_us_per_token"].get<double>(),
                 tk["mask_added_us_per_token"].get<double>(), tk["filter_added_us_per_token"].get<double>());
    }
  }
  json model;
  if (!o.no_model) {
    model = bench_model(o);
    if (!o.json)
      fmt::print("{} on {}: {:.1f} tokens/s free ({} tokens), {:.1f} tokens/s under the schema ({} tokens)\n",
                 model["model"].get<std::string>(), model["device"].get<std::string>(),
                 model["free"]["tokens_per_second"].get<double>(), model["free"]["tokens"].get<uint32_t>(),
                 model["constrained"]["tokens_per_second"].get<double>(),
                 model["constrained"]["tokens"].get<uint32_t>());
  }
  if (o.json) fmt::print("{}\n", json({{"vocabularies", results}, {"model", model}}).dump());
}

}  // namespace

void add_grammar_bench(CLI::App& app) {
  auto* cmd =
      app.add_subcommand("grammar", "Constrained decoding: grammar cost per token per vocabulary, model tokens/s");
  auto o = std::make_shared<GrammarOptions>();
  cmd->add_option("--vocab", o->vocabs,
                  "GGUF vocabularies (default: the repository's qwen2 and llama-bpe, and Gemma 4's when fetched)");
  cmd->add_option("-m,--model", o->model,
                  "Model for tokens/s with and without the schema (default: the default model)");
  cmd->add_option("--runs", o->runs, "Runs per case (default 5); medians")->check(int_range(1, 1000));
  cmd->add_option("--gen", o->gen, "Tokens generated per model run (default 96)")->check(int_range(1, 4096));
  cmd->add_flag("--no-model", o->no_model, "Skip the model's tokens/s");
  cmd->add_flag("--json", o->json, "Results as JSON");
  cmd->callback([o] { run_grammar(*o); });
}

}  // namespace vkllm::bench
