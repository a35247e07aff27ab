// CPU reference of the vision encoders (arch/projector.h), the specification the GPU encoder is
// held to: plain loops in double over dequantised weights, from llama.cpp's graphs
// (tools/mtmd/models/qwen3vl.cpp, siglip.cpp, gemma4v.cpp; docs/formats.md §14).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <utility>
#include <vector>

#include "arch/projector.h"

namespace vkllm {
class GgufFile;
}

namespace vkllm::ref {

// The projector's tensors, dequantised to f32, by role and layer (-1: global); gemma4v's clamp
// ranges of its clippable linears.
class VisionWeights {
 public:
  static VisionWeights read(const GgufFile& f, const ProjectorConfig& c);
  const std::vector<float>* find(VisionRole r, int layer = -1) const;
  const std::vector<float>& get(VisionRole r, int layer = -1) const;
  // {input min, input max, output min, output max} of the linear with weight (r, layer);
  // ±FLT_MAX where the file has none.
  std::array<float, 4> clamp(VisionRole r, int layer = -1) const;

 private:
  std::map<std::pair<VisionRole, int>, std::vector<float>> t_;
  std::map<std::pair<VisionRole, int>, std::array<float, 4>> clamp_;
};

// The encoder's output for one image: (grid.tokens(), c.embd_width()) rows, token-major.
// pixels: (3, grid.height, grid.width), preprocessed (image/image_preprocess.h).
std::vector<float> encode_image(const ProjectorConfig& c, const VisionWeights& w, const ImageGrid& grid,
                                const float* pixels);

// The pieces, for the kernel tests.
// Patches as rows (patches, 3·p·p): element (c·p + ky)·p + kx of patch (X, Y) is pixel
// (c, Y·p + ky, X·p + kx); patches in raster order.
std::vector<float> image_patches(const float* pixels, uint32_t width, uint32_t height, uint32_t p);
// The index in raster order of the patch at position t of qwen's merge order (2x2 blocks in raster
// order, each block's 4 patches in raster order).
uint32_t merge_order_patch(uint32_t t, uint32_t patches_x);
// A (side x side, n) table resized to (px x py, n) by bilinear interpolation with aligned corners
// (ggml_interpolate), rows in raster order.
std::vector<float> resize_positions(const float* table, uint32_t side, uint32_t n, uint32_t px, uint32_t py);
// Average pooling of (py, px, n) rows over k x k blocks: (py/k, px/k, n).
std::vector<float> avg_pool(const float* x, uint32_t px, uint32_t py, uint32_t n, uint32_t k);
// The vision rope, in place, of x (tokens, heads, d; tokens token_stride floats apart, 0: packed):
// qwen's (pairs (i, i + d/2); the first d/4 pairs turn with pos_a, the rest with pos_b, each
// quarter's frequencies from base^(-4j/d)) or gemma4v's (NEOX in each half: the first half's pairs
// (i, i + d/4) with pos_a, the second's with pos_b, frequencies base^(-4j/d)).
void vision_rope(float* x, const int32_t* pos_a, const int32_t* pos_b, uint32_t tokens, uint32_t heads, uint32_t d,
                 uint32_t token_stride, float base, bool neox_halves);

// Where a grid's position embeddings come from (ops::VisionPositionsParams).
struct VisionPositionsSpec {
  VisionPositionKind kind = VisionPositionKind::Learned;
  uint32_t px = 0, py = 0;  // the patch grid
  uint32_t side = 0;        // Resized: the table's grid side
  uint32_t n_pos = 0;       // AxisTables: rows per table
};
VisionPositionsSpec vision_positions_of(const ProjectorConfig& c, const ImageGrid& g);
// x (tokens, n) += each token's embedding for its patch (row[t], col[t]) from table.
void add_vision_positions(float* x, const float* table, const int32_t* row, const int32_t* col, uint32_t tokens,
                          uint32_t n, const VisionPositionsSpec& p);

// x · sigmoid(1.702 x) (GELU-quick), in double.
float gelu_quick(float x);

}  // namespace vkllm::ref
