// The projector file (arch/projector.h): fixtures of each type read back as written, image sizes
// as llama.cpp's preprocessing computes them, and errors that name the key or tensor.
#include <functional>

#include "arch/projector.h"
#include "catch.h"
#include "error.h"
#include "fixture/projector_fixture.h"
#include "gguf/reader.h"
#include "gguf/writer.h"
#include "harness.h"

using namespace vkllm;
using test::error_of;

namespace {

ProjectorConfig read(const GgufWriter& w) { return read_projector_config(GgufFile::parse(w.bytes(), "mmproj.gguf")); }

// A copy of a fixture's writer with one tensor replaced (or dropped, with an empty shape).
GgufWriter with_tensor(const ProjectorFixtureSpec& s, const std::string& name, std::vector<uint64_t> ne) {
  ProjectorConfig c = projector_fixture_config(s);
  GgufWriter w;
  write_projector_config(w, c);
  GgufFile f = GgufFile::parse(make_projector_fixture(s), "src");
  for (const GgufTensor& t : f.tensors()) {
    if (t.name != name) {
      w.add_tensor(t.name, t.shape(), t.type, t.data);
    } else if (!ne.empty()) {
      uint64_t n = 1;
      for (uint64_t d : ne) n *= d;
      w.add_tensor(t.name, ne, DType::F32, std::vector<std::byte>(n * 4));
    }
  }
  return w;
}

}  // namespace

TEST_CASE("every projector preset writes a file that reads back as written", "[projector]") {
  for (std::string_view name : projector_preset_names()) {
    if (!name.starts_with("tiny")) continue;  // the real shapes are hundreds of megabytes
    INFO(name);
    ProjectorFixtureSpec s = projector_preset(name);
    ProjectorConfig want = projector_fixture_config(s), got = read(projector_fixture_writer(s));
    CHECK(got.type == want.type);
    CHECK(got.n_embd == want.n_embd);
    CHECK(got.n_ff == want.n_ff);
    CHECK(got.n_layers == want.n_layers);
    CHECK(got.head_dim == want.head_dim);
    CHECK(got.proj_dim == want.proj_dim);
    CHECK(got.n_merge == want.n_merge);
    CHECK(got.n_pos_embd == want.n_pos_embd);
    CHECK(got.deepstack == want.deepstack);
    CHECK(got.std_scale == want.std_scale);
    CHECK(got.act == want.act);
    CHECK(got.embd_width() == want.proj_dim * (1 + want.n_deepstack()));
  }
  CHECK(read(projector_fixture_writer(projector_preset("tiny-qwen3vl-deepstack"))).embd_width() == 2 * 32);
}

TEST_CASE("projector presets of released models have their real shapes", "[projector]") {
  ProjectorConfig q = projector_fixture_config(projector_preset("qwen35-9b"));
  CHECK(projector_tensors(q).size() == 4 + 27 * 12 + 6);
  CHECK(q.head_dim == 72);
  ProjectorConfig g = projector_fixture_config(projector_preset("gemma3-4b"));
  CHECK(g.grid(1234, 567).tokens() == 256);
  CHECK_THROWS_WITH(projector_preset("nope"), Catch::Contains("tiny-gemma4v"));
}

TEST_CASE("image sizes follow llama.cpp's smart resize and fixed size", "[projector]") {
  ProjectorConfig q = projector_fixture_config(projector_preset("qwen35-0.8b"));
  ImageGrid a = q.grid(1920, 1080);  // 1080/32 = 33.75 rounds up
  CHECK((a.width == 1920 && a.height == 1088 && a.tokens_x == 60 && a.tokens_y == 34));
  ImageGrid big = q.grid(4000, 3000);  // over 4096 tokens: scaled down by sqrt(area / max), floored
  CHECK((big.width == 2336 && big.height == 1760));
  CHECK(big.tokens() <= 4096);
  ImageGrid tiny = q.grid(10, 10);  // under 8 tokens: scaled up, ceiled
  CHECK((tiny.width == 96 && tiny.height == 96 && tiny.tokens() == 9));
  ProjectorConfig g4 = projector_fixture_config(projector_preset("gemma4-e4b"));
  ImageGrid b = g4.grid(640, 480);
  CHECK((b.width == 624 && b.height == 480 && b.tokens_x == 13 && b.tokens_y == 10));
  ProjectorConfig t = projector_fixture_config(projector_preset("tiny-qwen3vl"));
  ImageGrid c = t.grid(32, 24);
  CHECK((c.patches_x == 8 && c.patches_y == 6 && c.tokens() == 12));
  ProjectorConfig g3 = projector_fixture_config(projector_preset("tiny-gemma3"));
  CHECK((g3.grid(7, 300).width == 32 && g3.grid(7, 300).tokens() == 16));
}

TEST_CASE("projector files with a wrong key or tensor name what is wrong", "[projector]") {
  ProjectorFixtureSpec s = projector_preset("tiny-gemma4v");
  CHECK(error_of([&] { read(with_tensor(s, "v.blk.0.attn_q_norm.weight", {})); }) ==
        "mmproj.gguf: missing tensor v.blk.0.attn_q_norm.weight");
  CHECK(error_of([&] {
          read(with_tensor(s, "mm.input_projection.weight", {64, 32}));
        }) == "mmproj.gguf: tensor mm.input_projection.weight has shape [64, 32], expected [32, 64]");
  GgufWriter w;
  w.add("general.architecture", "llama");
  CHECK(error_of([&] { read(w); }) ==
        "mmproj.gguf: not a multimodal projector (general.architecture is \"llama\", expected \"clip\")");
  GgufWriter ldp;
  ldp.add("general.architecture", "clip");
  ldp.add("clip.has_vision_encoder", true);
  ldp.add("clip.projector_type", "ldp");
  CHECK(error_of([&] { read(ldp); }) ==
        "mmproj.gguf: projector type \"ldp\" is not supported (vkllm reads qwen3vl_merger, gemma3 and gemma4v)");
  ProjectorConfig c = projector_fixture_config(projector_preset("tiny-qwen3vl"));
  c.n_merge = 3;
  GgufWriter q;
  write_projector_config(q, c);
  CHECK(error_of([&] { read(q); }) ==
        "mmproj.gguf: clip.vision.spatial_merge_size = 3: the qwen3vl_merger graph merges 2x2 patches");
}
