// Loading weights: conversions done once at load (1-D tensors and conv taps to f32, the old
// DeepSeek2 fused attn_kv_b split into the absorbed attn_k_b / attn_v_b, fused q|k|v and gate|up
// rows into their parts), packing, upload. The multi-token-prediction blocks of hybrid files are
// checked with the file and not uploaded.
#include "graph/weights.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "align.h"
#include "arch/architecture.h"
#include "context.h"
#include "error.h"
#include "gguf/reader.h"
#include "ops_matmul.h"
#include "reference/quant.h"

namespace vkllm {

namespace {

// Each tensor's view runs to the next multiple of 16 bytes (its buffer holds them), so kernels may
// read a matrix's last rows in 16-byte words (ops::matvec's wide loads on llvmpipe).
constexpr uint64_t kViewPad = 16;

std::vector<std::byte> as_bytes(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

}  // namespace

// Old DeepSeek2 files keep the KV up-projection fused: attn_kv_b (H·(nope + v) rows, kv_lora cols),
// per head `nope` rows of Wuk then `v` rows of Wuv (docs/formats.md §5.3). The absorbed path needs
// attn_k_b = Wukᵀ per head (H·kv_lora rows, nope cols; stored f32) and attn_v_b = Wuv (H·v rows,
// kv_lora cols; rows copied in their stored type).
static void split_kv_b(const GgufTensor& t, const ModelConfig& c, std::vector<std::byte>& k_b,
                       std::vector<std::byte>& v_b) {
  uint32_t H = c.n_heads, lat = c.mla.kv_lora_rank, nope = c.mla.qk_nope_head_dim, vd = c.mla.v_head_dim;
  uint64_t row = row_bytes(t.type, lat);
  ENSURE(t.ne[0] == lat && t.ne[1] == uint64_t(H) * (nope + vd),
         fmt::format("{} has shape [{}, {}], expected [{}, {}]", t.name, t.ne[0], t.ne[1], lat,
                     uint64_t(H) * (nope + vd)));
  std::vector<float> wuk(size_t(nope) * lat), kt(size_t(H) * lat * nope);
  v_b.resize(size_t(H) * vd * row);
  for (uint32_t h = 0; h < H; ++h) {
    const std::byte* head = t.data.data() + uint64_t(h) * (nope + vd) * row;
    for (uint32_t r = 0; r < nope; ++r) ref::dequantize_row(t.type, head + r * row, &wuk[size_t(r) * lat], lat);
    for (uint32_t r = 0; r < lat; ++r)
      for (uint32_t col = 0; col < nope; ++col) kt[(size_t(h) * lat + r) * nope + col] = wuk[size_t(col) * lat + r];
    std::memcpy(v_b.data() + size_t(h) * vd * row, head + size_t(nope) * row, size_t(vd) * row);
  }
  k_b = as_bytes(kt);
}

// Matrices are read by the kernels in their stored type; 1-D tensors and the fused attn_kv_b are
// converted on the host by the reference dequantiser, which reads the same types.
std::vector<const GgufTensor*> unsupported_weights(const GgufFile& file) {
  std::vector<const GgufTensor*> out;
  for (const GgufTensor& t : file.tensors())
    if (!ops::matmul_supports(t.type)) out.push_back(&t);
  return out;
}

void check_weight_types(const GgufFile& file) {
  for (const GgufTensor& t : file.tensors())  // before any work: one line naming the first such tensor
    if (!ops::matmul_supports(t.type))
      file.fail(fmt::format("tensor {} has type {}, which vkllm cannot read (it reads {})", printable(t.name),
                            info(t.type).name, ops::weight_type_names()));
}

namespace {

uint64_t source_bytes(const Tensor& t, uint32_t slice_experts) {
  return row_bytes(t.type, t.cols) * t.rows * std::max(1u, slice_experts);
}

// Tensors the graph never reads: the multi-token-prediction blocks (not run), and the K, V and K
// norm a shared-KV layer may carry (gemma4: it reads an earlier layer's cache).
bool unread(TensorRole role, int layer, const ModelConfig& c) {
  if (layer >= int(c.n_layers)) return true;
  bool kv = role == TensorRole::AttnK || role == TensorRole::AttnV || role == TensorRole::AttnKNorm;
  return kv && layer >= 0 && !c.has_kv(uint32_t(layer));
}

}  // namespace

// Routed experts: slices of whole experts, each within one binding and the buffer size, so that
// a tensor larger than either is spread over several buffers (the kernels take one slice each).
void Weights::add_experts(std::vector<Source>& out, Source s, uint64_t max_buffer_bytes, uint64_t max_binding) const {
  uint64_t expert = source_bytes(s.tensor, 0);
  ENSURE(expert <= max_binding, fmt::format("one expert of {} ({:.0f} MiB) exceeds a storage buffer binding",
                                            s.tensor.name, expert / 1048576.0));
  uint32_t n = s.tensor.n_experts;
  uint32_t per = uint32_t(std::clamp<uint64_t>(std::min(max_buffer_bytes, max_binding) / expert, 1, n));
  for (uint32_t e0 = 0; e0 < n; e0 += per) {
    Source slice{.tensor = s.tensor, .role = s.role, .layer = s.layer, .data = s.data + e0 * expert};
    slice.expert0 = e0, slice.slice_experts = std::min(per, n - e0);
    out.push_back(std::move(slice));
  }
}

// A tensor that holds several roles' rows (attn_qkv and its bias: q, k, v; phi3's ffn_up: gate,
// up; docs/formats.md §13) is uploaded as its parts, each read from the file in place (a bias,
// converted to f32 first, is copied). Weights places the parts back to back again, so that a product
// may still read them as one matrix (blocks::project_qkv, gated_hidden).
bool Weights::add_fused_parts(std::vector<Source>& out, const Source& s, const ModelConfig& c) {
  std::vector<FusedPart> parts = fused_parts(c, s.role, s.layer);
  if (parts.empty()) return false;
  bool vector = s.tensor.rows == 1;  // a bias: its parts are runs of its values
  uint64_t unit = vector ? row_bytes(s.tensor.type, 1) : row_bytes(s.tensor.type, s.tensor.cols), at = 0;
  for (const FusedPart& p : parts) {
    at += p.rows;
    if (unread(p.role, s.layer, c)) continue;
    Source part{.tensor = s.tensor, .role = p.role, .layer = s.layer, .data = s.data + (at - p.rows) * unit};
    part.tensor.name = fmt::format("{} ({} rows)", s.tensor.name, to_string(p.role));
    (vector ? part.tensor.cols : part.tensor.rows) = uint32_t(p.rows);
    if (!s.converted.empty()) {
      part.converted.assign(part.data, part.data + p.rows * unit);
      part.data = part.converted.data();
    }
    out.push_back(std::move(part));
  }
  ENSURE(at * unit == source_bytes(s.tensor, 0), fmt::format("{}: its parts do not fill it", s.tensor.name));
  return true;
}

std::vector<Weights::Source> Weights::collect(const GgufFile& file, const ModelConfig& config,
                                              uint64_t max_buffer_bytes, uint64_t max_binding) const {
  check_weight_types(file);
  TensorCatalogue catalogue = tensor_catalogue(config);
  std::vector<Source> out;
  for (const GgufTensor& t : file.tensors()) {
    const TensorSpec* spec = catalogue.find(t.name);
    ENSURE(spec, fmt::format("tensor {} is not in the {} catalogue", printable(t.name), config.arch_name));
    if (unread(spec->role, spec->layer, config)) continue;
    Tensor tensor{.name = std::string(t.name),
                  .type = t.type,
                  .cols = uint32_t(t.ne[0]),
                  .rows = uint32_t(t.n_elements() / t.ne[0])};
    if (spec->role == TensorRole::AttnKvB) {  // the old fused layout: split for the absorbed form
      const MlaConfig& m = config.mla;
      Source k{
          .tensor = {tensor.name + " (k part)", DType::F32, m.qk_nope_head_dim, config.n_heads * m.kv_lora_rank, {}},
          .role = TensorRole::AttnKB,
          .layer = spec->layer};
      Source v{.tensor = {tensor.name + " (v part)", t.type, m.kv_lora_rank, config.n_heads * m.v_head_dim, {}},
               .role = TensorRole::AttnVB,
               .layer = spec->layer};
      split_kv_b(t, config, k.converted, v.converted);
      k.data = k.converted.data(), v.data = v.converted.data();
      out.push_back(std::move(k)), out.push_back(std::move(v));
      continue;
    }
    Source s{.tensor = tensor, .role = spec->role, .layer = spec->layer, .data = t.data.data()};
    if (is_experts(spec->role)) {
      s.tensor.n_experts = uint32_t(t.ne[2]);
      s.tensor.rows = uint32_t(t.ne[1]);
      add_experts(out, std::move(s), max_buffer_bytes, max_binding);
      continue;
    }
    // Norms, biases, rope factors and the conv taps: the kernels read f32.
    if ((t.n_dims == 1 || needs_f32(spec->role)) && t.type != DType::F32) {
      std::vector<float> f(t.n_elements());
      ref::dequantize_row(t.type, t.data.data(), f.data(), f.size());
      s.converted = as_bytes(f);
      s.data = s.converted.data();
      s.tensor.type = DType::F32;
    }
    if (!add_fused_parts(out, s, config)) out.push_back(std::move(s));
  }
  return out;
}

namespace {

// Tensors one product reads as a single matrix are placed back to back in this order: q, k, v
// (and their biases), gate and up (Transformer::record_attention, gated_hidden), the shared
// expert's gate and up. Others follow.
int fusion_rank(TensorRole r) {
  const TensorRole order[] = {
      TensorRole::AttnQ,     TensorRole::AttnK,   TensorRole::AttnV, TensorRole::AttnQBias,    TensorRole::AttnKBias,
      TensorRole::AttnVBias, TensorRole::FfnGate, TensorRole::FfnUp, TensorRole::FfnGateShexp, TensorRole::FfnUpShexp};
  for (int i = 0; i < int(std::size(order)); ++i)
    if (order[i] == r) return i;
  return int(std::size(order));
}

}  // namespace

void Weights::upload(const Context& ctx, std::vector<Source>& sources,
                     const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes) {
  std::stable_sort(sources.begin(), sources.end(), [](const Source& a, const Source& b) {
    return std::pair(a.layer, fusion_rank(a.role)) < std::pair(b.layer, fusion_rank(b.role));
  });
  const DeviceCaps& caps = ctx.caps();
  uint64_t limit = std::min({caps.max_memory_allocation, caps.max_buffer_size, max_buffer_bytes});
  uint64_t align = caps.binding_alignment();
  // Plan: consecutive tensors share a buffer until it would pass the limit.
  std::vector<uint64_t> sizes{0};
  std::vector<std::pair<size_t, uint64_t>> place;  // (buffer, offset) per source
  LoadProgress p;
  for (const Source& s : sources) {
    uint64_t bytes = source_bytes(s.tensor, s.slice_experts);
    ENSURE(bytes <= std::min(caps.max_memory_allocation, caps.max_buffer_size),
           fmt::format("tensor {} ({:.0f} MiB) is larger than this device's largest allocation", s.tensor.name,
                       bytes / 1048576.0));
    uint64_t at = align_up(sizes.back(), align);
    if (sizes.back() > 0 && at + bytes > limit) sizes.push_back(0), at = 0;
    place.emplace_back(sizes.size() - 1, at);
    sizes.back() = at + align_up(bytes, kViewPad);
    p.bytes_total += bytes;
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    buffers_.emplace_back(ctx, sizes[i], Memory::Device, fmt::format("weights {}", i));
  Uploader up(ctx, std::min<uint64_t>(p.bytes_total, 64ull << 20));
  for (size_t i = 0; i < sources.size(); ++i) {
    const Source& src = sources[i];
    Tensor t = src.tensor;
    auto [b, offset] = place[i];
    uint64_t bytes = source_bytes(t, src.slice_experts);
    up.write(buffers_[b], offset, src.data, bytes);
    t.view = buffers_[b].view(offset, align_up(bytes, kViewPad));
    auto it = tensors_.emplace(std::make_pair(src.layer, src.role), t).first;
    if (src.slice_experts) it->second.experts.push_back({src.expert0, src.slice_experts, t.view});
    p.bytes_done += bytes;
    if (progress) progress(p);
  }
  up.flush();
  device_bytes_ = p.bytes_total;
  staging_bytes_ = up.staging_bytes();
}

namespace {

// Where a block tensor of each role goes in LayerWeights. The recipe chose the attention form,
// the config the FFN kind.
const Tensor** attention_slot(AttentionWeights& a, TensorRole r) {
  switch (r) {
    case TensorRole::AttnNorm:
      return &a.norm;
    case TensorRole::AttnQ:
      return &a.q;
    case TensorRole::AttnK:
      return &a.k;
    case TensorRole::AttnV:
      return &a.v;
    case TensorRole::AttnQBias:
      return &a.q_bias;
    case TensorRole::AttnKBias:
      return &a.k_bias;
    case TensorRole::AttnVBias:
      return &a.v_bias;
    case TensorRole::AttnQNorm:
      return &a.q_norm;
    case TensorRole::AttnKNorm:
      return &a.k_norm;
    case TensorRole::AttnOut:
      return &a.out;
    case TensorRole::AttnPostNorm:
      return &a.post_norm;
    case TensorRole::AttnOutBias:
      return &a.out_bias;
    case TensorRole::AttnSinks:
      return &a.sinks;
    default:
      return nullptr;
  }
}

const Tensor** latent_slot(LatentAttentionWeights& m, TensorRole r) {
  switch (r) {
    case TensorRole::AttnNorm:
      return &m.norm;
    case TensorRole::AttnQ:
      return &m.q;
    case TensorRole::AttnQA:
      return &m.q_a;
    case TensorRole::AttnQANorm:
      return &m.q_a_norm;
    case TensorRole::AttnQB:
      return &m.q_b;
    case TensorRole::AttnKvA:
      return &m.kv_a;
    case TensorRole::AttnKvANorm:
      return &m.kv_a_norm;
    case TensorRole::AttnKB:
      return &m.k_b;
    case TensorRole::AttnVB:
      return &m.v_b;
    case TensorRole::AttnOut:
      return &m.out;
    default:
      return nullptr;
  }
}

const Tensor** linear_slot(LinearAttentionWeights& w, TensorRole r) {
  switch (r) {
    case TensorRole::AttnNorm:
      return &w.norm;
    case TensorRole::LinearQkv:
      return &w.qkv;
    case TensorRole::LinearGate:
      return &w.z;
    case TensorRole::SsmConv:
      return &w.conv;
    case TensorRole::SsmDt:
      return &w.dt;
    case TensorRole::SsmA:
      return &w.a;
    case TensorRole::SsmBeta:
      return &w.beta;
    case TensorRole::SsmAlpha:
      return &w.alpha;
    case TensorRole::SsmNorm:
      return &w.ssm_norm;
    case TensorRole::SsmOut:
      return &w.out;
    default:
      return nullptr;
  }
}

const Tensor** mamba2_slot(Mamba2Weights& w, TensorRole r) {
  switch (r) {
    case TensorRole::AttnNorm:
      return &w.norm;
    case TensorRole::SsmIn:
      return &w.in;
    case TensorRole::SsmConv:
      return &w.conv;
    case TensorRole::SsmConvBias:
      return &w.conv_bias;
    case TensorRole::SsmDt:
      return &w.dt;
    case TensorRole::SsmA:
      return &w.a;
    case TensorRole::SsmD:
      return &w.d;
    case TensorRole::SsmNorm:
      return &w.ssm_norm;
    case TensorRole::SsmOut:
      return &w.out;
    default:
      return nullptr;
  }
}

const Tensor** short_conv_slot(ShortConvWeights& w, TensorRole r) {
  switch (r) {
    case TensorRole::AttnNorm:
      return &w.norm;
    case TensorRole::ShortConvIn:
      return &w.in;
    case TensorRole::ShortConvTaps:
      return &w.taps;
    case TensorRole::ShortConvOut:
      return &w.out;
    default:
      return nullptr;
  }
}

const Tensor** ffn_slot(FfnWeights& f, TensorRole r) {
  switch (r) {
    case TensorRole::FfnNorm:
      return &f.norm;
    case TensorRole::FfnGate:
      return &f.gate;
    case TensorRole::FfnUp:
      return &f.up;
    case TensorRole::FfnDown:
      return &f.down;
    case TensorRole::FfnPostNorm:
      return &f.post_norm;
    case TensorRole::FfnGateBias:
      return &f.gate_bias;
    case TensorRole::FfnUpBias:
      return &f.up_bias;
    case TensorRole::FfnDownBias:
      return &f.down_bias;
    default:
      return nullptr;
  }
}

const Tensor** ffn_slot(MoeWeights& m, TensorRole r) {
  switch (r) {
    case TensorRole::FfnNorm:
      return &m.norm;
    case TensorRole::FfnGateInp:
      return &m.router;
    case TensorRole::FfnLatentDown:
      return &m.latent_down;
    case TensorRole::FfnLatentUp:
      return &m.latent_up;
    case TensorRole::ExpProbsB:
      return &m.probs_bias;
    case TensorRole::FfnGateExps:
      return &m.gate;
    case TensorRole::FfnUpExps:
      return &m.up;
    case TensorRole::FfnGateUpExps:
      return &m.gate_up;
    case TensorRole::FfnDownExps:
      return &m.down;
    case TensorRole::FfnGateShexp:
      return &m.shared_gate;
    case TensorRole::FfnUpShexp:
      return &m.shared_up;
    case TensorRole::FfnDownShexp:
      return &m.shared_down;
    case TensorRole::FfnGateInpShexp:
      return &m.shared_router;
    case TensorRole::FfnGateInpBias:
      return &m.router_bias;
    case TensorRole::FfnGateExpsBias:
      return &m.gate_bias;
    case TensorRole::FfnUpExpsBias:
      return &m.up_bias;
    case TensorRole::FfnDownExpsBias:
      return &m.down_bias;
    // gemma4: the dense FFN beside the experts is their shared FFN
    case TensorRole::FfnGate:
      return &m.shared_gate;
    case TensorRole::FfnUp:
      return &m.shared_up;
    case TensorRole::FfnDown:
      return &m.shared_down;
    case TensorRole::FfnGateInpScale:
      return &m.router_scale;
    case TensorRole::FfnDownExpsScale:
      return &m.down_scale;
    case TensorRole::FfnPreNorm2:
      return &m.expert_norm;
    case TensorRole::FfnPostNorm1:
      return &m.shared_post_norm;
    case TensorRole::FfnPostNorm2:
      return &m.expert_post_norm;
    case TensorRole::FfnPostNorm:
      return &m.post_norm;
    default:
      return nullptr;
  }
}

const Tensor** layer_slot(LayerWeights& l, TensorRole r) {
  switch (r) {
    case TensorRole::PerLayerInpGate:
      return &l.per_layer_gate;
    case TensorRole::PerLayerProj:
      return &l.per_layer_proj;
    case TensorRole::PerLayerPostNorm:
      return &l.per_layer_norm;
    case TensorRole::LayerOutScale:
      return &l.out_scale;
    default:
      return nullptr;
  }
}

const Tensor** slot(LayerWeights& l, TensorRole r) {
  const Tensor** s = layer_slot(l, r);
  if (s) return s;
  if (auto* a = std::get_if<AttentionWeights>(&l.attention))
    s = attention_slot(*a, r);
  else if (auto* m = std::get_if<LatentAttentionWeights>(&l.attention))
    s = latent_slot(*m, r);
  else if (auto* mamba = std::get_if<Mamba2Weights>(&l.attention))
    s = mamba2_slot(*mamba, r);
  else if (auto* sc = std::get_if<ShortConvWeights>(&l.attention))
    s = short_conv_slot(*sc, r);
  else
    s = linear_slot(std::get<LinearAttentionWeights>(l.attention), r);
  if (!s) s = std::visit([&](auto& f) { return ffn_slot(f, r); }, l.ffn);
  ENSURE(s, fmt::format("a {} tensor has no place in this block", to_string(r)));
  return s;
}

}  // namespace

void Weights::bind_layers(const ModelConfig& c) {
  token_embd_ = find(TensorRole::TokenEmbd);
  output_norm_ = find(TensorRole::OutputNorm);
  ENSURE(token_embd_ && output_norm_, "the model has no token_embd or output_norm tensor");
  output_ = c.tied_embeddings ? token_embd_ : find(TensorRole::Output);
  ENSURE(output_, "the model has no output tensor");
  rope_freqs_ = find(TensorRole::RopeFreqs);
  output_bias_ = find(TensorRole::OutputBias);
  layers_.resize(c.n_layers);
  for (uint32_t i = 0; i < c.n_layers; ++i) {
    if (c.architecture().recipe.attention.form == AttentionForm::Latent)
      layers_[i].attention = LatentAttentionWeights{};
    if (c.mixer(i) == Mixer::DeltaNet) layers_[i].attention = LinearAttentionWeights{};
    if (c.mixer(i) == Mixer::Mamba2) layers_[i].attention = Mamba2Weights{};
    if (c.mixer(i) == Mixer::ShortConv) layers_[i].attention = ShortConvWeights{};
    if (c.is_moe_layer(i)) layers_[i].ffn = MoeWeights{};
  }
  for (auto& [key, tensor] : tensors_)
    if (key.first != kGlobal) *slot(layers_.at(key.first), key.second) = &tensor;
}

Weights::Weights(const Context& ctx, const GgufFile& file, const ModelConfig& config,
                 const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes) {
  std::vector<Source> sources = collect(file, config, max_buffer_bytes, ctx.caps().max_storage_buffer_range);
  upload(ctx, sources, progress, max_buffer_bytes);
  bind_layers(config);
}

const Tensor* Weights::find(TensorRole role, int layer) const {
  auto it = tensors_.find({layer, role});
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace vkllm
