// The multimodal projector file (mmproj-*.gguf, general.architecture "clip"): a vision tower (a
// ViT over image patches) and the projector that turns its output into rows of the language
// model's embedding width. Three types, as llama.cpp's tools/mtmd reads them (clip.cpp's
// load_hparams / load_tensors, models/qwen3vl.cpp, siglip.cpp, gemma4v.cpp; docs/formats.md §14):
//   qwen3vl_merger (Qwen3-VL, Qwen3.5/3.6): LayerNorm ViT with fused qkv and biases, 2D rope
//     (ggml's vision rope: rows in the first half of each head, columns in the second), learned
//     positions bilinearly resized to the patch grid, 2x2 patches merged into one token by an MLP;
//     optional deepstack layers whose merged features are appended to each token's row.
//   gemma3: SigLIP (LayerNorm ViT, learned positions of a fixed 896² image), 4x4 average pooling,
//     RMSNorm, a linear projection.
//   gemma4v: RMSNorm ViT with q/k head norms, sandwich norms, a gated FFN, 2D NEOX rope (columns in
//     the first half of each head, rows in the second), learned per-axis position tables, kxk
//     average pooling, a linear projection; any image size within a token budget.
// Keys and tensor names are spelled here and nowhere else (docs/design.md rule 2).
#pragma once
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace vkllm {

class GgufFile;
class GgufWriter;

enum class ProjectorType : uint8_t { Qwen3vlMerger, Gemma3, Gemma4v };
std::string_view to_string(ProjectorType t);  // the file's spelling: "qwen3vl_merger", "gemma3", "gemma4v"
std::optional<ProjectorType> projector_type_named(std::string_view name);

// The FFN's activation: clip.use_gelu (tanh GELU), clip.use_silu, else GELU-quick (x·σ(1.702x)).
enum class VisionActivation : uint8_t { Gelu, Silu, GeluQuick };
enum class ResizeFilter : uint8_t { Bilinear, Bicubic };  // Pillow's filters (mtmd-image.cpp)

// How an image becomes the encoder's input (mtmd-image.cpp): Fixed resizes it into a square of
// image_size (aspect kept, the rest padded black); Smart picks a size of the same aspect whose
// sides are multiples of patch_size·n_merge and whose area lies within [min_pixels, max_pixels]
// (Qwen's smart_resize), then resizes into it the same way.
enum class ImageSizing : uint8_t { Fixed, Smart };

// How a language model attends among an image's tokens (mtmd_decode_use_non_causal and llama.cpp's
// llama_non_causal_type): causally; every layer sees the whole image (gemma3); or only the
// sliding-window layers do, the global ones staying causal (gemma4v).
enum class ImageAttention : uint8_t { Causal, Bidirectional, BidirectionalSliding };

// Sizes of one image through the encoder.
struct ImageGrid {
  uint32_t width = 0, height = 0;         // pixels of the preprocessed image
  uint32_t patches_x = 0, patches_y = 0;  // the ViT's patch grid
  uint32_t tokens_x = 0, tokens_y = 0;    // the language model's tokens after the merge or pooling
  uint32_t patches() const { return patches_x * patches_y; }
  uint32_t tokens() const { return tokens_x * tokens_y; }
};

// How a type's encoder is built, the one place the types differ for the reference and the GPU
// encoder (llama.cpp's graphs: models/qwen3vl.cpp, siglip.cpp, gemma4v.cpp).
enum class VisionRope : uint8_t { None, RowsColumns, NeoxHalves };         // ref::vision_rope's two layouts
enum class VisionPositionKind : uint8_t { Learned, Resized, AxisTables };  // ops::VisionPositions
enum class VisionOutput : uint8_t {
  MergeMlp,              // qwen: 2x2 patches' rows joined, LayerNorm first, fc1, GELU, fc2
  PoolNormProject,       // gemma3: average pool, RMSNorm·soft_emb_norm, the projection (stored transposed)
  PoolScaleNormProject,  // gemma4v: average pool, ·sqrt(n_embd), standardise, RMSNorm, the projection
};
struct VisionRecipe {
  bool rms_norm = false;                  // RMSNorm blocks without biases (else LayerNorm with biases)
  bool fused_qkv = false;                 // one q|k|v matrix
  bool head_norms = false;                // q and k RMS-normed per head (weights), v too (none)
  bool unscaled_scores = false;           // scores not divided by sqrt(head_dim)
  bool merge_order = false;               // tokens in 2x2 blocks, each block's patches in raster order
  float pixel_scale = 1, pixel_bias = 0;  // the input, after normalising, times scale plus bias
  VisionRope rope = VisionRope::None;
  VisionPositionKind positions = VisionPositionKind::Learned;
  VisionOutput output = VisionOutput::PoolNormProject;
};

struct ProjectorConfig {
  ProjectorType type = ProjectorType::Gemma3;
  uint32_t n_embd = 0;    // clip.vision.embedding_length
  uint32_t n_ff = 0;      // clip.vision.feed_forward_length
  uint32_t n_layers = 0;  // clip.vision.block_count
  uint32_t n_heads = 0;   // clip.vision.attention.head_count
  uint32_t head_dim = 0;  // clip.vision.attention.head_dim, else n_embd / n_heads
  uint32_t proj_dim = 0;  // clip.vision.projection_dim: the language model's embedding width
  float eps = 1e-6f;      // clip.vision.attention.layer_norm_epsilon
  uint32_t image_size = 0, patch_size = 0;
  float image_mean[3] = {0.5f, 0.5f, 0.5f}, image_std[3] = {0.5f, 0.5f, 0.5f};
  // Patches merged per side: qwen's spatial_merge_size (2), gemma's pooling kernel
  // (clip.vision.projector.scale_factor; gemma3 4, gemma4v 3).
  uint32_t n_merge = 1;
  VisionActivation act = VisionActivation::GeluQuick;
  float rope_theta = 10000.0f;  // qwen3vl_merger 10000, gemma4v 100 (fixed by llama.cpp)
  // Preprocessing (fixed by type in llama.cpp, not read from the file).
  ImageSizing sizing = ImageSizing::Fixed;
  ResizeFilter filter = ResizeFilter::Bilinear;
  uint32_t min_pixels = 0, max_pixels = 0;  // Smart sizing's area bounds
  // From the tensors: rows of the position table (gemma4v: per axis), the deepstack layers
  // (qwen3vl_merger), gemma4v's optional standardisation (v.std_bias, v.std_scale).
  uint32_t n_pos_embd = 0;
  std::vector<bool> deepstack;
  bool std_scale = false;

  uint32_t n_deepstack() const;
  VisionRecipe recipe() const;
  // Width of one image token's row: proj_dim, plus proj_dim per deepstack layer.
  uint32_t embd_width() const { return proj_dim * (1 + n_deepstack()); }
  // The preprocessed size of an image of w x h pixels, and its patch and token grids.
  ImageGrid grid(uint32_t w, uint32_t h) const;
  // The text that opens and closes an image's tokens in the prompt (mtmd.cpp).
  std::string_view image_begin() const;
  std::string_view image_end() const;
  // How a language model of embedding width lm_dim attends inside an image: gemma3
  // bidirectionally, gemma4v in its sliding layers but for E2B/E4B (widths 1536, 2560: causal).
  ImageAttention image_attention(uint32_t lm_dim) const;
};

// What llama.cpp fixes by type rather than reading it (clip.cpp load_hparams): the rope base, the
// sizing and filter of the preprocessing and Smart sizing's pixel bounds (qwen3vl_merger 8 to 4096
// tokens, gemma4v 70 to 1120), from type, patch_size and n_merge.
void set_projector_type_defaults(ProjectorConfig& c);

// Reads and checks the vision side of an mmproj file: keys, then every tensor's presence and
// shape. Errors name the file and the key or tensor ("<file>: ...").
ProjectorConfig read_projector_config(const GgufFile& f);
// Writes the keys read_projector_config reads (general.architecture "clip" included).
void write_projector_config(GgufWriter& w, const ProjectorConfig& c);
// Whether f is a projector file (general.architecture "clip").
bool is_projector_file(const GgufFile& f);
// What c takes from f's tensors (n_pos_embd, deepstack, std_scale), and the check that f holds
// every tensor c implies with its shape (optional ones may be absent) and no vision tensor else.
void read_projector_tensor_facts(const GgufFile& f, ProjectorConfig& c);
void check_projector_tensors(const GgufFile& f, const ProjectorConfig& c);

// ---- the tensor catalogue

enum class VisionRole : uint8_t {
  PatchEmbd,
  PatchEmbd1,  // qwen's second temporal kernel (a still image is both frames)
  PatchBias,
  PosEmbd,
  PostLnW,
  PostLnB,
  Ln1W,
  Ln1B,
  AttnQkvW,
  AttnQkvB,
  AttnQW,
  AttnQB,
  AttnKW,
  AttnKB,
  AttnVW,
  AttnVB,
  AttnOutW,
  AttnOutB,
  AttnQNorm,
  AttnKNorm,
  AttnPostNorm,
  Ln2W,
  Ln2B,
  FfnGateW,
  FfnUpW,
  FfnUpB,
  FfnDownW,
  FfnDownB,
  FfnPostNorm,
  LayerOutScale,
  DeepstackNormW,
  DeepstackNormB,
  DeepstackFc1W,
  DeepstackFc1B,
  DeepstackFc2W,
  DeepstackFc2B,
  Mm0W,  // qwen's merger MLP
  Mm0B,
  Mm2W,
  Mm2B,
  SoftEmbNorm,  // gemma3
  InputProj,    // gemma3 (ne [proj_dim, n_embd]), gemma4v (ne [n_embd, proj_dim])
  StdBias,      // gemma4v, optional
  StdScale,
};
std::string_view to_string(VisionRole r);

struct VisionTensorSpec {
  std::string name;
  std::vector<uint64_t> ne;  // ggml order
  VisionRole role;
  int layer = -1;  // -1: global
  bool optional = false;
  bool is_matrix() const { return ne.size() >= 2 && ne[1] > 1; }
};

// Every tensor c implies, optional ones flagged.
std::vector<VisionTensorSpec> projector_tensors(const ProjectorConfig& c);
const VisionTensorSpec* find_spec(const std::vector<VisionTensorSpec>& specs, VisionRole r, int layer = -1);
// gemma4v's clippable linears: the optional 1-element F32 tensors beside a weight "X.weight"
// named "X.input_min", "X.input_max", "X.output_min", "X.output_max".
enum class ClampBound : uint8_t { InputMin, InputMax, OutputMin, OutputMax };
std::string clamp_tensor_name(std::string_view weight_name, ClampBound b);

}  // namespace vkllm
