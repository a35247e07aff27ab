// The device memory of a model before loading it. Mirrors what weights.cpp uploads (1-D tensors
// as f32; the fused attn_kv_b split into an f32 k part and a v part in its stored type) and the
// activations transformer.cpp declares (tests/test_memory_estimate.cpp holds both to the real ones).
#include "graph/memory_estimate.h"

#include <algorithm>

#include "arch/architecture.h"
#include "arch/tensors.h"
#include "gguf/reader.h"
#include "ops_attention.h"

namespace vkllm {

namespace {

uint64_t weight_bytes(const GgufFile& file, const ModelConfig& c) {
  TensorCatalogue catalogue = tensor_catalogue(c);
  uint64_t total = 0;
  for (const GgufTensor& t : file.tensors()) {
    const TensorSpec* spec = catalogue.find(t.name);
    if (spec && spec->layer >= int(c.n_layers)) continue;  // multi-token prediction: not uploaded
    if (spec && spec->role == TensorRole::AttnKvB) {
      const MlaConfig& m = c.mla;
      total += 4ull * c.n_heads * m.kv_lora_rank * m.qk_nope_head_dim;
      total += uint64_t(c.n_heads) * m.v_head_dim * row_bytes(t.type, m.kv_lora_rank);
    } else if (t.n_dims == 1 || (spec && needs_f32(spec->role))) {
      total += 4 * t.n_elements();
    } else {
      total += t.data.size();
    }
  }
  return total;
}

// Floats per token of every activation the graph declares, plus the step inputs and a row of
// logits per slot.
uint64_t activation_bytes(const ModelConfig& c, uint64_t batch, uint64_t slots) {
  uint64_t H = c.n_heads, hidden = *std::max_element(c.hidden_dim.begin(), c.hidden_dim.end());
  uint64_t floats = 3ull * c.dim + 2 * hidden;  // x, h, proj; gate, up
  if (c.attention_kind() == AttentionKind::MLA) {
    const MlaConfig& m = c.mla;
    uint64_t lat = m.kv_lora_rank, rot = m.qk_rope_head_dim;
    floats += m.q_lora_rank + H * c.head_dim + (lat + rot) + lat + rot + H * rot + H * (lat + rot) + H * lat +
              H * m.v_head_dim;
  } else {
    floats += 2ull * c.max_q_width() + 2ull * c.max_kv_width();                 // q, attn; k, v (the widest layer's)
    if (c.architecture().recipe.attention.gated) floats += 3 * H * c.head_dim;  // q|gate, the gate
  }
  if (c.has_mixer(Mixer::DeltaNet)) {
    const LinearAttentionConfig& l = c.linear;
    floats += 2ull * l.conv_channels() + 2ull * l.value_dim() + 2ull * l.v_heads;  // qkv, conv; z, out; alpha, beta
  }
  if (c.has_mixer(Mixer::Mamba2)) {  // z | xBC | dt, the conv's output, y
    const Mamba2Config& m = c.ssm;
    floats += 2ull * m.inner + 2ull * m.groups * m.state + m.heads + m.conv_channels() + m.inner;
  }
  // Step inputs (step_inputs.cpp): token ids, positions and KV rows per token, StepParams and a
  // last row per slot, five regions of up to 256 bytes of alignment, and a staging twin on a
  // discrete GPU.
  uint64_t step_inputs = 2 * (12 * batch + 20 * slots + 5 * 256);
  return 4 * (batch * floats + slots * c.vocab_size) + step_inputs;
}

}  // namespace

uint64_t attention_scratch_bytes(const DeviceCaps& caps, const Profile& prof, uint32_t n_heads,
                                 const std::vector<KvCache::Geometry>& geometries, uint32_t n_ctx, uint32_t batch,
                                 uint32_t slots) {
  ops::AttentionScratch most;  // the largest partials and the most counters of any one dispatch
  for (uint32_t n = 1; n <= batch; ++n)
    for (uint32_t m = 1; m <= std::min(n, slots); ++m)
      for (const KvCache::Geometry& g : geometries) {
        ops::AttentionShape shape{.n_q = n, .seqs = m, .seq_q = n - m + 1, .kv_slots = slots};
        shape.n_heads = n_heads, shape.n_kv_heads = g.heads, shape.max_kv = n_ctx;
        shape.dk = g.k_width, shape.dv = g.v_width;
        ops::AttentionScratch one = ops::attention_scratch(caps, prof, shape);
        most.partial_bytes = std::max(most.partial_bytes, one.partial_bytes);
        most.counter_bytes = std::max(most.counter_bytes, one.counter_bytes);
      }
  return most.bytes();
}

MemoryEstimate estimate_memory(const GgufFile& file, const ModelConfig& config, uint32_t n_ctx, uint32_t batch,
                               DType kv_type, uint32_t slots, const DeviceCaps& caps, const Profile& prof) {
  MemoryEstimate e = estimate_memory(file, config, n_ctx, batch, kv_type, slots);
  uint32_t steps = std::max(1u, uint32_t(std::min<uint64_t>(batch, uint64_t(n_ctx) * slots)));  // as Engine clamps it
  e.scratch = attention_scratch_bytes(caps, prof, config.n_heads, KvCache::geometries(config), n_ctx, steps, slots);
  return e;
}

MemoryEstimate estimate_memory(const GgufFile& file, const ModelConfig& config, uint32_t n_ctx, uint32_t batch,
                               DType kv_type, uint32_t slots) {
  return {.weights = weight_bytes(file, config),
          .kv_cache = config.kv_bytes_per_token(kv_type) * n_ctx * slots,
          .activations = activation_bytes(config, std::max(1u, std::min(batch, n_ctx)), std::max(1u, slots)),
          .recurrent = 2 * config.recurrent_bytes_per_sequence() * slots};
}

}  // namespace vkllm
