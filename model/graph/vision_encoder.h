// VisionEncoder: a projector's vision tower on the GPU (arch/projector.h). The patch embedding is
// one matmul over patches gathered on the host (the strided convolution as a product), then the
// ViT blocks from the engine's kernels (LayerNorm or RMSNorm, matmul with bias, non-causal flash
// attention, GELU) and the vision kernels of ops_vision.h (2D rope, position embeddings, pooling),
// then the type's projector. The reference is ref::encode_image; each type's differences come
// from its VisionRecipe. One image per call, recorded afresh (images are rare next to tokens).
#pragma once
#include <array>
#include <cstdint>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <utility>
#include <vector>

#include "arch/projector.h"
#include "buffer.h"
#include "dtype.h"

namespace vkllm {

class Context;
class GgufFile;
class Stream;

class VisionEncoder {
 public:
  // Uploads the projector's tensors (matrices in their stored type where the kernels read it,
  // else as f32; the patch kernel, position table and vectors as f32).
  VisionEncoder(const Context& ctx, const GgufFile& f, const ProjectorConfig& c);
  ~VisionEncoder();

  const ProjectorConfig& config() const { return c_; }
  // The embeddings of one preprocessed image (image/image_preprocess.h: (3, height, width)
  // planar): (grid.tokens(), config().embd_width()) f32 rows, token-major.
  std::vector<float> encode(const ImageGrid& grid, std::span<const float> pixels);
  double last_seconds() const { return last_seconds_; }  // GPU wall time of the last encode
  uint64_t weight_bytes() const { return weight_bytes_; }

 private:
  struct Weight {
    std::unique_ptr<Buffer> buf;
    DType type = DType::F32;
    uint32_t rows = 0, cols = 0;             // a matrix: M outputs of K inputs
    std::array<float, 4> clamp{0, 0, 0, 0};  // gemma4v's clippable linear
    bool clamped = false;
  };
  struct Acts;  // the activations of one image

  const Weight* find(VisionRole r, int layer = -1) const;
  const Weight& get(VisionRole r, int layer = -1) const;
  void upload(const GgufFile& f);
  void linear(Stream& s, Acts& a, VisionRole r, int layer, std::optional<VisionRole> bias, BufferView x, BufferView y,
              uint32_t n, uint32_t y_stride = 0) const;
  void norm(Stream& s, BufferView x, BufferView y, uint32_t rows, uint32_t width, VisionRole w, VisionRole b, int layer,
            bool rms) const;
  void block(Stream& s, Acts& a, int l) const;
  void attention(Stream& s, Acts& a) const;
  void ffn(Stream& s, Acts& a, int l) const;
  void merger(Stream& s, Acts& a, BufferView in, bool deep, int l, uint32_t column) const;
  void output(Stream& s, Acts& a) const;

  const Context& ctx_;
  ProjectorConfig c_;
  VisionRecipe r_;
  std::map<std::pair<VisionRole, int>, Weight> w_;
  std::vector<float> out_scale_;  // per layer, gemma4v's layer output scalar (1 where absent)
  uint64_t weight_bytes_ = 0;
  double last_seconds_ = 0;
};

}  // namespace vkllm
