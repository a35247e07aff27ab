// `vkllm info --mmproj FILE` (projector_info.h).
#include "projector_info.h"

#include <fmt/format.h>

#include "error.h"
#include "model_options.h"
#include "output.h"

namespace vkllm::cli {

namespace {

std::string_view sizing(const ProjectorConfig& c) { return c.sizing == ImageSizing::Fixed ? "fixed" : "smart"; }

}  // namespace

std::string projector_text(const std::string& file, const ProjectorConfig& c, uint64_t kv_bytes_per_token,
                           uint32_t model_dim) {
  std::string out =
      fmt::format("projector   {}: {}, {} blocks of {} ({} heads), patch {}, merge {}x{}, {} image size{}\n", file,
                  to_string(c.type), c.n_layers, c.n_embd, c.n_heads, c.patch_size, c.n_merge, c.n_merge, sizing(c),
                  c.embd_width() == model_dim
                      ? ""
                      : fmt::format("; its rows of {} do not fit this model's {}", c.embd_width(), model_dim));
  std::vector<std::string> images;
  for (auto [w, h] : kInfoImageSizes) {
    ImageGrid g = c.grid(w, h);
    images.push_back(fmt::format("{}x{}: {} ({} of KV)", w, h, count(g.tokens(), "token"),
                                 human_bytes(double(kv_bytes_per_token) * g.tokens())));
  }
  return out + fmt::format("images      {}\n", fmt::join(images, "; "));
}

ProjectorFile open_projector(const ModelOptions& o, uint32_t model_dim) {
  std::string path = mmproj_path(o);
  if (path.empty()) return {};
  ProjectorFile p{.file = std::make_unique<GgufFile>(GgufFile::open(path))};
  p.config = std::make_shared<const ProjectorConfig>(read_projector_config(*p.file));
  ENSURE(p.config->embd_width() == model_dim,
         fmt::format("{}: the projector gives rows of {} values and the model takes {}: it is another model's",
                     p.file->name(), p.config->embd_width(), model_dim));
  return p;
}

nlohmann::json projector_json(const std::string& file, const ProjectorConfig& c, uint64_t kv_bytes_per_token,
                              uint32_t model_dim) {
  nlohmann::json images = nlohmann::json::array();
  for (auto [w, h] : kInfoImageSizes) {
    ImageGrid g = c.grid(w, h);
    images.push_back({{"width", w},
                      {"height", h},
                      {"encoded_width", g.width},
                      {"encoded_height", g.height},
                      {"patches", g.patches()},
                      {"tokens", g.tokens()},
                      {"kv_bytes", kv_bytes_per_token * g.tokens()}});
  }
  return {{"file", file},
          {"type", to_string(c.type)},
          {"n_layer", c.n_layers},
          {"n_embd", c.n_embd},
          {"n_head", c.n_heads},
          {"patch_size", c.patch_size},
          {"merge", c.n_merge},
          {"image_sizing", sizing(c)},
          {"embd_width", c.embd_width()},
          {"fits_model", c.embd_width() == model_dim},
          {"images", images}};
}

}  // namespace vkllm::cli
