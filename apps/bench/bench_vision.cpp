// `vkllm-bench vision`: the vision encoder's time per image (wall clock of the GPU work, median of
// several runs after a warm-up) on a projector file or a random-weight one of a real shape
// (fixture/projector_fixture.h presets), for an image of a given size; --write keeps the fixture
// so that llama.cpp's mtmd can run the same file (scripts/bench_vision_vs_llamacpp).
#include <fmt/format.h>

#include <algorithm>
#include <fstream>
#include <nlohmann/json.hpp>

#include "bench.h"
#include "error.h"
#include "fixture/projector_fixture.h"
#include "gguf/reader.h"
#include "graph/vision_encoder.h"
#include "image/image_preprocess.h"

namespace vkllm::bench {

namespace {

struct VisionOptions {
  CommonOptions common;
  std::string preset, mmproj, write, type = "f16";
  uint32_t width = 1024, height = 768;
  uint32_t proj_dim = 0;  // --proj-dim: the language model's width the preset projects to (0: its own)
  int warmup = 1, runs = 3;
};

RgbImage test_image(uint32_t w, uint32_t h) {
  RgbImage img{w, h, std::vector<uint8_t>(size_t(w) * h * 3)};
  for (size_t i = 0; i < img.rgb.size(); ++i) img.rgb[i] = uint8_t((i * 2654435761u) >> 24);
  return img;
}

void run(const VisionOptions& o) {
  GgufFile file = [&] {
    if (!o.mmproj.empty()) return GgufFile::open(o.mmproj);
    ProjectorFixtureSpec s = projector_preset(o.preset);
    s.weight_type = *dtype_named(o.type);
    if (o.proj_dim) s.proj_dim = o.proj_dim;
    std::vector<std::byte> bytes = make_projector_fixture(s);
    if (!o.write.empty()) {
      std::ofstream out(o.write, std::ios::binary);
      out.write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
      if (!out) throw vkllm::Error(fmt::format("{}: cannot write the projector", o.write));
    }
    return GgufFile::parse(std::move(bytes), o.preset);
  }();
  ProjectorConfig c = read_projector_config(file);
  Context ctx(o.common.context());
  VisionEncoder enc(ctx, file, c);
  VisionInput in = preprocess_image(test_image(o.width, o.height), c);
  for (int i = 0; i < o.warmup; ++i) enc.encode(in.grid, in.pixels);
  std::vector<double> ms;
  for (int i = 0; i < o.runs; ++i) {
    enc.encode(in.grid, in.pixels);
    ms.push_back(enc.last_seconds() * 1e3);
  }
  std::sort(ms.begin(), ms.end());
  double median = ms[ms.size() / 2];
  std::string name = o.mmproj.empty() ? o.preset : o.mmproj;
  if (o.common.json) {
    nlohmann::json j = {{"op", "vision"},
                        {"projector", name},
                        {"type", to_string(c.type)},
                        {"device", ctx.caps().name},
                        {"profile", ctx.profile().name},
                        {"width", in.grid.width},
                        {"height", in.grid.height},
                        {"patches", in.grid.patches()},
                        {"tokens", in.grid.tokens()},
                        {"ms_median", median},
                        {"ms_min", ms.front()},
                        {"weight_bytes", enc.weight_bytes()}};
    fmt::print("{}\n", j.dump());
    return;
  }
  fmt::print(
      "vision {} ({}) on {} (profile {}): {}x{} image, {} patches, {} tokens: median {:.1f} ms per image (best "
      "{:.1f})\n",
      name, to_string(c.type), ctx.caps().name, ctx.profile().name, in.grid.width, in.grid.height, in.grid.patches(),
      in.grid.tokens(), median, ms.front());
}

}  // namespace

void add_vision_bench(CLI::App& app) {
  static VisionOptions o;
  CLI::App* cmd = app.add_subcommand("vision", "Vision encoder time per image (a projector file or a preset's shape)");
  auto* preset = cmd->add_option("--preset", o.preset, "A released projector's shape, random weights")
                     ->type_name("NAME")
                     ->check(one_of([] {
                       std::vector<std::string> names;
                       for (std::string_view n : projector_preset_names()) names.emplace_back(n);
                       return names;
                     }()));
  auto* file = cmd->add_option("--mmproj", o.mmproj, "A projector file (mmproj-*.gguf)")->type_name("FILE");
  preset->excludes(file);
  cmd->add_option("--type", o.type, "Weight type of the preset's matrices")
      ->type_name("TYPE")
      ->check(one_of(weight_type_names()))
      ->capture_default_str();
  cmd->add_option("--width", o.width, "Image width before preprocessing")
      ->check(int_range(1, 16384))
      ->capture_default_str();
  cmd->add_option("--height", o.height, "Image height before preprocessing")
      ->check(int_range(1, 16384))
      ->capture_default_str();
  cmd->add_option("--write", o.write, "Also write the preset's projector to FILE")->type_name("FILE");
  cmd->add_option("--proj-dim", o.proj_dim,
                  "The width of the language model the preset projects into (default: the released model's)")
      ->check(int_range(1, 65536));
  add_repeat_options(cmd, o.warmup, o.runs);
  add_common_options(cmd, o.common);
  cmd->callback([] {
    if (o.preset.empty() == o.mmproj.empty()) throw CLI::ValidationError("vision", "give one of --preset or --mmproj");
    run(o);
  });
}

}  // namespace vkllm::bench
