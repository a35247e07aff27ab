// Multi-head latent attention (DeepSeek-V2/V3), absorbed (docs/formats.md §5.3): the cache holds
// [c ; k_pe] per token; queries move into the latent space (q_lat = Wukᵀ q_nope per head),
// attention runs as MQA over the latent rows (K width kv_lora + rope, V = the first kv_lora
// values), and o = Wuv o_lat per head.
#include "context.h"
#include "graph/blocks.h"
#include "ops.h"

namespace vkllm::blocks {

void latent_attention(const RecordContext& r, const LatentAttentionWeights& w, uint32_t l) {
  const ModelConfig& c = r.c;
  const MlaConfig& m = c.mla;
  const Acts& a = r.acts;
  Stream& s = r.s;
  uint32_t n = r.n, H = c.n_heads, hd = c.head_dim, nope = m.qk_nope_head_dim, rot = m.qk_rope_head_dim;
  uint32_t lat = m.kv_lora_rank, row = lat + rot, vd = m.v_head_dim;
  BufferView x = r.act_rows(a.x, c.dim), h = r.act_rows(a.h, c.dim), q = r.act_rows(a.q, H * hd);
  BufferView kv = r.act_rows(a.kv, row), cl = r.act_rows(a.c, lat), kpe = r.act_rows(a.kpe, rot);
  BufferView qpe = r.act_rows(a.qpe, H * rot), qcat = r.act_rows(a.qcat, H * row), olat = r.act_rows(a.olat, H * lat);
  BufferView o = r.act_rows(a.attn, H * vd), rows = r.kv_rows();

  ops::rmsnorm(s, x, w.norm->view, h, n, c.dim, c.norm_eps);
  r.tap(int(l), "attn_norm", h, n, c.dim);
  if (m.q_lora_rank) {
    BufferView qa = r.act_rows(a.qa, m.q_lora_rank);
    project(r, *w.q_a, h, qa, n);
    ops::rmsnorm(s, qa, w.q_a_norm->view, qa, n, m.q_lora_rank, c.norm_eps);
    project(r, *w.q_b, qa, q, n);
  } else {
    project(r, *w.q, h, q, n);
  }
  // The latent row: normalised c and the roped k_pe, stored side by side in the cache.
  project(r, *w.kv_a, h, kv, n);
  ops::copy_strided(s, kv, cl, {.rows = n, .cols = 1, .len = lat, .src_row_stride = row, .dst_row_stride = lat});
  ops::copy_strided(
      s, kv, kpe, {.rows = n, .cols = 1, .len = rot, .src_row_stride = row, .src_offset = lat, .dst_row_stride = rot});
  ops::rmsnorm(s, cl, w.kv_a_norm->view, cl, n, lat, c.norm_eps);
  rope(r, kpe, 1, rot, rot, l);
  DType kv_type = r.cache.type();
  ops::kv_store(s, cl, rows, r.cache.k(l),
                {.n_tokens = n,
                 .n_kv_heads = 1,
                 .head_dim = lat,
                 .n_ctx = r.cache.rows(),
                 .cache_type = kv_type,
                 .cache_head_dim = row});
  ops::kv_store(s, kpe, rows, r.cache.k(l),
                {.n_tokens = n,
                 .n_kv_heads = 1,
                 .head_dim = rot,
                 .n_ctx = r.cache.rows(),
                 .cache_type = kv_type,
                 .cache_head_dim = row,
                 .cache_col = lat});

  // The absorbed query [Wukᵀ q_nope ; rope(q_pe)] per head.
  ops::copy_strided(s, q, qpe,
                    {.rows = n,
                     .cols = H,
                     .len = rot,
                     .src_row_stride = H * hd,
                     .src_col_stride = hd,
                     .src_offset = nope,
                     .dst_row_stride = H * rot,
                     .dst_col_stride = rot});
  rope(r, qpe, H, rot, H * rot, l);
  ops::matmul(
      s, w.k_b->type, w.k_b->view, q, qcat, lat, n, nope,
      {.count = H, .x_batch_stride = hd, .x_row_stride = H * hd, .y_batch_stride = row, .y_row_stride = H * row});
  ops::copy_strided(s, qpe, qcat,
                    {.rows = n,
                     .cols = H,
                     .len = rot,
                     .src_row_stride = H * rot,
                     .src_col_stride = rot,
                     .dst_row_stride = H * row,
                     .dst_col_stride = row,
                     .dst_offset = lat});

  // MQA over the latent rows: V is the first lat values of each K row (same buffer and strides).
  ops::AttentionShape shape = attention_shape(r, l, 1, row, lat);
  shape.k_head_stride = shape.v_head_stride = r.cache.rows() * row;
  shape.k_row_stride = shape.v_row_stride = row;
  ops::attention(s, shape, qcat, r.cache.k(l), r.cache.v(l), r.step_params(), olat, r.scratch_view());
  capture_probs(r, shape, qcat, r.cache.k(l), l);  // over the latent rows: the numbers of the decompressed form
  ops::matmul(
      s, w.v_b->type, w.v_b->view, olat, o, vd, n, lat,
      {.count = H, .x_batch_stride = lat, .x_row_stride = H * lat, .y_batch_stride = vd, .y_row_stride = H * vd});
  block_output(r, *w.out, nullptr, o, l, "attn_out");
  r.tap(int(l), "ffn_inp", x, n, c.dim);
}

}  // namespace vkllm::blocks
