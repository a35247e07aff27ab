// Push constants of the strided copy (included by push.h; plain structs only).

// dst[r·dst_row_stride + c·dst_col_stride + dst_offset + i] = src[r·src_row_stride + c·src_col_stride + src_offset + i]
// for r < rows, c < cols, i < len (all in floats): moves (token, head) slices between layouts.
struct CopyPush {
  uint rows;
  uint cols;
  uint len;
  uint src_row_stride;
  uint src_col_stride;
  uint src_offset;
  uint dst_row_stride;
  uint dst_col_stride;
  uint dst_offset;
};

// dst[i] = src[i] for i < n_words 16-byte words (copy_words.comp: the bandwidth yardstick).
struct CopyWordsPush {
  uint n_words;
};
