// Entry points of the elementwise and row kernels: argument checks, push constants, grids.
#include "ops_elementwise.h"

#include "context.h"
#include "ops_check.h"
#include "push.h"

namespace vkllm::ops {

namespace {

constexpr uint64_t kF32 = 4;

uint64_t elems(uint32_t rows, uint32_t cols) { return uint64_t(rows) * cols; }

// n elements, one thread each: rows * dim must fit the kernels' 32-bit indices.
uint32_t flat(uint32_t rows, uint32_t dim, const char* op) {
  ENSURE(elems(rows, dim) <= UINT32_MAX, fmt::format("{}: {} x {} elements exceed 2^32", op, rows, dim));
  return rows * dim;
}

// y = OP(a, b[i % nb]) for add and mul; nb == n is the elementwise form.
void binary(Stream& s, const spirv::Shader& shader, BufferView a, BufferView b, BufferView y, uint32_t n, uint32_t nb) {
  ensure_holds(a, n * kF32, shader.name, "a");
  ensure_holds(b, nb * kF32, shader.name, "b");
  ensure_holds(y, n * kF32, shader.name, "y");
  ENSURE(nb > 0 || n == 0, fmt::format("{}: broadcast row of length 0", shader.name));
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(shader, {wg}, {.reads = {a, b}, .writes = {y}}, push::BinaryPush{n, nb}, grid(ceil_div(n, wg)));
}

// Row kernels: one workgroup per row, reductions sized by the profile.
void check_rows(BufferView x, BufferView y, uint32_t rows, uint32_t cols, const char* op) {
  ensure_holds(x, elems(rows, cols) * kF32, op, "x");
  ensure_holds(y, elems(rows, cols) * kF32, op, "y");
  ENSURE(cols > 0 || rows == 0, fmt::format("{}: rows of length 0", op));
}

}  // namespace

// --- binary, scale

void add(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n) { binary(s, spirv::add, a, b, y, n, n); }

void add_rows(Stream& s, BufferView x, BufferView b, BufferView y, uint32_t rows, uint32_t dim) {
  binary(s, spirv::add, x, b, y, flat(rows, dim, "add_rows"), dim);
}

void mul(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n) { binary(s, spirv::mul, a, b, y, n, n); }

void mul_rows(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim) {
  binary(s, spirv::mul, x, w, y, flat(rows, dim, "mul_rows"), dim);
}

void scale(Stream& s, BufferView x, BufferView y, uint32_t n, float factor) {
  ensure_holds(x, n * kF32, "scale", "x");
  ensure_holds(y, n * kF32, "scale", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::scale, {wg}, {.reads = {x}, .writes = {y}}, push::ScalePush{n, factor}, grid(ceil_div(n, wg)));
}

void add_scaled(Stream& s, BufferView a, BufferView b, BufferView y, uint32_t n, float factor) {
  ensure_holds(a, n * kF32, "add_scaled", "a");
  ensure_holds(b, n * kF32, "add_scaled", "b");
  ensure_holds(y, n * kF32, "add_scaled", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::add_scaled, {wg}, {.reads = {a, b}, .writes = {y}}, push::ScalePush{n, factor},
             grid(ceil_div(n, wg)));
}

void softcap(Stream& s, BufferView x, BufferView y, uint32_t n, float cap) {
  ensure_holds(x, n * kF32, "softcap", "x");
  ensure_holds(y, n * kF32, "softcap", "y");
  ENSURE(cap > 0, fmt::format("softcap: the cap {} must be positive", cap));
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::softcap, {wg}, {.reads = {x}, .writes = {y}}, push::ScalePush{n, cap}, grid(ceil_div(n, wg)));
}

// --- norms

void rmsnorm(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps) {
  check_rows(x, y, rows, dim, "rmsnorm");
  bool weighted = is_bound(w);
  if (weighted) ensure_holds(w, dim * kF32, "rmsnorm", "w");
  const Profile& p = s.context().profile();
  s.dispatch(spirv::rmsnorm, {p.wg_size, p.subgroup_ops, false}, {.reads = {x, weighted ? w : x}, .writes = {y}},
             push::NormPush{rows, dim, eps, weighted ? 0u : 1u}, grid(rows));
}

void rmsnorm_groups(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t groups, uint32_t width,
                    float eps) {
  ENSURE(groups > 0 && uint64_t(rows) * groups <= UINT32_MAX, "rmsnorm_groups: groups must be positive");
  check_rows(x, y, rows * groups, width, "rmsnorm_groups");
  ensure_holds(w, uint64_t(groups) * width * kF32, "rmsnorm_groups", "w");
  const Profile& p = s.context().profile();
  s.dispatch(spirv::rmsnorm, {p.wg_size, p.subgroup_ops, false}, {.reads = {x, w}, .writes = {y}},
             push::NormPush{rows * groups, width, eps, 0u, groups}, grid(rows * groups));
}

