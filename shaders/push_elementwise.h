// Push constants of the elementwise and row kernels (included by push.h; plain structs only).

// y[i] = a[i] + b[i], i < n
struct AddPush {
  uint n;
};

// y[r, :] = x[r, :] / sqrt(mean(x[r, :]^2) + eps) * w, for r < rows
struct RmsnormPush {
  uint rows;
  uint dim;
  float eps;
};
