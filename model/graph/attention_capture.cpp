// The attention capture: the probabilities of one layer's attention over a sequence, for
// visualisation (`vkllm attention`, POST /v1/attention). A graph of its own, recorded per call,
// runs the forward in chunks up to that layer's attention and then ops::attention_probs on the
// Q and the cached K flash attention has just used, so the numbers are those of the forward
// (same rope, scale, masks, K as the cache stores it) while the normal graphs stay untouched.
#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "context.h"
#include "error.h"
#include "graph/blocks.h"
#include "graph/transformer.h"
#include "ops.h"
#include "push.h"

namespace vkllm {

namespace {

// The result is (heads, n, n) floats on the host: a bound, so a long context cannot ask for tens
// of GiB by accident (4 heads x 8192 tokens, or 32 heads x 2896).
constexpr uint64_t kMaxProbabilityBytes = 1ull << 30;

}  // namespace

void blocks::capture_probs(const RecordContext& r, const ops::AttentionShape& shape, BufferView q, BufferView k,
                           uint32_t l, BufferView sinks) {
  if (!r.capture || r.capture->layer != l) return;
  ops::attention_probs(r.s, shape, q, k, r.in.step(1), r.capture->out, r.capture->n_keys, sinks);
}

std::vector<float> Transformer::attention_probabilities(std::span<const int32_t> tokens, uint32_t layer,
                                                        uint32_t slot) {
  SeqChunk all{.slot = slot, .tokens = tokens};
  return attention_probabilities(std::span<const SeqChunk>(&all, 1), layer, slot);
}

std::vector<float> Transformer::attention_probabilities(std::span<const SeqChunk> parts, uint32_t layer,
                                                        uint32_t slot) {
  uint64_t n = 0, H = c_.n_heads;
  for (const SeqChunk& p : parts) {
    ENSURE(p.pos0 == n, "the parts of an attention capture follow one another from position 0");
    n += p.tokens.size();
  }
  ENSURE(n >= 1, "attention of no tokens");
  ENSURE(layer < c_.n_layers, fmt::format("layer {} does not exist: the model has {} layers (0 to {})", layer,
                                          c_.n_layers, c_.n_layers - 1));
  ENSURE(n <= cache_.n_ctx(), fmt::format("{} tokens do not fit the context of {} tokens", n, cache_.n_ctx()));
  ENSURE(H * n * n * 4 <= kMaxProbabilityBytes,
         fmt::format("attention probabilities of {} tokens: {} heads x {} x {} floats are {} MiB, more than {} MiB; "
                     "use fewer tokens",
                     n, H, n, n, (H * n * n * 4) >> 20, kMaxProbabilityBytes >> 20));
  // Queries per chunk: a prefill chunk, fewer when their rows of n keys would not fit one binding.
  uint64_t row_bytes = H * n * 4;
  ENSURE(row_bytes <= ctx_.caps().max_storage_buffer_range,
         fmt::format("attention probabilities of {} tokens: one query's {} heads x {} keys do not fit a storage "
                     "buffer binding of this device",
                     n, H, n));
  uint32_t chunk = uint32_t(std::min<uint64_t>({max_batch_, n, ctx_.caps().max_storage_buffer_range / row_bytes}));
  Buffer out(ctx_, uint64_t(chunk) * row_bytes, Memory::Host, "attention probabilities");
  std::vector<float> probs(H * n * n);
  for (const SeqChunk& part : parts)
    for (uint32_t at = 0; at < part.tokens.size(); at += chunk) {
      uint32_t m = uint32_t(std::min<uint64_t>(chunk, part.tokens.size() - at)), pos0 = part.pos0 + at;
      SeqChunk one = part;  // a piece of a text run, or of an image's rows
      one.slot = slot, one.pos0 = pos0, one.tokens = part.tokens.subspan(at, m), one.grid_first = part.grid_first + at;
      if (!part.embd.empty()) one.embd = part.embd.subspan(size_t(at) * c_.dim, size_t(m) * c_.dim);
      write_step(std::span<const SeqChunk>(&one, 1));
      bool image = write_image(std::span<const SeqChunk>(&one, 1));
      Stream s(ctx_);
      Capture capture{.layer = layer, .out = out.view(0, m * row_bytes), .n_keys = uint32_t(n)};
      RecordContext r = context(s, m, 1);
      r.capture = &capture;
      if (image) r.embd = embd_.get(), r.image_attention = part.attention;
      blocks::embeddings(r);
      for (uint32_t l = 0; l <= layer; ++l) blocks::layer(r, l, l < layer);
      s.submit_wait();
      // (heads, m, n) of this chunk's queries into rows pos0 .. pos0 + m - 1 of each head.
      const auto* got = reinterpret_cast<const float*>(out.mapped());
      for (uint64_t h = 0; h < H; ++h) std::memcpy(&probs[(h * n + pos0) * n], got + h * m * n, m * n * sizeof(float));
    }
  return probs;
}

}  // namespace vkllm