void rmsnorm_add(Stream& s, BufferView x, BufferView w, BufferView y, uint32_t rows, uint32_t dim, float eps) {
  check_rows(x, y, rows, dim, "rmsnorm_add");
  ENSURE(!x.overlaps(y), "rmsnorm_add: y overlaps x");
  ensure_holds(w, dim * kF32, "rmsnorm_add", "w");
  const Profile& p = s.context().profile();
  s.dispatch(spirv::rmsnorm, {p.wg_size, p.subgroup_ops, true}, {.reads = {x, w}, .writes = {y}, .writes_read = {y}},
             push::NormPush{rows, dim, eps, 0u}, grid(rows));
}

void layernorm(Stream& s, BufferView x, BufferView w, BufferView b, BufferView y, uint32_t rows, uint32_t dim,
               float eps) {
  check_rows(x, y, rows, dim, "layernorm");
  ensure_holds(w, dim * kF32, "layernorm", "w");
  bool has_bias = is_bound(b);
  if (has_bias) ensure_holds(b, dim * kF32, "layernorm", "b");
  const Profile& p = s.context().profile();
  // Without a bias the kernel never reads binding 2; w fills it, as every binding must be valid.
  s.dispatch(spirv::layernorm, {p.wg_size, p.subgroup_ops, has_bias},
             {.reads = {x, w, has_bias ? b : w}, .writes = {y}}, push::NormPush{rows, dim, eps}, grid(rows));
}

// --- activations

void swiglu(Stream& s, BufferView gate, BufferView up, BufferView y, uint32_t n) {
  ensure_holds(gate, n * kF32, "swiglu", "gate");
  ensure_holds(up, n * kF32, "swiglu", "up");
  ensure_holds(y, n * kF32, "swiglu", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::swiglu, {wg}, {.reads = {gate, up}, .writes = {y}}, push::UnaryPush{n}, grid(ceil_div(n, wg)));
}

void swiglu_oai(Stream& s, BufferView gate, BufferView up, BufferView y, uint32_t n, float alpha, float limit) {
  ensure_holds(gate, n * kF32, "swiglu_oai", "gate");
  ensure_holds(up, n * kF32, "swiglu_oai", "up");
  ensure_holds(y, n * kF32, "swiglu_oai", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::swiglu_oai, {wg}, {.reads = {gate, up}, .writes = {y}}, push::SwigluOaiPush{n, alpha, limit},
             grid(ceil_div(n, wg)));
}

void gelu(Stream& s, BufferView x, BufferView y, uint32_t n) {
  ensure_holds(x, n * kF32, "gelu", "x");
  ensure_holds(y, n * kF32, "gelu", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::gelu, {wg}, {.reads = {x}, .writes = {y}}, push::UnaryPush{n}, grid(ceil_div(n, wg)));
}

void relu_sqr(Stream& s, BufferView x, BufferView y, uint32_t n) {
  ensure_holds(x, n * kF32, "relu_sqr", "x");
  ensure_holds(y, n * kF32, "relu_sqr", "y");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::relu_sqr, {wg}, {.reads = {x}, .writes = {y}}, push::UnaryPush{n}, grid(ceil_div(n, wg)));
}

// --- softmax and selection

void softmax_rows(Stream& s, BufferView x, BufferView y, uint32_t rows, uint32_t cols, float scale) {
  check_rows(x, y, rows, cols, "softmax_rows");
  const Profile& p = s.context().profile();
  s.dispatch(spirv::softmax, {p.wg_size, p.subgroup_ops}, {.reads = {x}, .writes = {y}},
             push::SoftmaxPush{rows, cols, scale}, grid(rows));
}

void argmax_rows(Stream& s, BufferView x, BufferView idx, uint32_t rows, uint32_t cols) {
  ensure_holds(x, elems(rows, cols) * kF32, "argmax_rows", "x");
  ensure_holds(idx, uint64_t(rows) * 4, "argmax_rows", "idx");
  ENSURE(cols > 0 || rows == 0, "argmax_rows: rows of length 0");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::argmax, {wg}, {.reads = {x}, .writes = {idx}}, push::SelectPush{rows, cols, 1}, grid(rows));
}

void topk_rows(Stream& s, BufferView x, BufferView idx, BufferView val, uint32_t rows, uint32_t cols, uint32_t k) {
  ENSURE(k >= 1 && k <= cols && k <= kTopkMax,
         fmt::format("topk_rows: k = {} must be in 1 .. min(cols = {}, {})", k, cols, kTopkMax));
  ENSURE(cols < (1u << 31), "topk_rows: rows of 2^31 or more values");
  ensure_holds(x, elems(rows, cols) * kF32, "topk_rows", "x");
  ensure_holds(idx, elems(rows, k) * 4, "topk_rows", "idx");
  ensure_holds(val, elems(rows, k) * kF32, "topk_rows", "val");
  uint32_t wg = s.context().profile().wg_size;
  s.dispatch(spirv::topk, {wg}, {.reads = {x}, .writes = {idx, val}}, push::SelectPush{rows, cols, k}, grid(rows));
}

}  // namespace vkllm::ops
