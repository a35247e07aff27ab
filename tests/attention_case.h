// One attention test case on the GPU and the CPU reference: random Q/K/V in the KV-cache layout
// (K/V rounded to what the cache stores first: f16, or quantised blocks read back, so only
// arithmetic differs), the step buffer, and ops::attention or ops::attention_naive recorded into
// a stream that can be replayed.
#pragma once
#include <fmt/format.h>
#include <optional>
#include <string>
#include <vector>

#include "harness.h"
#include "ops.h"
#include "push.h"
#include "reference/reference.h"

namespace vkllm::test {

struct AttentionCase {
  uint32_t n_q = 1, n_kv = 1, heads = 1, kv_heads = 1, dk = 64, dv = 64;
  bool f16 = true, causal = true;
  uint32_t window = 0;
  float softcap = 0;                // > 0: scores soft-capped (gemma2)
  uint32_t splits = 0;              // force this split count (0: planned)
  uint32_t br = 0, bc = 0, wg = 0;  // force this tile (0: planned); a plan made for another device
  uint32_t max_kv = 0;              // cache capacity (0: n_kv)
  int pos0 = -1;                    // position of the first query (-1: n_kv - n_q, or 0 when negative)
  bool mla_view = false;            // V is the first dv elements of each K row: one buffer, row stride dk
  bool naive = false;               // run the naive baseline instead
  DType quant = DType::F32;         // Q8_0 / Q4_0: K/V stored quantised (then f16 is ignored)
  bool sinks = false;               // one attention-sink logit per head (gpt-oss)

  DType kv_type() const { return quant != DType::F32 ? quant : f16 ? DType::F16 : DType::F32; }

  uint32_t capacity() const { return max_kv ? max_kv : std::max(n_kv, 1u); }
  uint32_t first_pos() const { return pos0 >= 0 ? uint32_t(pos0) : (n_kv >= n_q ? n_kv - n_q : 0); }
  ops::AttentionShape shape() const {
    ops::AttentionShape sh{.n_q = n_q,
                           .n_heads = heads,
                           .n_kv_heads = kv_heads,
                           .dk = dk,
                           .dv = dv,
                           .kv_type = kv_type(),
                           .causal = causal,
                           .window = window,
                           .softcap = softcap,
                           .max_kv = capacity(),
                           .force_splits = splits,
                           .force_br = br,
                           .force_bc = bc,
                           .force_wg = wg};
    if (mla_view) sh.v_head_stride = capacity() * dk, sh.v_row_stride = dk;
    return sh;
  }
  std::string describe() const {
    return fmt::format("q={} kv={} heads={}/{} d={}/{} {}{}{}{}{}{}{}{}{}", n_q, n_kv, heads, kv_heads, dk, dv,
                       info(kv_type()).name, causal ? " causal" : "", window ? fmt::format(" window={}", window) : "",
                       softcap ? fmt::format(" softcap={}", softcap) : "",
                       splits ? fmt::format(" splits={}", splits) : "",
                       br ? fmt::format(" tile={}x{}/{}", br, bc, wg) : "", mla_view ? " mla-view" : "",
                       naive ? " naive" : "", sinks ? " sinks" : "");
  }
};

class AttentionRun {
 public:
  explicit AttentionRun(const AttentionCase& c, uint32_t seed = 1) : c_(c) {
    uint32_t cap = c.capacity();
    q_ = random_floats(size_t(c.n_q) * c.heads * c.dk, seed, -2, 2);
    k_ = random_floats(size_t(c.kv_heads) * cap * c.dk, seed + 1, -1, 1);
    if (!c.mla_view) v_ = random_floats(size_t(c.kv_heads) * cap * c.dv, seed + 2, -1, 1);
    // Sinks from well below to well above the scores (|q·k|·scale is O(1) here).
    if (c.sinks) sinks_ = random_floats(c.heads, seed + 3, -3, 4);
    // The reference sees the values the cache stores: f16-rounded, or quantised and read back.
    ref::round_trip(c.kv_type(), k_.data(), k_.size());
    ref::round_trip(c.kv_type(), v_.data(), v_.size());
    shape_ = c.shape();
    Context& ctx = gpu();
    gq_.emplace(to_gpu(q_, "q"));
    gk_.emplace(upload_kv(k_, "k", c.dk));
    if (!c.mla_view) gv_.emplace(upload_kv(v_, "v", c.dv));
    if (c.sinks) gsinks_.emplace(to_gpu(sinks_, "sinks"));
    go_.emplace(ctx, size_t(c.n_q) * c.heads * c.dv * 4, Memory::Device, "o");
    step_.emplace(ctx, sizeof(push::StepParams), Memory::Host, "step");
    uint64_t scratch = c.naive ? ops::attention_naive_scratch_bytes(shape_) : ops::attention_scratch_bytes(ctx, shape_);
    if (scratch) scratch_.emplace(ctx, scratch, Memory::Device, "scratch");
    if (scratch && !c.naive) ops::clear_attention_scratch(ctx, *scratch_);
    set_step(c.first_pos(), c.n_kv);
  }

