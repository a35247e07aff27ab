// The GPU vision encoder (graph/vision_encoder.h) against ref::encode_image on every tiny
// projector type: F32 weights, and Q8_0 weights against the reference on the same dequantised
// values; an image whose grid is the position table's own (no resize) and one that is not.
#include <fmt/format.h>

#include "catch.h"
#include "fixture/projector_fixture.h"
#include "gguf/reader.h"
#include "graph/vision_encoder.h"
#include "harness.h"
#include "image/image_preprocess.h"
#include "reference/vision.h"

using namespace vkllm;

namespace {

RgbImage ramp(uint32_t w, uint32_t h) {
  RgbImage img{w, h, std::vector<uint8_t>(size_t(w) * h * 3)};
  for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = uint8_t((i * 37 + i / 91) % 256);
  return img;
}

}  // namespace

TEST_CASE("the GPU vision encoder computes the reference's embeddings", "[vision]") {
  for (const char* preset : {"tiny-qwen3vl", "tiny-qwen3vl-deepstack", "tiny-gemma3", "tiny-gemma4v"})
    for (DType type : {DType::F32, DType::Q8_0}) {
      ProjectorFixtureSpec s = projector_preset(preset);
      s.weight_type = type;
      GgufFile f = GgufFile::parse(make_projector_fixture(s), "mmproj.gguf");
      ProjectorConfig c = read_projector_config(f);
      ref::VisionWeights w = ref::VisionWeights::read(f, c);
      VisionEncoder enc(test::gpu(), f, c);
      for (auto [iw, ih] : {std::pair{16u, 16u}, std::pair{40u, 28u}}) {
        VisionInput in = preprocess_image(ramp(iw, ih), c);
        std::vector<float> want = ref::encode_image(c, w, in.grid, in.pixels.data());
        std::vector<float> got = enc.encode(in.grid, in.pixels);
        test::check_nmse(got, want, type == DType::F32 ? 1e-9 : 1e-6,
                         fmt::format("{} {} {}x{} image embeddings", preset, info(type).name, iw, ih));
      }
    }
}

TEST_CASE("an image larger than the projector's position tables is one clear error", "[vision]") {
  ProjectorFixtureSpec s = projector_preset("tiny-gemma4v");
  s.n_pos_embd = 8;
  GgufFile f = GgufFile::parse(make_projector_fixture(s), "mmproj.gguf");
  ProjectorConfig c = read_projector_config(f);
  VisionEncoder enc(test::gpu(), f, c);
  VisionInput in = preprocess_image(ramp(200, 40), c);
  CHECK_THROWS_WITH(enc.encode(in.grid, in.pixels), Catch::Contains("exceed the projector's 8 positions per side"));
}
