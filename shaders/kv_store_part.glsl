// The copy a kv_store thread serves (KvStorePush): the first (K, or the only one), or past the
// first's threads the second (V). Included after the push block `p` by kv_store.glsl and
// kv_store_quant.glsl.

struct KvPart {
  uint head_dim, src0, src_stride, cache0, cache_head_dim, cache_col;
};

// values: values per thread (1, or a quantised block's 32). g becomes the index within the part;
// it is past the part's threads when there is no such thread (then the caller returns).
KvPart kv_part(inout uint g, uint values) {
  uint first = p.n_tokens * p.n_kv_heads * (p.head_dim / values);
  if (g < first) return KvPart(p.head_dim, 0u, p.src_token_stride, 0u, p.cache_head_dim, p.cache_col);
  g -= first;
  return KvPart(p.head_dim2, p.src_offset2, p.src_token_stride2, p.cache_offset2, p.cache_head_dim2, 0u);
}
