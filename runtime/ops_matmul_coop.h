// The prefill matrix products on cooperative matrices (shaders/matmul_coop.glsl, runtime/coopmat.h):
// the kernel table, the tile choice, the dispatches ops::matmul and ops::matmul_id make for them,
// and the self-check each pipeline passes the first time a device uses it. Those two pick these
// kernels by themselves where they can; these are their parts, public for tests and vkllm-bench.
#pragma once
#include <functional>
#include <optional>

#include "buffer.h"
#include "coopmat.h"
#include "dtype.h"
#include "ops_moe.h"
#include "push.h"
#include "stream.h"

namespace vkllm::ops {

// Whether a weight type has a cooperative-matrix kernel: every type matmul reads but f32, which
// stays on the exact f32 kernel (its products are what the llama.cpp agreement holds to 1e-6).
bool coop_supports(DType type);

// The threads and shared bytes of a tile for this shape and subgroup size, and whether the tile
// is well formed (subgroup tiles of whole matrices, loads that divide over the threads).
struct CoopTileNeeds {
  bool valid = false;
  uint32_t threads = 0, shared_bytes = 0;
};
CoopTileNeeds coop_tile_needs(const CoopTile& t, const CoopShape& shape, uint32_t subgroup, DType type);

// The tile an M x N product takes under this profile (coop_tile, or coop_tile_small where the
// big one would make fewer than coop_fill_wgs workgroups), or nothing where neither fits the
// device (shared memory, invocations) and the plan's shape.
std::optional<CoopTile> coop_tile_for(const DeviceCaps& caps, const Profile& p, const CoopPlan& plan, DType type,
                                      uint32_t M, uint32_t N);

// Where ops::matmul runs an M x N product (N past matmul_tiled_min_n) on cooperative matrices:
// the device has a plan, the profile uses it, the type has a kernel, a tile fits, and that
// pipeline's self-check passed, run now (synchronously, on its own stream) on its first use.
std::optional<CoopTile> coop_choice(const Context& ctx, DType type, uint32_t M, uint32_t N);

// The same for ops::matmul_id's tiled plans of `pairs` pairs a tile: the first of the profile's
// tiles that takes that many tokens (the tiled matmul_id's matmul_bn) and fits, checked.
std::optional<CoopTile> coop_id_choice(const Context& ctx, DType type, uint32_t pairs);

// Records the product by the cooperative-matrix kernel: w from the first row (its size may run
// past the rows), bias empty for none; the arguments as ops_matmul.cpp has checked them.
void dispatch_coop(Stream& s, DType type, const CoopTile& tile, BufferView w, BufferView x, BufferView y,
                   BufferView bias, const push::MatmulPush& pc, uint32_t B, bool accumulate);
// Records expert products (matmul_id's bindings, push constants and `tiles` plan tiles, as
// ops_moe.cpp has checked them) on the cooperative-matrix kernel; x_vec4: x rows 16-byte aligned.
void dispatch_coop_id(Stream& s, DType type, const CoopTile& tile, const Bindings& b, const push::MatmulIdPush& pc,
                      uint32_t tiles, bool x_vec4);

// The self-check. `candidate` and the tiled f32 kernel compute one small product of `type`
// (partial tiles in M and N, weights whose every scale decodes to a moderate value); the
// candidate is kept when its NMSE against the tiled kernel is at most 1e-5 (docs/design.md's
// bound through f16) and it adds no NaN or infinity, and turned off otherwise, also when
// creating or running it throws. The verdict is stored in ctx.coop_checks() under (op, type,
// tile), where the choices read it: tests substitute candidates, a device checks the real kernel.
using CoopCandidate =
    std::function<void(Stream& s, BufferView w, BufferView x, BufferView y, uint32_t M, uint32_t N, uint32_t K)>;
const CoopCheck& check_coop(const Context& ctx, DType type, const CoopTile& tile, const CoopCandidate& candidate);
// The same for expert products: a tiled plan of 2·bn tokens, 2 of 3 experts each, against the
// tiled matmul_id (the tile's bn must be the profile's matmul_bn, the pairs of a plan tile).
using CoopIdCandidate = std::function<void(Stream& s, const ExpertPlan& plan, BufferView w, BufferView x,
                                           BufferView plan_buf, BufferView y, uint32_t M, uint32_t K)>;
const CoopCheck& check_coop_id(const Context& ctx, DType type, const CoopTile& tile, const CoopIdCandidate& candidate);
// The check of the real kernel (dispatch_coop or dispatch_coop_id with this tile), unless it has
// run already.
const CoopCheck& ensure_coop_checked(const Context& ctx, CoopOp op, DType type, const CoopTile& tile);
// Checks every pipeline ops::matmul and ops::matmul_id may use on this device: each weight type
// with a kernel under each of the profile's two tiles that fits (matmul_id: those of matmul_bn
// tokens), what `vkllm devices` reports. Nothing without a plan.
void check_all_coop(const Context& ctx);
// The weights a check multiplies: `bytes` of `type` whose every field decodes to a moderate finite
// value (public so a test can hold the reference's decoding of them to that).
std::vector<uint8_t> coop_check_weights(DType type, uint64_t bytes);

}  // namespace vkllm::ops
