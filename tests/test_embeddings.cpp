// Embeddings (engine/embedding.h): pooled final hidden states against the reference model's
// (mean, cls, last; F32 weights), a batch of inputs against each input alone (more inputs than
// slots, and an input longer than a forward's batch), llama.cpp's own pooled embeddings on the
// Qwen3-Embedding preset (tests/llamacpp, skipped where it was not built), the pooling choice and
// llama.cpp's normalisations.
#include <fmt/format.h>

#include <cmath>
#include <sstream>

#include "catch.h"
#include "cli.h"
#include "engine/embedding.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "harness.h"
#include "reference/model.h"

using namespace vkllm;

namespace {

constexpr double kBound = 1e-5;

std::vector<std::vector<int32_t>> some_inputs(const std::vector<size_t>& lengths, uint32_t vocab) {
  std::vector<std::vector<int32_t>> out;
  for (size_t i = 0; i < lengths.size(); ++i) out.push_back(test::some_tokens(lengths[i], vocab, uint32_t(i + 3)));
  return out;
}

// The reference model's hidden states of the input pooled as `p` says.
std::vector<float> reference_pooled(const ref::Model& m, const std::vector<int32_t>& tokens, Pooling p, uint32_t dim) {
  std::vector<float> h = m.hidden_states(tokens), out(dim);
  size_t n = tokens.size();
  for (size_t t = 0; t < n; ++t) {
    bool take = p == Pooling::Mean || (p == Pooling::Cls && t == 0) || (p == Pooling::Last && t + 1 == n);
    if (!take) continue;
    for (uint32_t d = 0; d < dim; ++d) out[d] += h[t * dim + d] / float(p == Pooling::Mean ? n : 1);
  }
  return out;
}

double max_difference(const std::vector<float>& a, const std::vector<float>& b) {
  double m = 0;
  for (size_t i = 0; i < a.size(); ++i) m = std::max(m, double(std::abs(a[i] - b[i])));
  return m;
}

double cosine(const std::vector<float>& a, const std::vector<float>& b) {
  double ab = 0, aa = 0, bb = 0;
  for (size_t i = 0; i < a.size(); ++i) ab += double(a[i]) * b[i], aa += double(a[i]) * a[i], bb += double(b[i]) * b[i];
  return ab / std::sqrt(aa * bb);
}

}  // namespace

TEST_CASE("embeddings: pooled hidden states match the reference model (mean, cls, last)", "[embed]") {
  test::EngineFixture f = test::family_fixture("qwen3-embedding", DType::F32);
  test::Loaded l = test::load(f.spec, {.n_ctx = 64, .slots = 3, .kv_type = DType::F32});
  ref::Model reference(l.file, l.engine->config());
  uint32_t dim = l.engine->config().dim;
  auto inputs = some_inputs({1, 7, 20}, f.spec.vocab_size);
  for (Pooling p : {Pooling::Mean, Pooling::Cls, Pooling::Last}) {
    std::vector<std::vector<float>> got = embed(*l.engine, inputs, p);
    REQUIRE(got.size() == inputs.size());
    for (size_t i = 0; i < inputs.size(); ++i) {
      double d = max_difference(got[i], reference_pooled(reference, inputs[i], p, dim));
      INFO(fmt::format("pooling {}, input {} ({} tokens): max |gpu - reference| {:.3g}", to_string(p), i,
                       inputs[i].size(), d));
      CHECK(d <= kBound);
    }
  }
}

TEST_CASE("embeddings: a batch equals each input alone", "[embed]") {
  test::EngineFixture f = test::family_fixture("qwen3-embedding", DType::F32);
  // Three slots for six inputs, and a batch of 16 tokens, so the 40-token input runs in chunks
  // beside others and inputs wait for slots.
  test::Loaded l = test::load(f.spec, {.n_ctx = 48, .batch = 16, .slots = 3, .kv_type = DType::F32});
  auto inputs = some_inputs({5, 40, 1, 12, 9, 16}, f.spec.vocab_size);
  for (Pooling p : {Pooling::Mean, Pooling::Last}) {
    std::vector<std::vector<float>> together = embed(*l.engine, inputs, p);
    double worst = 0;
    for (size_t i = 0; i < inputs.size(); ++i) {
      std::vector<std::vector<float>> alone = embed(*l.engine, std::span(inputs).subspan(i, 1), p);
      worst = std::max(worst, max_difference(together[i], alone[0]));
    }
    WARN(fmt::format("pooling {}: batch vs one by one, max difference {:.3g}", to_string(p), worst));
    CHECK(worst <= kBound);
  }
}

