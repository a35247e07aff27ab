// Loading weights: conversions done once at load (1-D tensors to f32, the old DeepSeek2 fused
// attn_kv_b split into the absorbed attn_k_b / attn_v_b), packing, upload.
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

std::vector<Weights::Source> Weights::collect(const GgufFile& file, const ModelConfig& config) const {
  check_weight_types(file);
  TensorCatalogue catalogue = tensor_catalogue(config);
  std::vector<Source> out;
  for (const GgufTensor& t : file.tensors()) {
    const TensorSpec* spec = catalogue.find(t.name);
    ENSURE(spec, fmt::format("tensor {} is not in the {} catalogue", printable(t.name), config.arch_name));
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
    if (t.n_dims == 1 && t.type != DType::F32) {  // norms, biases, rope factors: kernels read f32
      std::vector<float> f(t.ne[0]);
      ref::dequantize_row(t.type, t.data.data(), f.data(), f.size());
      s.converted = as_bytes(f);
      s.data = s.converted.data();
      s.tensor.type = DType::F32;
    }
    out.push_back(std::move(s));
  }
  return out;
}

void Weights::upload(const Context& ctx, std::vector<Source>& sources,
                     const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes) {
  const DeviceCaps& caps = ctx.caps();
  uint64_t limit = std::min({caps.max_memory_allocation, caps.max_buffer_size, max_buffer_bytes});
  uint64_t align = caps.binding_alignment();
  // Plan: consecutive tensors share a buffer until it would pass the limit.
  std::vector<uint64_t> sizes{0};
  std::vector<std::pair<size_t, uint64_t>> place;  // (buffer, offset) per source
  LoadProgress p;
  for (const Source& s : sources) {
    uint64_t bytes = row_bytes(s.tensor.type, s.tensor.cols) * s.tensor.rows;
    ENSURE(bytes <= std::min(caps.max_memory_allocation, caps.max_buffer_size),
           fmt::format("tensor {} ({:.0f} MiB) is larger than this device's largest allocation", s.tensor.name,
                       bytes / 1048576.0));
    uint64_t at = align_up(sizes.back(), align);
    if (sizes.back() > 0 && at + bytes > limit) sizes.push_back(0), at = 0;
    place.emplace_back(sizes.size() - 1, at);
    sizes.back() = at + bytes;
    p.bytes_total += bytes;
  }
  for (size_t i = 0; i < sizes.size(); ++i)
    buffers_.emplace_back(ctx, sizes[i], Memory::Device, fmt::format("weights {}", i));
  Uploader up(ctx, std::min<uint64_t>(p.bytes_total, 64ull << 20));
  for (size_t i = 0; i < sources.size(); ++i) {
    Tensor t = sources[i].tensor;
    auto [b, offset] = place[i];
    uint64_t bytes = row_bytes(t.type, t.cols) * t.rows;
    up.write(buffers_[b], offset, sources[i].data, bytes);
    t.view = buffers_[b].view(offset, bytes);
    tensors_.emplace(std::make_pair(sources[i].layer, sources[i].role), t);
    p.bytes_done += bytes;
    if (progress) progress(p);
  }
  up.flush();
  device_bytes_ = p.bytes_total;
  staging_bytes_ = up.staging_bytes();
}

namespace {

// Where a block tensor of each role goes in LayerWeights. The recipe chose the attention form.
const Tensor** slot(LayerWeights& l, TensorRole r) {
  FfnWeights& f = l.ffn;
  if (auto* a = std::get_if<AttentionWeights>(&l.attention)) {
    switch (r) {
      case TensorRole::AttnNorm:
        return &a->norm;
      case TensorRole::AttnQ:
        return &a->q;
      case TensorRole::AttnK:
        return &a->k;
      case TensorRole::AttnV:
        return &a->v;
      case TensorRole::AttnQBias:
        return &a->q_bias;
      case TensorRole::AttnKBias:
        return &a->k_bias;
      case TensorRole::AttnVBias:
        return &a->v_bias;
      case TensorRole::AttnOut:
        return &a->out;
      default:
        break;
    }
  } else {
    auto& m = std::get<LatentAttentionWeights>(l.attention);
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
        break;
    }
  }
  switch (r) {
    case TensorRole::FfnNorm:
      return &f.norm;
    case TensorRole::FfnGate:
      return &f.gate;
    case TensorRole::FfnUp:
      return &f.up;
    case TensorRole::FfnDown:
      return &f.down;
    default:
      throw Error(fmt::format("a {} tensor has no place in this block", to_string(r)));
  }
}

}  // namespace

void Weights::bind_layers(const ModelConfig& c) {
  token_embd_ = find(TensorRole::TokenEmbd);
  output_norm_ = find(TensorRole::OutputNorm);
  ENSURE(token_embd_ && output_norm_, "the model has no token_embd or output_norm tensor");
  output_ = c.tied_embeddings ? token_embd_ : find(TensorRole::Output);
  ENSURE(output_, "the model has no output tensor");
  rope_freqs_ = find(TensorRole::RopeFreqs);
  layers_.resize(c.n_layers);
  for (LayerWeights& l : layers_)
    if (c.architecture().recipe.attention == AttentionForm::Latent) l.attention = LatentAttentionWeights{};
  for (auto& [key, tensor] : tensors_)
    if (key.first != kGlobal) *slot(layers_.at(key.first), key.second) = &tensor;
}

Weights::Weights(const Context& ctx, const GgufFile& file, const ModelConfig& config,
                 const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes) {
  std::vector<Source> sources = collect(file, config);
  upload(ctx, sources, progress, max_buffer_bytes);
  bind_layers(config);
}

const Tensor* Weights::find(TensorRole role, int layer) const {
  auto it = tensors_.find({layer, role});
  return it == tensors_.end() ? nullptr : &it->second;
}

}  // namespace vkllm
