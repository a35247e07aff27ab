// The projector file's keys (clip.*), what llama.cpp fixes by type, and the image sizes that follow
// (tools/mtmd: clip.cpp load_hparams, mtmd-image.cpp calc_size_preserved_ratio, mtmd.cpp).
#include "arch/projector.h"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "arch/keys.h"
#include "error.h"
#include "gguf/reader.h"
#include "gguf/writer.h"

namespace vkllm {

namespace {

constexpr std::string_view kArchKey = "general.architecture";
constexpr std::string_view kProjTypeKey = "clip.projector_type";
constexpr std::string_view kVisionProjTypeKey = "clip.vision.projector_type";  // files with audio too
constexpr std::string_view kHasVisionKey = "clip.has_vision_encoder";
constexpr std::string_view kUseGeluKey = "clip.use_gelu";
constexpr std::string_view kUseSiluKey = "clip.use_silu";
std::string vkey(std::string_view k) { return "clip.vision." + std::string(k); }

struct TypeName {
  ProjectorType type;
  std::string_view name;
};
constexpr TypeName kTypes[] = {{ProjectorType::Qwen3vlMerger, "qwen3vl_merger"},
                               {ProjectorType::Gemma3, "gemma3"},
                               {ProjectorType::Gemma4v, "gemma4v"}};

uint32_t clamp_pixels(uint64_t tokens, const ProjectorConfig& c) {
  return uint32_t(std::min<uint64_t>(tokens * c.patch_size * c.patch_size * c.n_merge * c.n_merge, INT32_MAX));
}

void read_type_keys(const GgufFile& f, ProjectorConfig& c) {
  switch (c.type) {
    case ProjectorType::Qwen3vlMerger:
      c.n_merge = read_u32(f, vkey("spatial_merge_size"), 2);
      if (c.n_merge != 2)
        f.fail(
            fmt::format("clip.vision.spatial_merge_size = {}: the qwen3vl_merger graph merges 2x2 patches", c.n_merge));
      break;
    case ProjectorType::Gemma3:
      c.n_merge = read_u32(f, vkey("projector.scale_factor"), 4);
      break;
    case ProjectorType::Gemma4v:
      c.n_merge = read_u32(f, vkey("projector.scale_factor"), 3);
      break;
  }
}

void read_preprocessing(const GgufFile& f, ProjectorConfig& c) {
  for (auto [key, out] : {std::pair{"image_mean", c.image_mean}, std::pair{"image_std", c.image_std}}) {
    std::string k = vkey(key);
    if (!f.has(k)) continue;  // llama.cpp's defaults then (0.5 each)
    std::vector<float> v = f.get_float_array(k);
    if (v.size() < 3) f.fail(fmt::format("metadata key {} has {} entries, expected 3", k, v.size()));
    for (int i = 0; i < 3; ++i) {
      if (!std::isfinite(v[i])) f.fail(fmt::format("metadata key {} holds a non-finite value", k));
      out[i] = v[i];
    }
  }
  for (float s : c.image_std)
    if (s == 0) f.fail(fmt::format("metadata key {} holds a 0: images would divide by it", vkey("image_std")));
}

void validate(const GgufFile& f, const ProjectorConfig& c) {
  auto bad = [&](bool b, const std::string& what) {
    if (b) f.fail(what);
  };
  bad(c.n_embd == 0 || c.n_embd > 16384, fmt::format("clip.vision.embedding_length = {} is out of range", c.n_embd));
  bad(c.n_layers == 0 || c.n_layers > 256, fmt::format("clip.vision.block_count = {} is out of range", c.n_layers));
  bad(c.n_heads == 0 || c.n_heads > 256,
      fmt::format("clip.vision.attention.head_count = {} is out of range", c.n_heads));
  bad(c.head_dim == 0 || c.head_dim % 4 != 0 || c.head_dim > 1024,
      fmt::format("the vision heads' width {} is not a multiple of 4 up to 1024", c.head_dim));
  bad(c.n_ff == 0 || c.n_ff > 65536, fmt::format("clip.vision.feed_forward_length = {} is out of range", c.n_ff));
  bad(c.proj_dim == 0 || c.proj_dim > 65536,
      fmt::format("clip.vision.projection_dim = {} is out of range", c.proj_dim));
  bad(c.patch_size == 0 || c.patch_size > 64, fmt::format("clip.vision.patch_size = {} is out of range", c.patch_size));
  bad(c.image_size == 0 || c.image_size > 8192,
      fmt::format("clip.vision.image_size = {} is out of range", c.image_size));
  bad(c.n_merge == 0 || c.n_merge > 16,
      fmt::format("the projector's merge of {} patches per side is out of range", c.n_merge));
  bad(!(c.eps > 0 && c.eps < 1), "clip.vision.attention.layer_norm_epsilon must lie in (0, 1)");
  if (c.type == ProjectorType::Gemma3)
    bad(c.image_size % (c.patch_size * c.n_merge) != 0,
        fmt::format("gemma3: image_size {} is not a multiple of patch_size {} x {}", c.image_size, c.patch_size,
                    c.n_merge));
  if (c.type == ProjectorType::Qwen3vlMerger || c.type == ProjectorType::Gemma4v)
    bad(c.head_dim * c.n_heads != c.n_embd,
        fmt::format("{} heads of {} do not make the embedding width {}", c.n_heads, c.head_dim, c.n_embd));
}

// Multiples of f, as llama.cpp's smart resize rounds them: in float.
int round_by(float x, int f) { return int(std::round(x / float(f))) * f; }
int ceil_by(float x, int f) { return int(std::ceil(x / float(f))) * f; }
int floor_by(float x, int f) { return int(std::floor(x / float(f))) * f; }

}  // namespace

void set_projector_type_defaults(ProjectorConfig& c) {
  c.rope_theta = c.type == ProjectorType::Gemma4v ? 100.0f : 10000.0f;
  c.sizing = c.type == ProjectorType::Gemma3 ? ImageSizing::Fixed : ImageSizing::Smart;
  c.filter = c.type == ProjectorType::Gemma3 ? ResizeFilter::Bilinear : ResizeFilter::Bicubic;
  c.min_pixels = c.max_pixels = 0;
  if (c.type == ProjectorType::Qwen3vlMerger) c.min_pixels = clamp_pixels(8, c), c.max_pixels = clamp_pixels(4096, c);
  if (c.type == ProjectorType::Gemma4v) c.min_pixels = clamp_pixels(70, c), c.max_pixels = clamp_pixels(1120, c);
}

std::string_view to_string(ProjectorType t) {
  for (const TypeName& n : kTypes)
    if (n.type == t) return n.name;
  return "?";
}

std::optional<ProjectorType> projector_type_named(std::string_view name) {
  for (const TypeName& n : kTypes)
    if (n.name == name) return n.type;
  return std::nullopt;
}

bool is_projector_file(const GgufFile& f) {
  const GgufValue* v = f.find(kArchKey);
  return v && v->to_string() == "clip";
}

VisionRecipe ProjectorConfig::recipe() const {
  switch (type) {
    case ProjectorType::Qwen3vlMerger:
      return {.fused_qkv = true,
              .merge_order = true,
              .rope = VisionRope::RowsColumns,
              .positions = VisionPositionKind::Resized,
              .output = VisionOutput::MergeMlp};
    case ProjectorType::Gemma3:
      return {};
    case ProjectorType::Gemma4v:
      return {.rms_norm = true,
              .head_norms = true,
              .unscaled_scores = true,
              .pixel_scale = 2,
              .pixel_bias = -1,
              .rope = VisionRope::NeoxHalves,
              .positions = VisionPositionKind::AxisTables,
              .output = VisionOutput::PoolScaleNormProject};
  }
  return {};
}

uint32_t ProjectorConfig::n_deepstack() const { return uint32_t(std::count(deepstack.begin(), deepstack.end(), true)); }

ImageGrid ProjectorConfig::grid(uint32_t w, uint32_t h) const {
  ImageGrid g;
  if (sizing == ImageSizing::Fixed) {
    g.width = g.height = image_size;
  } else if (w > 0 && h > 0) {
    const int align = int(patch_size * n_merge);
    int wb = std::max(align, round_by(float(w), align)), hb = std::max(align, round_by(float(h), align));
    if (max_pixels > 0 && int64_t(wb) * hb > int64_t(max_pixels)) {
      float beta = std::sqrt(float(h) * float(w) / float(max_pixels));
      hb = std::max(align, floor_by(float(h) / beta, align));
      wb = std::max(align, floor_by(float(w) / beta, align));
    } else if (min_pixels > 0 && int64_t(wb) * hb < int64_t(min_pixels)) {
      float beta = std::sqrt(float(min_pixels) / (float(h) * float(w)));
      hb = ceil_by(float(h) * beta, align);
      wb = ceil_by(float(w) * beta, align);
    }
    g.width = uint32_t(wb), g.height = uint32_t(hb);
  }
  g.patches_x = g.width / patch_size, g.patches_y = g.height / patch_size;
  g.tokens_x = g.patches_x / n_merge, g.tokens_y = g.patches_y / n_merge;
  return g;
}

std::string_view ProjectorConfig::image_begin() const {
  switch (type) {
    case ProjectorType::Qwen3vlMerger:
      return "<|vision_start|>";
    case ProjectorType::Gemma3:
      return "<start_of_image>";
    case ProjectorType::Gemma4v:
      return "<|image>";
  }
  return "";
}

std::string_view ProjectorConfig::image_end() const {
  switch (type) {
    case ProjectorType::Qwen3vlMerger:
      return "<|vision_end|>";
    case ProjectorType::Gemma3:
      return "<end_of_image>";
    case ProjectorType::Gemma4v:
      return "<image|>";
  }
  return "";
}

ImageAttention ProjectorConfig::image_attention(uint32_t lm_dim) const {
  if (type == ProjectorType::Gemma3) return ImageAttention::Bidirectional;
  if (type == ProjectorType::Gemma4v && lm_dim != 1536 && lm_dim != 2560) return ImageAttention::BidirectionalSliding;
  return ImageAttention::Causal;
}

ProjectorConfig read_projector_config(const GgufFile& f) {
  if (!is_projector_file(f))
    f.fail(fmt::format("not a multimodal projector (general.architecture is \"{}\", expected \"clip\")",
                       printable(f.get_string(kArchKey, ""))));
  if (!f.get_bool(kHasVisionKey, false)) f.fail("the projector has no vision encoder (clip.has_vision_encoder)");
  std::string_view name = f.has(kVisionProjTypeKey) ? f.get_string(kVisionProjTypeKey) : f.get_string(kProjTypeKey);
  std::optional<ProjectorType> type = projector_type_named(name);
  if (!type)
    f.fail(fmt::format("projector type \"{}\" is not supported (vkllm reads qwen3vl_merger, gemma3 and gemma4v)",
                       printable(name)));
  ProjectorConfig c;
  c.type = *type;
  c.n_embd = read_u32(f, vkey("embedding_length"));
  c.n_ff = read_u32(f, vkey("feed_forward_length"));
  c.n_layers = read_u32(f, vkey("block_count"));
  c.n_heads = read_u32(f, vkey("attention.head_count"));
  uint32_t kv = read_u32(f, vkey("attention.head_count_kv"), c.n_heads);
  if (kv != c.n_heads)
    f.fail(fmt::format("{} vision KV heads for {} heads: grouped vision attention is not supported", kv, c.n_heads));
  c.head_dim = read_u32(f, vkey("attention.head_dim"), c.n_heads ? c.n_embd / c.n_heads : 0);
  c.proj_dim = read_u32(f, vkey("projection_dim"));
  c.eps = read_f32(f, vkey("attention.layer_norm_epsilon"));
  c.image_size = read_u32(f, vkey("image_size"));
  c.patch_size = read_u32(f, vkey("patch_size"));
  bool gelu = f.get_bool(kUseGeluKey, false), silu = f.get_bool(kUseSiluKey, false);
  if (gelu && silu) f.fail("both clip.use_gelu and clip.use_silu are set");
  c.act = gelu ? VisionActivation::Gelu : silu ? VisionActivation::Silu : VisionActivation::GeluQuick;
  read_preprocessing(f, c);
  read_type_keys(f, c);
  validate(f, c);
  set_projector_type_defaults(c);
  read_projector_tensor_facts(f, c);
  check_projector_tensors(f, c);
  return c;
}

void write_projector_config(GgufWriter& w, const ProjectorConfig& c) {
  w.add(kArchKey, "clip");
  w.add(kHasVisionKey, true);
  w.add(kProjTypeKey, to_string(c.type));
  w.add(vkey("embedding_length"), c.n_embd);
  w.add(vkey("feed_forward_length"), c.n_ff);
  w.add(vkey("block_count"), c.n_layers);
  w.add(vkey("attention.head_count"), c.n_heads);
  if (c.head_dim * c.n_heads != c.n_embd) w.add(vkey("attention.head_dim"), c.head_dim);
  w.add(vkey("projection_dim"), c.proj_dim);
  w.add(vkey("attention.layer_norm_epsilon"), c.eps);
  w.add(vkey("image_size"), c.image_size);
  w.add(vkey("patch_size"), c.patch_size);
  w.add_array(vkey("image_mean"), std::vector<float>(std::begin(c.image_mean), std::end(c.image_mean)));
  w.add_array(vkey("image_std"), std::vector<float>(std::begin(c.image_std), std::end(c.image_std)));
  if (c.act == VisionActivation::Gelu) w.add(kUseGeluKey, true);
  if (c.act == VisionActivation::Silu) w.add(kUseSiluKey, true);
  if (c.type == ProjectorType::Qwen3vlMerger) {
    w.add(vkey("spatial_merge_size"), c.n_merge);
    if (c.n_deepstack()) w.add_array(vkey("is_deepstack_layers"), c.deepstack);
  } else {
    w.add(vkey("projector.scale_factor"), c.n_merge);
  }
}

}  // namespace vkllm
