// Quantisation mixes as a user meets them: `vkllm info` names a file's mix and bits per weight,
// and a file holding a type no kernel reads yet fails at load with one line naming the tensor and
// its type. (The engine on every mix: test_transformer.cpp; `vkllm run` on one costs a fresh
// process ~40 s of lavapipe pipeline compiles, so it is left to the engine tests.)
#include <fmt/format.h>
#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

using namespace vkllm;
using test::run_vkllm;
using test::TempFile;

namespace {

// The file's metadata and tensors, with `name` retyped as `type` (zero bytes of its new size).
std::vector<std::byte> mix_retyped(const std::vector<std::byte>& file, std::string_view name, DType type) {
  GgufFile f = GgufFile::parse(file, "fixture");
  GgufWriter w;
  for (const GgufKv& kv : f.metadata()) w.add(kv.key, kv.value);
  for (const GgufTensor& t : f.tensors()) {
    if (t.name != name) {
      w.add_tensor(t.name, t.shape(), t.type, std::vector<std::byte>(t.data.begin(), t.data.end()));
      continue;
    }
    w.add_tensor(t.name, t.shape(), type, std::vector<std::byte>(row_bytes(type, t.n_elements())));
  }
  return w.bytes();
}

}  // namespace

TEST_CASE("vkllm info names the mix and its bits per weight", "[cli][mix]") {
  for (const char* mix : {"Q3_K_M", "IQ3_M"}) {
    INFO(mix);
    std::vector<std::byte> bytes = make_fixture_model(test::mix_fixture(mix));
    GgufFile f = GgufFile::parse(bytes, "fixture");
    uint64_t params = 0, tensor_bytes = 0;
    for (const GgufTensor& t : f.tensors()) params += t.n_elements(), tensor_bytes += t.data.size();
    TempFile file("mix");
    file.write(bytes);
    auto r = run_vkllm("info --json -m " + file.path);
    REQUIRE(r.exit_code == 0);
    nlohmann::json j = nlohmann::json::parse(r.out);
    CHECK(j["file_type"] == mix);
    CHECK(j["bits_per_weight"].get<double>() == Approx(8.0 * double(tensor_bytes) / double(params)));
    auto text = run_vkllm("info -m " + file.path);
    CHECK(text.out.find(fmt::format("tensors     {}: f32 ", mix)) != std::string::npos);
    CHECK(text.out.find(" bits per weight\n") != std::string::npos);
  }
  auto text = run_vkllm("info");  // the default model: F16 matrices and F32 norms
  CHECK(text.out.find("tensors     F16: f16 44, f32 13; 16.01 bits per weight") != std::string::npos);
}

TEST_CASE("a tensor of a type no kernel reads fails at load naming it", "[cli-run][mix]") {
  std::vector<std::byte> good = make_fixture_model(test::mix_fixture("Q4_K_M"));
  for (DType type : {DType::IQ2_XXS, DType::IQ1_S, DType::TQ2_0}) {
    std::string name(info(type).name);
    INFO(name);
    TempFile file("unsupported");
    file.write(mix_retyped(good, "blk.1.attn_q.weight", type));
    auto described = run_vkllm("info -m " + file.path);  // info still describes the file
    CHECK(described.exit_code == 0);
    CHECK(described.out.find(name + " 1") != std::string::npos);
    auto r = run_vkllm(fmt::format("run -m {} -p hello -n 1", file.path));
    CHECK(r.exit_code != 0);
    CHECK(r.out.empty());
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.err.starts_with(
        fmt::format("error: {}: tensor blk.1.attn_q.weight has type {}, which vkllm cannot read", file.path, name)));
  }
}
