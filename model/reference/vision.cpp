// Reference vision encoders (vision.h).
#include "reference/vision.h"

#include <fmt/format.h>

#include <algorithm>
#include <cfloat>
#include <cmath>
#include <cstring>

#include "error.h"
#include "gguf/reader.h"
#include "reference/attention.h"
#include "reference/elementwise.h"
#include "reference/matmul.h"
#include "reference/quant.h"

namespace vkllm::ref {

namespace {

using Rows = std::vector<float>;

float act(VisionActivation a, float x) {
  double v = x;
  switch (a) {
    case VisionActivation::Gelu:
      return float(0.5 * v * (1 + std::tanh(0.7978845608028654 * (v + 0.044715 * v * v * v))));
    case VisionActivation::Silu:
      return float(v / (1 + std::exp(-v)));
    case VisionActivation::GeluQuick:
      return gelu_quick(x);
  }
  return x;
}

void norm(const ProjectorConfig& c, Rows& x, size_t width, const Rows& w, const Rows* b, bool rms) {
  size_t rows = x.size() / width;
  if (rms)
    rmsnorm(x.data(), x.data(), w.data(), rows, width, c.eps);
  else
    layernorm(x.data(), x.data(), w.data(), b ? b->data() : nullptr, rows, width, c.eps);
}

// y = x · wᵀ (+ bias), w (out, in) from a file's (in, out) ne; gemma4v clamps input and output.
Rows linear(const VisionWeights& w, VisionRole r, int layer, const Rows& x, size_t in, const Rows* bias = nullptr) {
  const Rows& m = w.get(r, layer);
  std::array<float, 4> cl = w.clamp(r, layer);
  Rows xin = x;
  for (float& v : xin) v = std::clamp(v, cl[0], cl[1]);
  Rows y = project(m, xin.data(), x.size() / in, in, 0, bias ? bias->data() : nullptr);
  for (float& v : y) v = std::clamp(v, cl[2], cl[3]);
  return y;
}

void add(Rows& x, const Rows& y) {
  for (size_t i = 0; i < x.size(); ++i) x[i] += y[i];
}

// Grid positions of each token, in the order the tokens are in: (row, column).
void token_positions(const ProjectorConfig& c, const ImageGrid& g, std::vector<int32_t>& row,
                     std::vector<int32_t>& col) {
  uint32_t n = g.patches();
  row.resize(n), col.resize(n);
  for (uint32_t t = 0; t < n; ++t) {
    uint32_t p = c.recipe().merge_order ? merge_order_patch(t, g.patches_x) : t;
    row[t] = int32_t(p / g.patches_x), col[t] = int32_t(p % g.patches_x);
  }
}

// The patch embeddings with positions added, tokens in the order the ViT sees them.
Rows embed(const ProjectorConfig& c, const VisionWeights& w, const ImageGrid& g, const float* pixels) {
  const VisionRecipe r = c.recipe();
  uint32_t n = c.n_embd, np = g.patches(), P = c.patch_size;
  Rows px(pixels, pixels + size_t(3) * g.width * g.height);
  for (float& v : px) v = v * r.pixel_scale + r.pixel_bias;
  Rows patches = image_patches(px.data(), g.width, g.height, P);
  Rows kernel = w.get(VisionRole::PatchEmbd);
  if (const Rows* k1 = w.find(VisionRole::PatchEmbd1)) add(kernel, *k1);  // a still image is both frames
  Rows raster = project(kernel, patches.data(), np, size_t(3) * P * P, 0,
                        w.find(VisionRole::PatchBias) ? w.get(VisionRole::PatchBias).data() : nullptr);
  std::vector<int32_t> row, col;
  token_positions(c, g, row, col);
  Rows x(size_t(np) * n);
  for (uint32_t t = 0; t < np; ++t)
    std::copy_n(&raster[(size_t(row[t]) * g.patches_x + col[t]) * n], n, &x[size_t(t) * n]);
  add_vision_positions(x.data(), w.get(VisionRole::PosEmbd).data(), row.data(), col.data(), np, n,
                       vision_positions_of(c, g));
  return x;
}

// One ViT block, in place on x (np, n).
void block(const ProjectorConfig& c, const VisionWeights& w, int l, Rows& x, const std::vector<int32_t>& row,
           const std::vector<int32_t>& col) {
  const uint32_t n = c.n_embd, H = c.n_heads, d = c.head_dim, np = uint32_t(x.size() / n);
  const VisionRecipe r = c.recipe();
  const bool rms = r.rms_norm;
  Rows h = x;
  norm(c, h, n, w.get(VisionRole::Ln1W, l), w.find(VisionRole::Ln1B, l), rms);
  Rows q, k, v;
  if (r.fused_qkv) {
    Rows qkv = linear(w, VisionRole::AttnQkvW, l, h, n, &w.get(VisionRole::AttnQkvB, l));
    q.resize(size_t(np) * n), k.resize(q.size()), v.resize(q.size());
    for (uint32_t t = 0; t < np; ++t)
      for (uint32_t i = 0; i < n; ++i)
        q[t * n + i] = qkv[t * 3 * n + i], k[t * n + i] = qkv[t * 3 * n + n + i],
                  v[t * n + i] = qkv[t * 3 * n + 2 * n + i];
  } else {
    q = linear(w, VisionRole::AttnQW, l, h, n, w.find(VisionRole::AttnQB, l));
    k = linear(w, VisionRole::AttnKW, l, h, n, w.find(VisionRole::AttnKB, l));
    v = linear(w, VisionRole::AttnVW, l, h, n, w.find(VisionRole::AttnVB, l));
  }
  if (r.head_norms) {
    rmsnorm(q.data(), q.data(), w.get(VisionRole::AttnQNorm, l).data(), size_t(np) * H, d, c.eps);
    rmsnorm(k.data(), k.data(), w.get(VisionRole::AttnKNorm, l).data(), size_t(np) * H, d, c.eps);
    rmsnorm(v.data(), v.data(), nullptr, size_t(np) * H, d, c.eps);
  }
  if (r.rope != VisionRope::None) {
    bool neox = r.rope == VisionRope::NeoxHalves;  // gemma4v turns by column first, qwen by row
    const int32_t *a = neox ? col.data() : row.data(), *b = neox ? row.data() : col.data();
    vision_rope(q.data(), a, b, np, H, d, 0, c.rope_theta, neox);
    vision_rope(k.data(), a, b, np, H, d, 0, c.rope_theta, neox);
  }
  Rows o(size_t(np) * n);
  AttentionParams a{.n_q = np, .n_heads = H, .n_kv_heads = H, .dk = d, .dv = d};
  a.q_row_stride = a.o_row_stride = n, a.k_head_stride = a.v_head_stride = d, a.k_row_stride = a.v_row_stride = n;
  a.scale = r.unscaled_scores ? 1.0 : 1.0 / std::sqrt(double(d));
  a.n_kv = np;
  attention(o.data(), q.data(), k.data(), v.data(), a);
  Rows attn = linear(w, VisionRole::AttnOutW, l, o, n, w.find(VisionRole::AttnOutB, l));
  if (const Rows* pn = w.find(VisionRole::AttnPostNorm, l)) norm(c, attn, n, *pn, nullptr, true);
  add(x, attn);
  h = x;
  norm(c, h, n, w.get(VisionRole::Ln2W, l), w.find(VisionRole::Ln2B, l), rms);
  Rows up = linear(w, VisionRole::FfnUpW, l, h, n, w.find(VisionRole::FfnUpB, l));
  if (w.find(VisionRole::FfnGateW, l)) {
    Rows gate = linear(w, VisionRole::FfnGateW, l, h, n);
    for (size_t i = 0; i < up.size(); ++i) up[i] = act(c.act, gate[i]) * up[i];
  } else {
    for (float& u : up) u = act(c.act, u);
  }
  Rows down = linear(w, VisionRole::FfnDownW, l, up, c.n_ff, w.find(VisionRole::FfnDownB, l));
  if (const Rows* pn = w.find(VisionRole::FfnPostNorm, l)) norm(c, down, n, *pn, nullptr, true);
  add(x, down);
  if (const Rows* s = w.find(VisionRole::LayerOutScale, l))
    for (float& v : x) v *= (*s)[0];
}

// qwen's merger MLP over 2x2-merged rows (np/4, 4n): fc1, GELU, fc2; the deepstack mergers norm
// the merged rows first (deep).
Rows merger(const ProjectorConfig& c, const VisionWeights& w, Rows x, bool deep, VisionRole fc1, VisionRole fc1b,
            VisionRole fc2, VisionRole fc2b, int l) {
  size_t m = 4 * size_t(c.n_embd);
  if (deep) norm(c, x, m, w.get(VisionRole::DeepstackNormW, l), &w.get(VisionRole::DeepstackNormB, l), false);
  Rows h = linear(w, fc1, l, x, m, &w.get(fc1b, l));
  for (float& v : h) v = act(VisionActivation::Gelu, v);
  return linear(w, fc2, l, h, m, &w.get(fc2b, l));
}

Rows qwen_project(const ProjectorConfig& c, const VisionWeights& w, Rows x, const std::vector<Rows>& deep) {
  norm(c, x, c.n_embd, w.get(VisionRole::PostLnW), w.find(VisionRole::PostLnB), false);
  Rows main = merger(c, w, x, false, VisionRole::Mm0W, VisionRole::Mm0B, VisionRole::Mm2W, VisionRole::Mm2B, -1);
  size_t tokens = main.size() / c.proj_dim, width = c.embd_width();
  Rows out(tokens * width);
  for (size_t t = 0; t < tokens; ++t) {
    std::copy_n(&main[t * c.proj_dim], c.proj_dim, &out[t * width]);
    for (size_t j = 0; j < deep.size(); ++j)
      std::copy_n(&deep[j][t * c.proj_dim], c.proj_dim, &out[t * width + (j + 1) * c.proj_dim]);
  }
  return out;
}

Rows gemma_project(const ProjectorConfig& c, const VisionWeights& w, Rows x, const ImageGrid& g) {
  const uint32_t n = c.n_embd;
  if (w.find(VisionRole::PostLnW)) norm(c, x, n, w.get(VisionRole::PostLnW), w.find(VisionRole::PostLnB), false);
  Rows p = avg_pool(x.data(), g.patches_x, g.patches_y, n, c.n_merge);
  if (c.recipe().output == VisionOutput::PoolNormProject) {
    rmsnorm(p.data(), p.data(), w.get(VisionRole::SoftEmbNorm).data(), p.size() / n, n, c.eps);
    const Rows& m = w.get(VisionRole::InputProj);  // ne [proj, n]: (n, proj) row-major, used transposed
    Rows out(p.size() / n * c.proj_dim);
    for (size_t t = 0; t < p.size() / n; ++t)
      for (uint32_t j = 0; j < c.proj_dim; ++j) {
        double s = 0;
        for (uint32_t i = 0; i < n; ++i) s += double(p[t * n + i]) * m[size_t(i) * c.proj_dim + j];
        out[t * c.proj_dim + j] = float(s);
      }
    return out;
  }
  for (float& v : p) v *= std::sqrt(float(n));
  if (c.std_scale) {
    const Rows &b = w.get(VisionRole::StdBias), &s = w.get(VisionRole::StdScale);
    for (size_t i = 0; i < p.size(); ++i) p[i] = (p[i] - b[i % n]) * s[i % n];
  }
  rmsnorm(p.data(), p.data(), nullptr, p.size() / n, n, c.eps);
  return linear(w, VisionRole::InputProj, -1, p, n);
}

}  // namespace

VisionWeights VisionWeights::read(const GgufFile& f, const ProjectorConfig& c) {
  VisionWeights w;
  for (const VisionTensorSpec& s : projector_tensors(c)) {
    const GgufTensor* t = f.find_tensor(s.name);
    if (!t) continue;
    w.t_[{s.role, s.layer}] = dequantize(t->type, t->data.data(), t->n_elements() / t->ne[0], t->ne[0]);
    std::array<float, 4> cl{-FLT_MAX, FLT_MAX, -FLT_MAX, FLT_MAX};
    bool any = false;
    for (int b = 0; b < 4; ++b)
      if (const GgufTensor* ct = f.find_tensor(clamp_tensor_name(s.name, ClampBound(b)))) {
        ENSURE(ct->type == DType::F32 && ct->n_elements() == 1,
               fmt::format("{}: {} must be one F32 value", f.name(), ct->name));
        std::memcpy(&cl[b], ct->data.data(), 4);
        any = true;
      }
    if (any) w.clamp_[{s.role, s.layer}] = cl;
  }
  return w;
}

const std::vector<float>* VisionWeights::find(VisionRole r, int layer) const {
  auto it = t_.find({r, layer});
  return it == t_.end() ? nullptr : &it->second;
}

const std::vector<float>& VisionWeights::get(VisionRole r, int layer) const {
  const std::vector<float>* v = find(r, layer);
  ENSURE(v, fmt::format("the projector has no tensor {} (layer {})", to_string(r), layer));
  return *v;
}

std::array<float, 4> VisionWeights::clamp(VisionRole r, int layer) const {
  auto it = clamp_.find({r, layer});
  return it == clamp_.end() ? std::array<float, 4>{-FLT_MAX, FLT_MAX, -FLT_MAX, FLT_MAX} : it->second;
}

std::vector<float> encode_image(const ProjectorConfig& c, const VisionWeights& w, const ImageGrid& g,
                                const float* pixels) {
  Rows x = embed(c, w, g, pixels);
  std::vector<int32_t> row, col;
  token_positions(c, g, row, col);
  std::vector<Rows> deep;
  for (int l = 0; l < int(c.n_layers); ++l) {
    block(c, w, l, x, row, col);
    if (size_t(l) < c.deepstack.size() && c.deepstack[l])
      deep.push_back(merger(c, w, x, true, VisionRole::DeepstackFc1W, VisionRole::DeepstackFc1B,
                            VisionRole::DeepstackFc2W, VisionRole::DeepstackFc2B, l));
  }
  return c.recipe().output == VisionOutput::MergeMlp ? qwen_project(c, w, std::move(x), deep)
                                                     : gemma_project(c, w, std::move(x), g);
}

std::vector<float> image_patches(const float* pixels, uint32_t width, uint32_t height, uint32_t p) {
  uint32_t px = width / p, py = height / p;
  size_t K = size_t(3) * p * p, plane = size_t(width) * height;
  std::vector<float> out(size_t(px) * py * K);
  for (uint32_t Y = 0; Y < py; ++Y)
    for (uint32_t X = 0; X < px; ++X)
      for (uint32_t ch = 0; ch < 3; ++ch)
        for (uint32_t ky = 0; ky < p; ++ky)
          for (uint32_t kx = 0; kx < p; ++kx)
            out[(size_t(Y) * px + X) * K + (size_t(ch) * p + ky) * p + kx] =
                pixels[ch * plane + size_t(Y * p + ky) * width + X * p + kx];
  return out;
}

uint32_t merge_order_patch(uint32_t t, uint32_t patches_x) {
  uint32_t block = t / 4, in = t % 4, blocks_x = patches_x / 2;
  uint32_t y = block / blocks_x * 2 + in / 2, x = block % blocks_x * 2 + in % 2;
  return y * patches_x + x;
}

std::vector<float> resize_positions(const float* table, uint32_t side, uint32_t n, uint32_t px, uint32_t py) {
  // ggml_interpolate, bilinear with aligned corners, in float as ggml computes it.
  float sx = px > 1 && side > 1 ? float(px - 1) / float(side - 1) : float(px) / float(side);
  float sy = py > 1 && side > 1 ? float(py - 1) / float(side - 1) : float(py) / float(side);
  std::vector<float> out(size_t(px) * py * n);
  auto at = [&](int64_t x, int64_t y, uint32_t i) { return table[(size_t(y) * side + size_t(x)) * n + i]; };
  for (uint32_t oy = 0; oy < py; ++oy) {
    float y = float(oy) / sy;
    int64_t y0 = std::clamp<int64_t>(int64_t(std::floor(y)), 0, side - 1),
            y1 = std::clamp<int64_t>(y0 + 1, 0, side - 1);
    float dy = std::clamp(y - float(y0), 0.0f, 1.0f);
    for (uint32_t ox = 0; ox < px; ++ox) {
      float x = float(ox) / sx;
      int64_t x0 = std::clamp<int64_t>(int64_t(std::floor(x)), 0, side - 1),
              x1 = std::clamp<int64_t>(x0 + 1, 0, side - 1);
      float dx = std::clamp(x - float(x0), 0.0f, 1.0f);
      for (uint32_t i = 0; i < n; ++i)
        out[(size_t(oy) * px + ox) * n + i] = at(x0, y0, i) * (1 - dx) * (1 - dy) + at(x1, y0, i) * dx * (1 - dy) +
                                              at(x0, y1, i) * (1 - dx) * dy + at(x1, y1, i) * dx * dy;
    }
  }
  return out;
}

std::vector<float> avg_pool(const float* x, uint32_t px, uint32_t py, uint32_t n, uint32_t k) {
  uint32_t ox = px / k, oy = py / k;
  std::vector<float> out(size_t(ox) * oy * n);
  for (uint32_t Y = 0; Y < oy; ++Y)
    for (uint32_t X = 0; X < ox; ++X)
      for (uint32_t i = 0; i < n; ++i) {
        double s = 0;
        for (uint32_t dy = 0; dy < k; ++dy)
          for (uint32_t dx = 0; dx < k; ++dx) s += x[(size_t(Y * k + dy) * px + X * k + dx) * n + i];
        out[(size_t(Y) * ox + X) * n + i] = float(s / (k * k));
      }
  return out;
}

void vision_rope(float* x, const int32_t* pos_a, const int32_t* pos_b, uint32_t tokens, uint32_t heads, uint32_t d,
                 uint32_t token_stride, float base, bool neox_halves) {
  const uint32_t q = d / 4;  // pairs per position
  const size_t stride = token_stride ? token_stride : size_t(heads) * d;
  for (uint32_t t = 0; t < tokens; ++t)
    for (uint32_t h = 0; h < heads; ++h) {
      float* xh = x + t * stride + size_t(h) * d;
      for (uint32_t half = 0; half < 2; ++half)
        for (uint32_t j = 0; j < q; ++j) {
          double theta = double(half ? pos_b[t] : pos_a[t]) * std::pow(double(base), -4.0 * j / d);
          // qwen: pair (i, i + d/2) with i = half·d/4 + j; gemma4v: (i, i + d/4) with i = half·d/2 + j
          uint32_t a = neox_halves ? half * 2 * q + j : half * q + j, b = a + (neox_halves ? q : 2 * q);
          double x0 = xh[a], x1 = xh[b];
          xh[a] = float(x0 * std::cos(theta) - x1 * std::sin(theta));
          xh[b] = float(x0 * std::sin(theta) + x1 * std::cos(theta));
        }
    }
}

VisionPositionsSpec vision_positions_of(const ProjectorConfig& c, const ImageGrid& g) {
  VisionPositionsSpec p{.kind = c.recipe().positions, .px = g.patches_x, .py = g.patches_y, .n_pos = c.n_pos_embd};
  if (p.kind == VisionPositionKind::Resized) p.side = uint32_t(std::lround(std::sqrt(double(c.n_pos_embd))));
  return p;
}

void add_vision_positions(float* x, const float* table, const int32_t* row, const int32_t* col, uint32_t tokens,
                          uint32_t n, const VisionPositionsSpec& p) {
  std::vector<float> grid;  // the resized table, unless the grid is the table's own
  bool resize = p.kind == VisionPositionKind::Resized && (p.px != p.side || p.py != p.side);
  if (resize) grid = resize_positions(table, p.side, n, p.px, p.py);
  for (uint32_t t = 0; t < tokens; ++t) {
    ENSURE(p.kind != VisionPositionKind::AxisTables || (uint32_t(row[t]) < p.n_pos && uint32_t(col[t]) < p.n_pos),
           fmt::format("the image's {}x{} patches exceed the projector's {} positions per side", p.px, p.py, p.n_pos));
    size_t cell = size_t(row[t]) * p.px + col[t];
    for (uint32_t i = 0; i < n; ++i) {
      float e = p.kind == VisionPositionKind::AxisTables
                    ? table[size_t(col[t]) * n + i] + table[(size_t(p.n_pos) + row[t]) * n + i]
                : resize ? grid[cell * n + i]
                         : table[cell * n + i];
      x[size_t(t) * n + i] += e;
    }
  }
}

float gelu_quick(float x) { return float(double(x) / (1 + std::exp(-1.702 * double(x)))); }

}  // namespace vkllm::ref
