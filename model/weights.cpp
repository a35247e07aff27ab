// Loading weights: conversions done once at load (1-D tensors to f32, the old DeepSeek2 fused
// attn_kv_b split into the absorbed attn_k_b / attn_v_b), packing, upload.
#include "weights.h"

#include <algorithm>
#include <cstring>
#include <fmt/format.h>

#include "check.h"
#include "context.h"
#include "gguf.h"
#include "quant.h"

namespace vkllm {

namespace {

uint64_t align_up(uint64_t x, uint64_t a) { return (x + a - 1) / a * a; }

std::vector<std::byte> as_bytes(const std::vector<float>& v) {
  std::vector<std::byte> out(v.size() * sizeof(float));
  std::memcpy(out.data(), v.data(), out.size());
  return out;
}

std::string layer_name(uint32_t layer, const char* what) { return fmt::format("blk.{}.{}.weight", layer, what); }

}  // namespace

// Old DeepSeek2 files keep the KV up-projection fused: attn_kv_b (H·(nope + v) rows, kv_lora cols),
// per head `nope` rows of Wuk then `v` rows of Wuv (FORMATS.md §5.3). The absorbed path needs
// attn_k_b = Wukᵀ per head (H·kv_lora rows, nope cols; stored f32) and attn_v_b = Wuv (H·v rows,
// kv_lora cols; rows copied in their stored type).
static void split_kv_b(const GgufTensor& t, const ModelConfig& c, uint32_t layer, std::vector<std::byte>& k_b,
                       std::vector<std::byte>& v_b) {
  uint32_t H = c.n_heads, lat = c.mla.kv_lora_rank, nope = c.mla.qk_nope_head_dim, vd = c.mla.v_head_dim;
  uint64_t row = row_bytes(t.type, lat);
  ENSURE(t.ne[0] == lat && t.ne[1] == uint64_t(H) * (nope + vd),
         fmt::format("blk.{}.attn_kv_b.weight has shape [{}, {}], expected [{}, {}]", layer, t.ne[0], t.ne[1], lat,
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

std::vector<Weights::Source> Weights::collect(const GgufFile& file, const ModelConfig& config) const {
  std::vector<Source> out;
  for (const GgufTensor& t : file.tensors()) {
    Tensor tensor{.name = std::string(t.name), .type = t.type, .cols = uint32_t(t.ne[0]),
                  .rows = uint32_t(t.n_elements() / t.ne[0])};
    if (config.mla.layout == MlaLayout::Fused && tensor.name.ends_with(".attn_kv_b.weight")) {
      uint32_t layer = uint32_t(std::stoul(tensor.name.substr(4)));
      Source k{.tensor = {layer_name(layer, "attn_k_b"), DType::F32, config.mla.qk_nope_head_dim,
                          config.n_heads * config.mla.kv_lora_rank, {}}};
      Source v{.tensor = {layer_name(layer, "attn_v_b"), t.type, config.mla.kv_lora_rank,
                          config.n_heads * config.mla.v_head_dim, {}}};
      split_kv_b(t, config, layer, k.converted, v.converted);
      k.data = k.converted.data(), v.data = v.converted.data();
      out.push_back(std::move(k)), out.push_back(std::move(v));
      continue;
    }
    Source s{.tensor = tensor, .data = t.data.data()};
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
  uint64_t align = std::max<uint64_t>(caps.storage_offset_alignment, 256);
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
  Uploader up(ctx);
  for (size_t i = 0; i < sources.size(); ++i) {
    Tensor t = sources[i].tensor;
    auto [b, offset] = place[i];
    uint64_t bytes = row_bytes(t.type, t.cols) * t.rows;
    up.write(buffers_[b], offset, sources[i].data, bytes);
    t.view = buffers_[b].view(offset, bytes);
    tensors_.emplace(t.name, t);
    p.bytes_done += bytes;
    if (progress) progress(p);
  }
  up.flush();
  device_bytes_ = p.bytes_total;
}

void Weights::bind_layers(const ModelConfig& c) {
  token_embd_ = &get("token_embd.weight");
  output_norm_ = &get("output_norm.weight");
  output_ = c.tied_embeddings ? token_embd_ : &get("output.weight");
  rope_freqs_ = find("rope_freqs.weight");
  layers_.resize(c.n_layers);
  for (uint32_t i = 0; i < c.n_layers; ++i) {
    LayerWeights& l = layers_[i];
    auto opt = [&](const char* what) { return find(layer_name(i, what)); };
    auto bias = [&](const char* what) { return find(fmt::format("blk.{}.{}.bias", i, what)); };
    l.attn_norm = opt("attn_norm"), l.wo = opt("attn_output");
    l.wq = opt("attn_q"), l.wk = opt("attn_k"), l.wv = opt("attn_v");
    l.bq = bias("attn_q"), l.bk = bias("attn_k"), l.bv = bias("attn_v");
    l.wq_a = opt("attn_q_a"), l.q_a_norm = opt("attn_q_a_norm"), l.wq_b = opt("attn_q_b");
    l.wkv_a = opt("attn_kv_a_mqa"), l.kv_a_norm = opt("attn_kv_a_norm");
    l.wk_b = opt("attn_k_b"), l.wv_b = opt("attn_v_b");
    l.ffn_norm = opt("ffn_norm"), l.w_gate = opt("ffn_gate"), l.w_up = opt("ffn_up"), l.w_down = opt("ffn_down");
  }
}

Weights::Weights(const Context& ctx, const GgufFile& file, const ModelConfig& config,
                 const std::function<void(const LoadProgress&)>& progress, uint64_t max_buffer_bytes) {
  std::vector<Source> sources = collect(file, config);
  upload(ctx, sources, progress, max_buffer_bytes);
  bind_layers(config);
}

const Tensor* Weights::find(const std::string& name) const {
  auto it = tensors_.find(name);
  return it == tensors_.end() ? nullptr : &it->second;
}

const Tensor& Weights::get(const std::string& name) const {
  const Tensor* t = find(name);
  ENSURE(t, "missing tensor " + name);
  return *t;
}

}  // namespace vkllm
