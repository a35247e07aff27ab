// Every fixture of the registry (tests/engine_fixtures.h), and the attention-kind fixtures of the
// engine tests (MHA, GQA, MQA, both MLA layouts), against llama.cpp's own CPU backend: an
// oracle that shares no code with vkllm (tests/llamacpp/llamacpp_oracle.cpp, built against npm's
// node-llama-cpp by scripts/fetch_llamacpp). Per family:
// - F32 weights, f32 KV cache: logits of every position in one batch and in chunks of 8 (across
//   chunk boundaries), NMSE <= 1e-6 each (1e-5 for the GELU families, whose oracle rounds GELU's
//   input to f16), and 32 greedy tokens identical, and the same experts chosen at every position;
// - the same file quantised by llama.cpp's quantizer to Q8_0 and Q4_K_M (and for mixtures of
//   experts MXFP4_MOE, whose experts are MXFP4): NMSE within the bound
//   that llama.cpp's CPU path explains (it quantises activations to 8 bits for these dot products;
//   check_quantised says how the bound and rerouted experts are handled).
// The registry's families in their other tensor layouts (test::layout_fixtures: fused QKV, fused
// expert gate/up, separate ones where fused is usual, the optional biases) get the F32 check once
// more. One test case per fixture, registered from the registry at start-up. Each writes its NMSE line
// to build/llamacpp_agreement/<fixture>.txt (scripts/test prints them after ctest). Where the oracle
// was not built (no npm, offline) every case is skipped with the reason.
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <limits>
#include <map>
#include <set>
#include <sstream>
#include <stdexcept>

#include "arch/architecture.h"
#include "catch.h"
#include "cli.h"
#include "engine/engine.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "graph/transformer.h"
#include "harness.h"
#include "reference/model.h"

using namespace vkllm;
namespace fs = std::filesystem;