  const ops::AttentionShape& shape() const { return shape_; }

  void record(Stream& s) const {
    BufferView k = *gk_, v = c_.mla_view ? k : BufferView(*gv_),
               scratch = scratch_ ? BufferView(*scratch_) : BufferView{},
               sinks = gsinks_ ? BufferView(*gsinks_) : BufferView{};
    if (c_.naive)
      ops::attention_naive(s, shape_, *gq_, k, v, *step_, *go_, scratch, sinks);
    else
      ops::attention(s, shape_, *gq_, k, v, *step_, *go_, scratch, sinks);
  }

  void set_step(uint32_t pos0, uint32_t n_kv) {
    pos0_ = pos0, n_kv_ = n_kv;
    push::StepParams p{.pos0 = pos0, .n_tokens = c_.n_q, .n_kv = n_kv};
    step_->upload(&p, sizeof(p));
  }

  std::vector<float> output() const { return from_gpu(*go_); }

  std::vector<float> expected() const {
    uint32_t cap = c_.capacity();
    ref::AttentionParams a{.n_q = c_.n_q,
                           .n_heads = c_.heads,
                           .n_kv_heads = c_.kv_heads,
                           .dk = c_.dk,
                           .dv = c_.dv,
                           .q_row_stride = size_t(c_.heads) * c_.dk,
                           .o_row_stride = size_t(c_.heads) * c_.dv,
                           .k_head_stride = size_t(cap) * c_.dk,
                           .k_row_stride = c_.dk,
                           .v_head_stride = size_t(cap) * c_.dv,
                           .v_row_stride = c_.dv,
                           .scale = 1.0 / std::sqrt(double(c_.dk)),
                           .softcap = c_.softcap,
                           .causal = c_.causal,
                           .window = c_.window,
                           .pos0 = pos0_,
                           .n_kv = n_kv_,
                           .sinks = c_.sinks ? sinks_.data() : nullptr};
    if (c_.mla_view) a.v_head_stride = size_t(cap) * c_.dk, a.v_row_stride = c_.dk;
    std::vector<float> o(size_t(c_.n_q) * c_.heads * c_.dv);
    ref::attention(o.data(), q_.data(), k_.data(), c_.mla_view ? k_.data() : v_.data(), a);
    return o;
  }

 private:
  // Rows of `width` values (quantised types: whole blocks) in the case's KV type.
  Buffer upload_kv(const std::vector<float>& x, const char* name, size_t width) const {
    std::vector<uint8_t> bytes = ref::quantize(c_.kv_type(), x.data(), x.size() / width, width);
    Buffer b(gpu(), std::max<size_t>(bytes.size(), 4), Memory::Device, name);
    b.upload(bytes.data(), bytes.size());
    return b;
  }

  AttentionCase c_;
  ops::AttentionShape shape_;
  std::vector<float> q_, k_, v_, sinks_;
  std::optional<Buffer> gq_, gk_, gv_, go_, step_, scratch_, gsinks_;
  uint32_t pos0_ = 0, n_kv_ = 0;
};

// Runs the case once and checks it against the reference: NMSE <= bound, printed.
inline void check_attention(const AttentionCase& c, double bound, const std::string& tag = "") {
  AttentionRun run(c);
  Stream s(gpu());
  run.record(s);
  s.submit_wait();
  auto want = run.expected();
  check_nmse(run.output(), want, bound, c.describe() + tag);
}

}  // namespace vkllm::test