TEST_CASE("embeddings: bad inputs are refused before anything runs", "[embed]") {
  test::EngineFixture f = test::family_fixture("qwen3-embedding", DType::F32);
  test::Loaded l = test::load(f.spec, {.n_ctx = 16, .slots = 2});
  std::vector<std::vector<int32_t>> empty = {{}}, long_one = {std::vector<int32_t>(17, 5)}, bad_id = {{1, 99999}};
  CHECK_THROWS_WITH(embed(*l.engine, empty, Pooling::Last), Catch::Contains("has no tokens"));
  CHECK_THROWS_WITH(embed(*l.engine, long_one, Pooling::Last), Catch::Contains("the context holds 16"));
  CHECK_THROWS_WITH(embed(*l.engine, bad_id, Pooling::Last), Catch::Contains("outside the vocabulary"));
}

TEST_CASE("embeddings: the pooling is the file's, else last, and none and rank are refused", "[embed]") {
  ModelConfig c = fixture_config(test::family_fixture("qwen3-embedding", DType::F32).spec);
  CHECK(c.pooling == Pooling::Last);
  c.pooling = Pooling::Mean;
  CHECK(embedding_pooling(c) == Pooling::Mean);
  CHECK(embedding_pooling(c, Pooling::Cls) == Pooling::Cls);
  c.pooling = Pooling::Unspecified;  // a generative model
  CHECK(embedding_pooling(c) == Pooling::Last);
  CHECK_THROWS_WITH(embedding_pooling(c, Pooling::None), Catch::Contains("pooling none"));
  c.pooling = Pooling::Rank;
  CHECK_THROWS_WITH(embedding_pooling(c), Catch::Contains("reranker"));
  CHECK(pooling_named("cls") == Pooling::Cls);
  CHECK_FALSE(pooling_named("max"));
}

TEST_CASE("embeddings: normalisations follow llama.cpp's --embd-normalize", "[embed]") {
  auto normalized = [](std::vector<float> v, int mode) {
    normalize_embedding(v, mode);
    return v;
  };
  CHECK(normalized({3, -4}, -1) == std::vector<float>{3, -4});
  CHECK(normalized({3, -4}, 2) == std::vector<float>{0.6f, -0.8f});
  std::vector<float> taxicab = normalized({3, -4}, 1);
  CHECK((taxicab[0] == Approx(3.0 / 7) && taxicab[1] == Approx(-4.0 / 7)));
  std::vector<float> int16 = normalized({3, -4}, 0);
  CHECK(int16[1] == Approx(-32760));
  CHECK(normalized({0, 0}, 2) == std::vector<float>{0, 0});
  CHECK_THROWS(normalized({1}, -2));
}

TEST_CASE("embeddings: llama.cpp's own embeddings of the Qwen3-Embedding preset", "[embed][llamacpp]") {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  test::EngineFixture f = test::family_fixture("qwen3-embedding", DType::F32);
  test::TempFile file("qwen3-embedding.gguf");
  file.write(make_fixture_model(f.spec));
  test::Loaded l = test::load(f.spec, {.n_ctx = 64, .slots = 3, .kv_type = DType::F32});
  Tokenizer tok = Tokenizer::from_gguf(l.file);
  // Texts tokenized with the model's special tokens end in <|endoftext|>, as llama.cpp's do.
  std::vector<std::vector<int32_t>> inputs;
  std::string tokens_args;
  for (const char* text : {"The quick brown fox", "jumps over the lazy dog, twice.", "a"}) {
    inputs.push_back(tok.encode(text, true, true));
    REQUIRE(inputs.back().back() == tok.eos());
    tokens_args += fmt::format(" --tokens {}", fmt::join(inputs.back(), ","));
  }
  for (const char* pooling : {"", "mean", "cls"}) {
    std::string args =
        fmt::format("embed -m '{}'{}{}", file.path, *pooling ? fmt::format(" --pooling {}", pooling) : "", tokens_args);
    test::CliResult r = test::run_program(VKLLM_LLAMACPP_ORACLE, args);
    INFO(r.err);
    REQUIRE(r.exit_code == 0);
    Pooling p = *pooling ? *pooling_named(pooling) : embedding_pooling(l.engine->config());
    std::vector<std::vector<float>> ours = embed(*l.engine, inputs, p);
    std::istringstream lines(r.out);
    size_t seen = 0;
    for (std::string line; std::getline(lines, line); ++seen) {
      std::istringstream in(line);
      std::string tag;
      size_t seq;
      in >> tag >> seq;
      std::vector<float> theirs;
      for (float v; in >> v;) theirs.push_back(v);
      REQUIRE(seq < ours.size());
      REQUIRE(theirs.size() == ours[seq].size());
      double c = cosine(ours[seq], theirs);
      WARN(fmt::format("pooling {}, input {}: cosine with llama.cpp {:.9f}", to_string(p), seq, c));
      CHECK(c >= 0.99999);
      test::check_nmse(ours[seq], theirs, 1e-6, fmt::format("embedding {} {}", to_string(p), seq));
    }
    CHECK(seen == inputs.size());
  }
}