namespace {

constexpr double kF32Bound = 1e-6;
// llama.cpp's CPU GELU reads an f16 table (ggml-cpu GGML_GELU_FP16): about 1e-7 of NMSE per GELU
// stage that vkllm's f32 GELU does not have, 1e-8 to 1.1e-6 on the gemma fixtures by their random
// draw (docs/decisions.md, issues 28 and 44).
constexpr double kGeluF32Bound = 1e-5;
// llama.cpp's CPU dot products for Q8_0 and the K-quants multiply by activations quantised to
// Q8_0 / Q8_K (one 8-bit value per element and a scale per block); vkllm keeps activations f32.
// That alone gives logits NMSE of 1e-4 to 4e-4 on these fixtures (docs/decisions.md).
constexpr double kQuantBound = 1e-3;
constexpr size_t kTokens = 21, kChunk = 8, kGreedy = 32;
const fs::path kOut = VKLLM_BUILD_DIR "/llamacpp_agreement";

// "deepseek2-v3" of "deepseek2-v3 f32".
std::string family(const test::EngineFixture& f) { return f.name.substr(0, f.name.find(' ')); }

// The experts each mixture-of-experts layer chose for each position, sorted: {layer, pos} -> ids.
using Routing = std::map<std::pair<int, size_t>, std::vector<int32_t>>;

// What one side computed for a prompt.
struct Run {
  std::vector<float> logits;  // position-major, vocab values each
  Routing experts;
  std::vector<int32_t> greedy;
};

std::string join(const std::vector<int32_t>& v) { return fmt::format("{}", fmt::join(v, ",")); }

std::string require_ok(const test::CliResult& r, const std::string& what) {
  INFO(what << ": " << r.err);
  REQUIRE(r.exit_code == 0);
  return r.out;
}

// llama.cpp's own run ended by a signal (an abort in ggml, a crash): nothing was compared, so the
// test case says so and is skipped, never counted as vkllm's failure, nor as a pass. (An error the
// oracle reports itself, exit 1 with "error: ...", is a failure: it may be the fixture's fault.)
struct OracleCrashed : std::runtime_error {
  using std::runtime_error::runtime_error;
};

// The message of a crashed oracle run (empty when it did not crash): the signal, and ggml's
// assertion or the last line it printed.
std::string oracle_crash(const test::CliResult& r, const std::string& what) {
  if (r.exit_code < 128) return "";
  std::string why;
  std::istringstream err(r.err);
  for (std::string line; std::getline(err, line);)
    if (line.find("GGML_ASSERT") != std::string::npos || line.find("GGML_ABORT") != std::string::npos || why.empty())
      why = line;
  return fmt::format("the llama.cpp oracle crashed (signal {}) on {}, so nothing was compared; not a vkllm result: {}",
                     r.exit_code - 128, what, why.empty() ? "no message" : why);
}

std::string oracle_ok(const test::CliResult& r, const std::string& what) {
  if (std::string crash = oracle_crash(r, what); !crash.empty()) throw OracleCrashed(crash);
  return require_ok(r, "llama.cpp on " + what);
}

Run oracle(const fs::path& model, const std::vector<int32_t>& tokens, size_t chunk, size_t greedy) {
  std::string args = fmt::format("logits -m '{}' --tokens {} --kv-type f32 --chunk {} --greedy {} --experts",
                                 model.string(), join(tokens), chunk, greedy);
  std::string out = oracle_ok(test::run_program(VKLLM_LLAMACPP_ORACLE, args), model.string());
  Run r;
  std::istringstream lines(out);
  for (std::string line; std::getline(lines, line);) {
    std::istringstream in(line);
    std::string tag;
    in >> tag;
    if (tag == "logits") {
      size_t pos;
      in >> pos;
      for (float v; in >> v;) r.logits.push_back(v);
    } else if (tag == "greedy") {
      for (int32_t t; in >> t;) r.greedy.push_back(t);
    } else if (tag == "experts") {
      std::pair<int, size_t> at;
      in >> at.first >> at.second;
      std::vector<int32_t>& ids = r.experts[at];
      for (int32_t e; in >> e;) ids.push_back(e);
      std::sort(ids.begin(), ids.end());
    }
  }
  return r;
}

void oracle_quantize(const fs::path& in, const fs::path& out, const std::string& type) {
  oracle_ok(
      test::run_program(VKLLM_LLAMACPP_ORACLE, fmt::format("quantize '{}' '{}' {}", in.string(), out.string(), type)),
      in.string() + " (quantize to " + type + ")");
}

// The file under another architecture name: general.architecture and the key prefix change,
// tensors and values stay (for families llama.cpp reads under another name).
void relabel(const fs::path& from, const fs::path& to, const std::string& arch) {
  GgufFile f = GgufFile::open(from.string());
  std::string old(f.get_string("general.architecture"));
  GgufWriter w;
  for (const GgufKv& kv : f.metadata()) {
    std::string key(kv.key);
    if (key == "general.architecture")
      w.add(key, arch);
    else
      w.add(key.starts_with(old + ".") ? arch + key.substr(old.size()) : key, kv.value);
  }
  for (const GgufTensor& t : f.tensors())
    w.add_tensor(t.name, t.shape(), t.type, std::vector<std::byte>(t.data.begin(), t.data.end()));
  w.save(to.string());
}

struct Files {
  fs::path ours, theirs;  // vkllm reads `ours`, llama.cpp `theirs` (the same file unless relabelled)
};

// The files of one test: its own directory (ctest runs tests in parallel), `tag`.gguf for vkllm
// and, where llama.cpp reads the family under another name, `tag`.<that name>.gguf for it.
Files files_of(const test::EngineFixture& f, const std::string& test, const std::string& tag) {
  fs::path dir = kOut / family(f) / test;
  fs::create_directories(dir);
  Files files{dir / (tag + ".gguf"), dir / (tag + ".gguf")};
  if (!f.oracle_arch.empty()) files.theirs = dir / (tag + "." + f.oracle_arch + ".gguf");
  return files;
}

Files write_f32(const test::EngineFixture& f, const std::string& test) {
  Files files = files_of(f, test, "F32");
  fixture_writer(f.spec).save(files.ours.string());
  if (files.theirs != files.ours) relabel(files.ours, files.theirs, f.oracle_arch);
  return files;
}

struct Ours {
  GgufFile file;
  std::unique_ptr<Engine> engine;
};
Ours open(const fs::path& path, uint32_t batch) {
  Ours o{GgufFile::open(path.string()), nullptr};
  o.engine = std::make_unique<Engine>(test::gpu(), o.file, EngineOptions{.batch = batch, .kv_type = DType::F32});
  return o;
}

// vkllm's logits of every position in one forward, with the experts it chose (its taps).
Run ours(Engine& e, const std::vector<int32_t>& tokens) {
  std::vector<Tap> taps;
  Run r;
  std::span<const float> logits = e.transformer().forward_tapped(tokens, 0, OutputMode::All, taps);
  r.logits.assign(logits.begin(), logits.end());
  for (const Tap& t : taps) {
    if (t.name != "ffn_moe_topk") continue;
    for (size_t row = 0; row < t.rows; ++row) {
      std::vector<int32_t>& ids = r.experts[{t.layer, row}];
      ids.resize(t.width);
      std::memcpy(ids.data(), &t.values[row * t.width], 4 * t.width);
      std::sort(ids.begin(), ids.end());
    }
  }
  return r;
}

std::vector<int32_t> greedy(Engine& e, const std::vector<int32_t>& prompt, size_t n, uint32_t vocab) {
  e.reset();
  std::vector<int32_t> out;
  std::span<const float> logits = e.eval(prompt);
  for (size_t i = 0; i < n; ++i) {
    out.push_back(test::best(logits.first(vocab)));
    if (i + 1 < n) logits = e.eval(std::span<const int32_t>(&out.back(), 1));
  }
  return out;
}

// The positions at which some layer's routers chose different experts.
std::set<size_t> routing_differs(const Run& a, const Run& b) {
  std::set<size_t> out;
  for (const auto& [at, ids] : a.experts)
    if (auto it = b.experts.find(at); it == b.experts.end() || it->second != ids) out.insert(at.second);
  for (const auto& [at, ids] : b.experts)
    if (!a.experts.count(at)) out.insert(at.second);
  return out;
}

// The positions a routing difference reaches: its own, and in a hybrid every later one too.
std::set<size_t> tainted(const std::set<size_t>& rerouted, bool hybrid) {
  if (!hybrid || rerouted.empty()) return rerouted;
  std::set<size_t> out;
  for (size_t p = *rerouted.begin(); p < kTokens; ++p) out.insert(p);
  return out;
}

// NMSE over the positions not in `skip`.
double nmse_except(const Run& got, const Run& want, const std::set<size_t>& skip, uint32_t vocab) {
  std::vector<float> g, w;
  for (size_t pos = 0; pos * vocab < want.logits.size(); ++pos) {
    if (skip.count(pos)) continue;
    g.insert(g.end(), got.logits.begin() + long(pos * vocab), got.logits.begin() + long((pos + 1) * vocab));
    w.insert(w.end(), want.logits.begin() + long(pos * vocab), want.logits.begin() + long((pos + 1) * vocab));
  }
  test::Comparison c = test::compare(g, w);
  return c.extra_nonfinite ? std::numeric_limits<double>::infinity() : c.nmse;
}

void record(const test::EngineFixture& f, const std::string& kind, const std::string& line) {
  fs::create_directories(kOut);
  std::ofstream(kOut / (family(f) + "_" + kind + ".txt")) << line << "\n";
  std::printf("%s\n", line.c_str());
}

void check_f32(const test::EngineFixture& fixture) {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  Files files = write_f32(fixture, "f32");
  uint32_t vocab = fixture.spec.vocab_size;
  std::vector<int32_t> tokens = test::some_tokens(kTokens, vocab, 5);

  Run theirs = oracle(files.theirs, tokens, 0, kGreedy), theirs_chunked = oracle(files.theirs, tokens, kChunk, 0);
  REQUIRE(theirs.logits.size() == kTokens * vocab);
  REQUIRE(theirs_chunked.logits.size() == kTokens * vocab);
  Ours one = open(files.ours, 512), chunks = open(files.ours, kChunk);
  Run mine = ours(*one.engine, tokens);
  Run mine_chunked{.logits = chunks.engine->eval_all(tokens)};
  mine.greedy = greedy(*one.engine, tokens, kGreedy, vocab);
  double a = nmse_except(mine, theirs, {}, vocab), b = nmse_except(mine_chunked, theirs_chunked, {}, vocab);
  size_t same = 0;
  while (same < kGreedy && same < theirs.greedy.size() && mine.greedy[same] == theirs.greedy[same]) ++same;

  record(fixture, "F32",
         fmt::format("llama.cpp agreement {:<14} F32    nmse {:.2e} (one batch)  {:.2e} (chunks of {})  greedy {}/{}",
                     family(fixture), a, b, kChunk, same, kGreedy));
  INFO(fixture.name << ": vkllm greedy " << join(mine.greedy) << ", llama.cpp " << join(theirs.greedy));
  bool gelu = fixture_config(fixture.spec).architecture().recipe.ffn.activation == FfnActivation::Gelu;
  CHECK(a <= (gelu ? kGeluF32Bound : kF32Bound));
  CHECK(b <= (gelu ? kGeluF32Bound : kF32Bound));
  CHECK(mine.greedy == theirs.greedy);
  CHECK(mine.experts.size() == theirs.experts.size());
  CHECK(routing_differs(mine, theirs).empty());
}

// The fixture with every matrix row a multiple of 256 values, so that llama.cpp's Q4_K_M gives
// K-quants (Q4_K, Q6_K) rather than its fallbacks for narrow rows.
FixtureSpec widened(FixtureSpec s) {
  if (s.arch == "granitehybrid") s.ssm_head_dim = s.ssm_head_dim * 256 / s.dim;  // llama.cpp asserts d_inner = 2·dim
  s.dim = 256, s.hidden_dim = 512;
  if (s.expert_hidden_dim) s.expert_hidden_dim = 256;
  if (s.shared_hidden_dim) s.shared_hidden_dim = 512;
  if (s.q_lora_rank) s.q_lora_rank = 256;
  s.kv_lora_rank = 256, s.v_head_dim = 64;  // latent attention only
  return s;
}

// The files llama.cpp's quantizer makes of a fixture: Q8_0, Q4_K_M, and for a mixture of experts
// MXFP4_MOE (gpt-oss's files: experts MXFP4, the rest Q8_0).
std::vector<std::string> quantised_types(const test::EngineFixture& f) {
  if (f.spec.n_experts) return {"Q8_0", "Q4_K_M", "MXFP4_MOE"};
  return {"Q8_0", "Q4_K_M"};
}

// The bound: llama.cpp's 8-bit activations perturb its products as 8-bit weights do, so vkllm may
// differ from llama.cpp on a quantised file by kQuantBound, or by as much as Q8_0 weights move
// llama.cpp's own logits (its Q8_0 file against its F32 file, over the same positions) when the
// model amplifies 8-bit noise more than that (the hybrids' random-weight fixtures: each Gated
// DeltaNet layer roughly triples it). Where 8-bit noise moves a router's near-tie, the two run different experts for
// that token, a difference no bound on the logits explains: those positions (and in a hybrid every later one, which
// reads the recurrent state they changed) are counted and printed, the bound holds over the rest, and rerouted
// positions may be a quarter of them or as many as the same quantisation reroutes in llama.cpp itself (its file against
// its F32 file). On GELU families llama.cpp adds noise of its own that vkllm's f32 GELU lacks (an
// f16 table: the input rounded to f16, ggml-cpu GGML_GELU_FP16), so there the bound doubles.
// For K-quant files llama.cpp rounds activations to Q8_K (one scale per 256 values, where Q8_0
// weights have one per 32), which moves a model whose activations are heavy-tailed (LFM2's short
// conv feeds its output projection the product of three projections) by more than Q8_0 weights
// do. Where vkllm is further than the bound, it passes only when it computes the file as the CPU
// reference does in f32 (NMSE <= 1e-6 to ref::Model, whose dequantisation test_llamacpp_quant
// holds to llama.cpp's): the distance is then llama.cpp's own rounding, and the line says how far
// the reference is from llama.cpp (docs/decisions.md, issue 42).
void check_quantised(const test::EngineFixture& fixture) {
  if (std::string why = test::llamacpp_oracle_missing(); !why.empty()) return test::skip(why);
  test::EngineFixture wide = fixture;
  wide.spec = widened(fixture.spec);
  Files f32 = write_f32(wide, "quantised");
  uint32_t vocab = fixture.spec.vocab_size;
  std::vector<int32_t> tokens = test::some_tokens(kTokens, vocab, 6);
  Run unquantised = oracle(f32.theirs, tokens, 0, 0);
  ModelConfig config = fixture_config(wide.spec);
  bool hybrid = config.hybrid();
  double gelu = config.architecture().recipe.ffn.activation == FfnActivation::Gelu ? 2 : 1;
  std::string line = fmt::format("llama.cpp agreement {:<14}", family(fixture));
  Run theirs_q8;  // llama.cpp on the Q8_0 file: how much 8-bit noise moves this model
  std::set<size_t> moved_q8;
  for (const std::string& type : quantised_types(fixture)) {
    Files q = files_of(wide, "quantised", type);
    oracle_quantize(f32.theirs, q.theirs, type);
    if (q.theirs != q.ours) relabel(q.theirs, q.ours, fixture.spec.arch);
    Run theirs = oracle(q.theirs, tokens, 0, 0);
    REQUIRE(theirs.logits.size() == kTokens * vocab);
    std::set<size_t> moved = routing_differs(theirs, unquantised);
    if (type == "Q8_0") theirs_q8 = theirs, moved_q8 = moved;
    Ours opened = open(q.ours, 512);
    Run mine = ours(*opened.engine, tokens);
    std::set<size_t> rerouted = routing_differs(mine, theirs), skip = rerouted;
    skip.insert(moved_q8.begin(), moved_q8.end());  // both measures over the same positions
    skip = tainted(skip, hybrid);
    line += fmt::format(" {:<6} ", type);
    if (skip.size() < kTokens) {
      double nmse = nmse_except(mine, theirs, skip, vocab);
      double sensitivity = nmse_except(theirs_q8, unquantised, skip, vocab);
      line += fmt::format("nmse {:.2e}", nmse);
      if (sensitivity > kQuantBound)
        line += fmt::format(" [Q8_0 weights move llama.cpp itself by {:.2e}]", sensitivity);
      double bound = std::max(kQuantBound, gelu * sensitivity), to_reference = 0;
      if (nmse > bound) {  // is the rest llama.cpp's own rounding? (see above)
        Run exact{.logits = ref::Model(opened.file, opened.engine->config(), DType::F32).forward(tokens)};
        to_reference = nmse_except(mine, exact, skip, vocab);
        line += fmt::format(" [the f32 CPU reference is {:.2e} from llama.cpp, vkllm {:.2e} from it]",
                            nmse_except(exact, theirs, skip, vocab), to_reference);
      }
      INFO(fixture.name << " " << type << ": nmse " << nmse << " over " << kTokens - skip.size()
                        << " positions; Q8_0 weights move llama.cpp by " << sensitivity << "; vkllm to the reference "
                        << to_reference);
      CHECK((nmse <= bound || to_reference <= kF32Bound));
    } else {
      line += "not compared: routing differs from the first token";
    }
    if (!rerouted.empty())
      line += fmt::format(" (routing differs at {} of {} positions; llama.cpp's own {} against F32 at {})",
                          rerouted.size(), kTokens, type, moved.size());
    INFO(fixture.name << " " << type << ": routing differs at " << rerouted.size() << ", llama.cpp's own at "
                      << moved.size());
    CHECK(rerouted.size() <= std::max<size_t>(kTokens / 4, moved.size()));
  }
  record(fixture, "quantised", line);
}

TEST_CASE("a crash of the llama.cpp oracle is reported as the oracle's, not as vkllm's", "[llamacpp]") {
  // A process that aborts as ggml's GGML_ASSERT does (SIGABRT after its message).
  test::CliResult r = test::run_program("/bin/sh",
                                        "-c 'echo \"ggml-backend.cpp:1294: GGML_ASSERT(x) failed\" >&2; "
                                        "echo backtrace >&2; kill -ABRT $$'");
  std::string crash = oracle_crash(r, "mla/Q8_0.gguf");
  CHECK(crash ==
        "the llama.cpp oracle crashed (signal 6) on mla/Q8_0.gguf, so nothing was compared; not a vkllm "
        "result: ggml-backend.cpp:1294: GGML_ASSERT(x) failed");
  CHECK_THROWS_AS(oracle_ok(r, "mla/Q8_0.gguf"), OracleCrashed);
  // An error the oracle reports itself is no crash: the case fails on it.
  test::CliResult error = test::run_program("/bin/sh", "-c 'echo \"error: cannot load\" >&2; exit 1'");
  CHECK(oracle_crash(error, "x.gguf").empty());
}

// One Catch test case per registry fixture (Catch2 v2 has no dynamic sections of its own).
struct Invoker : Catch::ITestInvoker {
  test::EngineFixture fixture;
  void (*body)(const test::EngineFixture&);
  std::string kind;
  Invoker(test::EngineFixture f, void (*b)(const test::EngineFixture&), std::string k)
      : fixture(std::move(f)), body(b), kind(std::move(k)) {}
  void invoke() const override {
    try {
      body(fixture);
    } catch (const OracleCrashed& e) {
      record(fixture, kind, fmt::format("llama.cpp agreement {:<14} {}: {}", family(fixture), kind, e.what()));
      test::skip(e.what());
    }
  }
};

void add_cases() {
  std::vector<test::EngineFixture> all = test::family_fixtures(DType::F32);
  for (test::EngineFixture& f : test::engine_fixtures(DType::F32)) all.push_back(f);  // attention kinds
  for (const test::EngineFixture& f : all) {
    // Catch keeps what it is given by reference until it copies it: these live for the process.
    auto* names = new std::vector<std::string>{
        "llama.cpp agrees with vkllm on " + family(f) + " (F32 weights)",
        fmt::format("llama.cpp agrees with vkllm on {} ({})", family(f), fmt::join(quantised_types(f), ", "))};
    new Catch::AutoReg(new Invoker(f, check_f32, "F32"), CATCH_INTERNAL_LINEINFO, "",
                       Catch::NameAndTags{(*names)[0], "[llamacpp]"});
    new Catch::AutoReg(new Invoker(f, check_quantised, "quantised"), CATCH_INTERNAL_LINEINFO, "",
                       Catch::NameAndTags{(*names)[1], "[llamacpp][quantised]"});
  }
  // Each family once more in its other tensor layouts (fused QKV, fused expert gate/up, the
  // optional biases): F32 only, the layouts change where values are read, not how they round.
  for (const test::EngineFixture& f : test::layout_fixtures(DType::F32)) {
    auto* name = new std::string("llama.cpp agrees with vkllm on " + family(f) + " (F32 weights)");
    new Catch::AutoReg(new Invoker(f, check_f32, "F32"), CATCH_INTERNAL_LINEINFO, "",
                       Catch::NameAndTags{*name, "[llamacpp][layouts]"});
  }
}

const bool registered = test::at_start(add_cases);

}  // namespace
