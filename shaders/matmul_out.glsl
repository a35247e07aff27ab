// Where a weight-matrix kernel stores result (batch, token n, row m): y's layout, or one of the
// planar parts of a product over several matrices stored back to back (push_matmul.h). Included
// after the push block `p`.

uint y_index(uint batch, uint n, uint m) {
  if (m >= p.split2) return p.part2_offset + n * (p.M - p.split2) + m - p.split2;
  if (m >= p.split1) return p.part1_offset + n * (p.split2 - p.split1) + m - p.split1;
  return batch * p.y_batch_stride + n * p.y_row_stride + m;
}
