// The vision tower on the GPU (vision_encoder.h): weights, then one image's graph block by block.
#include "graph/vision_encoder.h"

#include <fmt/format.h>

#include <cfloat>
#include <chrono>
#include <cmath>
#include <cstring>

#include "context.h"
#include "error.h"
#include "gguf/reader.h"
#include "ops_attention.h"
#include "ops_elementwise.h"
#include "ops_matmul.h"
#include "ops_vision.h"
#include "push.h"
#include "reference/quant.h"
#include "reference/vision.h"
#include "stream.h"

namespace vkllm {

// One image's activations: n patches of width e (the ViT), t tokens of the output.
struct VisionEncoder::Acts {
  uint32_t np = 0, t = 0;
  ImageGrid g;
  std::unique_ptr<Buffer> patches, pos, rope_pos, step, x, h, q, k, v, o, attn, up, gate, tmp, pooled, out, scratch;
  BufferView qv, kv, vv;    // q, k, v as attention reads them
  uint32_t qkv_stride = 0;  // floats between tokens of q, k and v
};

namespace {

std::unique_ptr<Buffer> device(const Context& ctx, uint64_t bytes, const char* name) {
  ENSURE(
      bytes <= ctx.caps().max_storage_buffer_range,
      fmt::format("the image's {} ({} bytes) exceed one storage buffer of this device ({} bytes): use a smaller image",
                  name, bytes, ctx.caps().max_storage_buffer_range));
  return std::make_unique<Buffer>(ctx, std::max<uint64_t>(bytes, 4), Memory::Device, name);
}

std::unique_ptr<Buffer> device(const Context& ctx, std::span<const std::byte> bytes, const std::string& name) {
  auto b = std::make_unique<Buffer>(ctx, std::max<uint64_t>(bytes.size(), 4), Memory::Device, name);
  b->upload(bytes.data(), bytes.size());
  return b;
}

std::span<const std::byte> as_bytes(const std::vector<float>& v) { return std::as_bytes(std::span(v)); }
std::span<const std::byte> as_bytes(const std::vector<int32_t>& v) { return std::as_bytes(std::span(v)); }

bool is_raw_matrix(VisionRole r) {
  return r != VisionRole::PatchEmbd && r != VisionRole::PatchEmbd1 && r != VisionRole::PosEmbd &&
         r != VisionRole::InputProj;
}

}  // namespace

VisionEncoder::VisionEncoder(const Context& ctx, const GgufFile& f, const ProjectorConfig& c)
    : ctx_(ctx), c_(c), r_(c.recipe()) {
  ENSURE(c.act != VisionActivation::Silu || r_.rms_norm,
         "the projector's FFN uses SiLU without a gate (clip.use_silu), which vkllm does not run");
  upload(f);
}

VisionEncoder::~VisionEncoder() = default;

void VisionEncoder::upload(const GgufFile& f) {
  out_scale_.assign(c_.n_layers, 1.0f);
  for (const VisionTensorSpec& s : projector_tensors(c_)) {
    const GgufTensor* t = f.find_tensor(s.name);
    if (!t || s.role == VisionRole::PatchEmbd1) continue;
    uint64_t cols = t->ne[0], rows = t->n_elements() / cols;
    Weight w;
    bool raw = s.is_matrix() && is_raw_matrix(s.role) && ops::matmul_supports(t->type) &&
               cols % info(t->type).block_values == 0;
    if (raw) {
      w.buf = device(ctx_, t->data, s.name);
      w.type = t->type, w.rows = uint32_t(rows), w.cols = uint32_t(cols);
    } else {
      std::vector<float> v = ref::dequantize(t->type, t->data.data(), rows, cols);
      if (s.role == VisionRole::PatchEmbd) {  // (n, 3·p²): the second temporal kernel summed in
        cols = uint64_t(3) * c_.patch_size * c_.patch_size, rows = c_.n_embd;
        if (const GgufTensor* t1 = f.find_tensor(to_string(VisionRole::PatchEmbd1))) {
          std::vector<float> v1 = ref::dequantize(t1->type, t1->data.data(), rows, cols);
          for (size_t i = 0; i < v.size(); ++i) v[i] += v1[i];
        }
      }
      if (s.role == VisionRole::InputProj && r_.output == VisionOutput::PoolNormProject) {  // stored transposed
        std::vector<float> tr(v.size());
        for (uint64_t i = 0; i < rows; ++i)
          for (uint64_t j = 0; j < cols; ++j) tr[j * rows + i] = v[i * cols + j];
        v.swap(tr), std::swap(rows, cols);
      }
      if (s.role == VisionRole::StdBias)
        for (float& x : v) x = -x;  // added, so subtracted
      if (s.role == VisionRole::LayerOutScale) out_scale_[s.layer] = v[0];
      w.buf = device(ctx_, as_bytes(v), s.name);
      w.rows = uint32_t(rows), w.cols = uint32_t(cols);
    }
    for (int b = 0; b < 4; ++b)
      if (const GgufTensor* ct = f.find_tensor(clamp_tensor_name(s.name, ClampBound(b)))) {
        ENSURE(ct->type == DType::F32 && ct->n_elements() == 1,
               fmt::format("{}: {} must be one F32 value", f.name(), ct->name));
        if (!w.clamped) w.clamp = {-FLT_MAX, FLT_MAX, -FLT_MAX, FLT_MAX}, w.clamped = true;
        std::memcpy(&w.clamp[b], ct->data.data(), 4);
      }
    weight_bytes_ += w.buf->size();
    w_[{s.role, s.layer}] = std::move(w);
  }
}

const VisionEncoder::Weight* VisionEncoder::find(VisionRole r, int layer) const {
  auto it = w_.find({r, layer});
  return it == w_.end() ? nullptr : &it->second;
}

const VisionEncoder::Weight& VisionEncoder::get(VisionRole r, int layer) const {
  const Weight* w = find(r, layer);
  ENSURE(w, fmt::format("the projector has no tensor {} (layer {})", to_string(r), layer));
  return *w;
}

// y (n, M) = x (n, K) · wᵀ + bias, y's rows y_stride floats apart (0: packed); a clamped linear
// clamps its input and output.
void VisionEncoder::linear(Stream& s, Acts& a, VisionRole r, int layer, std::optional<VisionRole> bias, BufferView x,
                           BufferView y, uint32_t n, uint32_t y_stride) const {
  const Weight& w = get(r, layer);
  const Weight* b = bias ? find(*bias, layer) : nullptr;
  BufferView bv = b ? b->buf->view() : BufferView{};
  ops::MatmulBatch batch{.y_row_stride = y_stride};
  if (!w.clamped) return ops::matmul(s, w.type, *w.buf, x, y, w.rows, n, w.cols, batch, bv);
  BufferView xin = a.tmp->view(0, 4ull * n * w.cols);
  ops::clamp(s, x, xin, n * w.cols, w.clamp[0], w.clamp[1]);
  BufferView prod = a.pooled->view(0, 4ull * n * w.rows);  // free whenever a linear runs
  ops::matmul(s, w.type, *w.buf, xin, prod, w.rows, n, w.cols, {}, bv);
  ENSURE(y_stride == 0 || y_stride == w.rows, "a clamped linear writes packed rows");
  ops::clamp(s, prod, y, n * w.rows, w.clamp[2], w.clamp[3]);
}

void VisionEncoder::norm(Stream& s, BufferView x, BufferView y, uint32_t rows, uint32_t width, VisionRole w,
                         VisionRole b, int layer, bool rms) const {
  if (rms) return ops::rmsnorm(s, x, get(w, layer).buf->view(), y, rows, width, c_.eps);
  const Weight* bias = find(b, layer);
  ops::layernorm(s, x, get(w, layer).buf->view(), bias ? bias->buf->view() : BufferView{}, y, rows, width, c_.eps);
}

void VisionEncoder::attention(Stream& s, Acts& a) const {
  const uint32_t H = c_.n_heads, d = c_.head_dim, np = a.np;
  if (r_.rope != VisionRope::None) {
    ops::VisionRopeParams p{.n_tokens = np,
                            .n_heads = H,
                            .head_dim = d,
                            .token_stride = a.qkv_stride,
                            .base = c_.rope_theta,
                            .neox_halves = r_.rope == VisionRope::NeoxHalves};
    ops::vision_rope(s, *a.rope_pos, a.qv, p);
    ops::vision_rope(s, *a.rope_pos, a.kv, p);
  }
  ops::AttentionShape shape{.n_q = np, .n_heads = H, .n_kv_heads = H, .dk = d, .dv = d};
  shape.q_row_stride = a.qkv_stride, shape.o_row_stride = c_.n_embd;
  shape.k_head_stride = shape.v_head_stride = d, shape.k_row_stride = shape.v_row_stride = a.qkv_stride;
  shape.kv_type = DType::F32, shape.causal = false, shape.max_kv = np;
  shape.scale = r_.unscaled_scores ? 1.0f : 1.0f / std::sqrt(float(d));
  ops::attention(s, shape, a.qv, a.kv, a.vv, *a.step, *a.o, a.scratch ? a.scratch->view() : BufferView{});
}

void VisionEncoder::ffn(Stream& s, Acts& a, int l) const {
  const uint32_t np = a.np, ff = c_.n_ff;
  linear(s, a, VisionRole::FfnUpW, l, VisionRole::FfnUpB, *a.h, *a.up, np);
  BufferView hidden = *a.up;
  if (find(VisionRole::FfnGateW, l)) {
    linear(s, a, VisionRole::FfnGateW, l, std::nullopt, *a.h, *a.gate, np);
    if (c_.act == VisionActivation::Silu) {
      ops::swiglu(s, *a.gate, *a.up, *a.gate, np * ff);
    } else {
      if (c_.act == VisionActivation::Gelu) ops::gelu(s, *a.gate, *a.gate, np * ff);
      if (c_.act == VisionActivation::GeluQuick) ops::gelu_quick(s, *a.gate, *a.gate, np * ff);
      ops::mul(s, *a.gate, *a.up, *a.gate, np * ff);
    }
    hidden = *a.gate;
  } else if (c_.act == VisionActivation::Gelu) {
    ops::gelu(s, *a.up, *a.up, np * ff);
  } else {
    ops::gelu_quick(s, *a.up, *a.up, np * ff);
  }
  linear(s, a, VisionRole::FfnDownW, l, VisionRole::FfnDownB, hidden, *a.attn, np);
}

void VisionEncoder::block(Stream& s, Acts& a, int l) const {
  const uint32_t n = c_.n_embd, np = a.np, H = c_.n_heads, d = c_.head_dim;
  norm(s, *a.x, *a.h, np, n, VisionRole::Ln1W, VisionRole::Ln1B, l, r_.rms_norm);
  if (r_.fused_qkv) {
    linear(s, a, VisionRole::AttnQkvW, l, VisionRole::AttnQkvB, *a.h, *a.q, np);
  } else {
    linear(s, a, VisionRole::AttnQW, l, VisionRole::AttnQB, *a.h, *a.q, np);
    linear(s, a, VisionRole::AttnKW, l, VisionRole::AttnKB, *a.h, *a.k, np);
    linear(s, a, VisionRole::AttnVW, l, VisionRole::AttnVB, *a.h, *a.v, np);
  }
  if (r_.head_norms) {
    ops::rmsnorm(s, *a.q, get(VisionRole::AttnQNorm, l).buf->view(), *a.q, np * H, d, c_.eps);
    ops::rmsnorm(s, *a.k, get(VisionRole::AttnKNorm, l).buf->view(), *a.k, np * H, d, c_.eps);
    ops::rmsnorm(s, *a.v, BufferView{}, *a.v, np * H, d, c_.eps);
  }
  attention(s, a);
  linear(s, a, VisionRole::AttnOutW, l, VisionRole::AttnOutB, *a.o, *a.attn, np);
  if (find(VisionRole::AttnPostNorm, l))
    norm(s, *a.attn, *a.attn, np, n, VisionRole::AttnPostNorm, VisionRole::AttnPostNorm, l, true);
  ops::add(s, *a.x, *a.attn, *a.x, np * n);
  norm(s, *a.x, *a.h, np, n, VisionRole::Ln2W, VisionRole::Ln2B, l, r_.rms_norm);
  ffn(s, a, l);
  if (find(VisionRole::FfnPostNorm, l))
    norm(s, *a.attn, *a.attn, np, n, VisionRole::FfnPostNorm, VisionRole::FfnPostNorm, l, true);
  ops::add(s, *a.x, *a.attn, *a.x, np * n);
  if (out_scale_[l] != 1.0f) ops::scale(s, *a.x, *a.x, np * n, out_scale_[l]);
}

// qwen's merger over 2x2-merged rows of `in` (np/4, 4n) into the output's columns from `column`.
void VisionEncoder::merger(Stream& s, Acts& a, BufferView in, bool deep, int l, uint32_t column) const {
  const uint32_t m = 4 * c_.n_embd, rows = a.np / 4, width = c_.embd_width();
  if (deep) {
    norm(s, in, *a.h, rows, m, VisionRole::DeepstackNormW, VisionRole::DeepstackNormB, l, false);
    in = *a.h;
  }
  linear(s, a, deep ? VisionRole::DeepstackFc1W : VisionRole::Mm0W, l,
         deep ? VisionRole::DeepstackFc1B : VisionRole::Mm0B, in, *a.up, rows);
  ops::gelu(s, *a.up, *a.up, rows * m);
  BufferView y = a.out->view(4ull * column, a.out->size() - 4ull * column);
  linear(s, a, deep ? VisionRole::DeepstackFc2W : VisionRole::Mm2W, l,
         deep ? VisionRole::DeepstackFc2B : VisionRole::Mm2B, *a.up, y, rows, width);
}

void VisionEncoder::output(Stream& s, Acts& a) const {
  const uint32_t n = c_.n_embd, np = a.np;
  if (find(VisionRole::PostLnW)) norm(s, *a.x, *a.x, np, n, VisionRole::PostLnW, VisionRole::PostLnB, -1, false);
  if (r_.output == VisionOutput::MergeMlp) return merger(s, a, *a.x, false, -1, 0);
  uint32_t k = c_.n_merge, t = a.t;
  ops::avg_pool(s, *a.x, *a.h, a.g.patches_x, a.g.patches_y, n, k);
  if (r_.output == VisionOutput::PoolNormProject) {
    ops::rmsnorm(s, *a.h, get(VisionRole::SoftEmbNorm).buf->view(), *a.h, t, n, c_.eps);
  } else {
    ops::scale(s, *a.h, *a.h, t * n, std::sqrt(float(n)));
    if (c_.std_scale) {
      ops::add_rows(s, *a.h, get(VisionRole::StdBias).buf->view(), *a.h, t, n);
      ops::mul_rows(s, *a.h, get(VisionRole::StdScale).buf->view(), *a.h, t, n);
    }
    ops::rmsnorm(s, *a.h, BufferView{}, *a.h, t, n, c_.eps);
  }
  linear(s, a, VisionRole::InputProj, -1, std::nullopt, *a.h, *a.out, t);
}

std::vector<float> VisionEncoder::encode(const ImageGrid& g, std::span<const float> pixels) {
  ENSURE(pixels.size() == size_t(3) * g.width * g.height, "the image's pixels do not fill its grid");
  ENSURE(g.tokens() > 0, "the image gives no tokens");
  Acts a;
  a.g = g, a.np = g.patches(), a.t = g.tokens();
  const uint32_t n = c_.n_embd, np = a.np, K = 3 * c_.patch_size * c_.patch_size, width = c_.embd_width();
  // The input: pixels scaled, gathered into patches in the ViT's token order, and the patches' rows
  // and columns (rope: in the order of its two positions).
  std::vector<float> px(pixels.begin(), pixels.end());
  for (float& v : px) v = v * r_.pixel_scale + r_.pixel_bias;
  std::vector<float> raster = ref::image_patches(px.data(), g.width, g.height, c_.patch_size), patches(size_t(np) * K);
  std::vector<int32_t> pos(2 * size_t(np)), rope(2 * size_t(np));
  for (uint32_t t = 0; t < np; ++t) {
    uint32_t p = r_.merge_order ? ref::merge_order_patch(t, g.patches_x) : t;
    std::copy_n(&raster[size_t(p) * K], K, &patches[size_t(t) * K]);
    pos[t] = int32_t(p / g.patches_x), pos[np + t] = int32_t(p % g.patches_x);
    bool cols_first = r_.rope == VisionRope::NeoxHalves;
    rope[t] = cols_first ? pos[np + t] : pos[t], rope[np + t] = cols_first ? pos[t] : pos[np + t];
  }
  ref::VisionPositionsSpec ps = ref::vision_positions_of(c_, g);
  ENSURE(ps.kind != VisionPositionKind::AxisTables || (g.patches_x <= c_.n_pos_embd && g.patches_y <= c_.n_pos_embd),
         fmt::format("the image's {}x{} patches exceed the projector's {} positions per side", g.patches_x, g.patches_y,
                     c_.n_pos_embd));
  a.patches = device(ctx_, as_bytes(patches), "image patches");
  a.pos = device(ctx_, as_bytes(pos), "patch positions");
  a.rope_pos = device(ctx_, as_bytes(rope), "rope positions");
  push::StepParams step{0, np, np, 0};
  a.step = device(ctx_, std::as_bytes(std::span(&step, 1)), "image step");
  uint64_t row = 4ull * np, wide = std::max<uint64_t>({n, c_.n_ff, 4ull * n});
  a.x = device(ctx_, row * n, "image x"), a.h = device(ctx_, row * 4 * n, "image h");
  a.o = device(ctx_, row * n, "image attention"), a.attn = device(ctx_, row * n, "image block output");
  a.up = device(ctx_, row * wide, "image ffn up"), a.gate = device(ctx_, row * c_.n_ff, "image ffn gate");
  a.tmp = device(ctx_, row * wide, "image clamp input"),
  a.pooled = device(ctx_, row * std::max<uint64_t>(wide, 3ull * n), "image product");
  a.out = device(ctx_, 4ull * a.t * width, "image embeddings");
  if (r_.fused_qkv) {
    a.q = device(ctx_, row * 3 * n, "image qkv");
    a.qv = a.q->view(), a.kv = a.q->view(4ull * n, a.q->size() - 4ull * n),
    a.vv = a.q->view(8ull * n, a.q->size() - 8ull * n);
    a.qkv_stride = 3 * n;
  } else {
    a.q = device(ctx_, row * n, "image q"), a.k = device(ctx_, row * n, "image k"),
    a.v = device(ctx_, row * n, "image v");
    a.qv = *a.q, a.kv = *a.k, a.vv = *a.v, a.qkv_stride = n;
  }
  ops::AttentionShape probe{.n_q = np,
                            .n_heads = c_.n_heads,
                            .n_kv_heads = c_.n_heads,
                            .dk = c_.head_dim,
                            .dv = c_.head_dim,
                            .kv_type = DType::F32,
                            .causal = false,
                            .max_kv = np};
  if (uint64_t bytes = ops::attention_scratch_bytes(ctx_, probe))
    a.scratch = device(ctx_, bytes, "image attention scratch");

  Stream s(ctx_);
  linear(s, a, VisionRole::PatchEmbd, -1, VisionRole::PatchBias, *a.patches, *a.x, np);
  const Weight& table = get(VisionRole::PosEmbd);
  ops::VisionPositionsParams pp{.n_tokens = np, .n = n, .px = g.patches_x, .side = ps.side, .n_pos = ps.n_pos};
  pp.mode = ps.kind == VisionPositionKind::AxisTables ? ops::VisionPositions::AxisTables
            : ps.kind == VisionPositionKind::Resized && (g.patches_x != ps.side || g.patches_y != ps.side)
                ? ops::VisionPositions::Resized
                : ops::VisionPositions::Learned;
  if (pp.mode == ops::VisionPositions::Learned && ps.kind == VisionPositionKind::Resized) pp.side = g.patches_x;
  // ggml_interpolate's scale factors with aligned corners, in float as it computes them
  pp.sx = g.patches_x > 1 && ps.side > 1 ? float(g.patches_x - 1) / float(ps.side - 1)
                                         : float(g.patches_x) / float(std::max(ps.side, 1u));
  pp.sy = g.patches_y > 1 && ps.side > 1 ? float(g.patches_y - 1) / float(ps.side - 1)
                                         : float(g.patches_y) / float(std::max(ps.side, 1u));
  ops::vision_positions(s, *table.buf, *a.pos, *a.x, pp);
  uint32_t deep = 0;
  for (int l = 0; l < int(c_.n_layers); ++l) {
    block(s, a, l);
    if (size_t(l) < c_.deepstack.size() && c_.deepstack[l]) merger(s, a, *a.x, true, l, c_.proj_dim * ++deep);
  }
  output(s, a);
  auto t0 = std::chrono::steady_clock::now();
  s.submit_wait();
  last_seconds_ = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  return a.out->download<float>(size_t(a.t) * width);
}

}  // namespace vkllm
