// Push constants of the elementwise and row kernels (included by push.h; plain structs only).

// y[i] = a[i] (op) b[i % nb], i < n (add, mul). nb = n: elementwise; nb = dim: b(dim) is broadcast
// over the rows of a(rows, dim) (biases, norm weights).
struct BinaryPush {
  uint n;
  uint nb;
};

// y[i] = f(x[i]) or f(gate[i], up[i]), i < n (gelu, swiglu).
struct UnaryPush {
  uint n;
};

// y[i] = x[i] * s, i < n (scale, softcap's cap); y[i] = a[i] + b[i] * s (add_scaled)
struct ScalePush {
  uint n;
  float s;
};

// Row norms over x(rows, dim): rmsnorm and layernorm.
struct NormPush {
  uint rows;
  uint dim;
  float eps;
  uint no_weight;  // rmsnorm: 1 multiplies by no weight (gemma4's norm of V)
  uint w_rows;     // rmsnorm: w holds w_rows rows of dim, row r normed by w's row r % w_rows (0: one)
};

// y[r, :] = softmax(scale * x[r, :]), r < rows
struct SoftmaxPush {
  uint rows;
  uint cols;
  float scale;
};

// Per row of x(rows, cols): the index of the largest value (argmax), or the k largest (topk).
struct SelectPush {
  uint rows;
  uint cols;
  uint k;
};

// swiglu_oai: y = g * sigmoid(alpha * g) * (u + 1), g = min(gate, limit), u = clamp(up, +-limit).
struct SwigluOaiPush {
  uint n;
  float alpha;
  float limit;
};
