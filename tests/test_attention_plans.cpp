// Every profile's flash-attention tile plan, planned for the device it is meant for (described in
// device_descriptions.h, since those devices are not here) and pinned to the intended shape; then
// each of those shapes executed here against the reference, at the largest head dim that fits
// lavapipe's shared memory when the real one does not (e.g. nvidia's 32x32 tile, 37,888 B at
// head dim 128, runs at head dim 96).
#include <fmt/format.h>

#include "attention_case.h"
#include "catch.h"
#include "device_descriptions.h"
#include "error.h"

using namespace vkllm;
using test::AttentionCase;

namespace {

struct IntendedPlan {
  const char* profile;
  uint32_t head_dim, br, bc, wg, shared_bytes;
};

// The rule (ops_attention.h): the profile's tile, fewer rows while a thread would keep more than
// 64 output floats, then the larger side halved until the tile fits the device. A prefill of
// 512 tokens over 32/8 heads, so the rows never limit the tile. Bytes: 16·(br·dk/4 + bc·(dk/4|1))
// for Q and the K/V tile, plus 4·(br·(bc+1) + 3·br) for scores and row state.
constexpr IntendedPlan kIntended[] = {
    {"nvidia", 64, 32, 32, 128, 21504},     // 48 KiB
    {"nvidia", 128, 32, 32, 128, 37888},    // the profile's own tile
    {"nvidia", 256, 16, 16, 128, 34304},    // 32x16 and 16x32 both need 51,968 B
    {"amd_rdna", 64, 16, 64, 128, 25856},   // 64 KiB
    {"amd_rdna", 128, 16, 64, 128, 46336},  //
    {"amd_rdna", 256, 16, 32, 128, 51968},  //
    {"amd_gcn", 64, 16, 32, 64, 15104},     // 64 KiB
    {"amd_gcn", 128, 16, 32, 64, 27392},    //
    {"amd_gcn", 256, 16, 32, 64, 51968},    //
    {"intel", 64, 8, 32, 64, 11904},        // 64 KiB
    {"intel", 128, 8, 32, 64, 22144},       //
    {"intel", 256, 8, 32, 64, 42624},       //
    {"generic", 64, 16, 32, 128, 15104},    // lavapipe's 32 KiB
    {"generic", 128, 16, 32, 128, 27392},   //
    {"generic", 256, 16, 8, 128, 25472},    //
    {"llvmpipe", 64, 16, 64, 16, 25856},    // 32 KiB; 16 threads hold fewer rows at wider dims
    {"llvmpipe", 128, 8, 32, 16, 22144},    //
    {"llvmpipe", 256, 4, 16, 16, 21056},    //
};

ops::AttentionShape prefill(uint32_t head_dim) {
  return {.n_q = 512, .n_heads = 32, .n_kv_heads = 8, .dk = head_dim, .dv = head_dim, .max_kv = 512};
}

// Whether the tile fits this device at head dim d (attention_plan throws when it does not).
bool tile_fits(const DeviceCaps& caps, const Profile& prof, const IntendedPlan& p, uint32_t d) {
  ops::AttentionShape sh = prefill(d);
  sh.force_br = p.br, sh.force_bc = p.bc, sh.force_wg = p.wg;
  try {
    ops::attention_plan(caps, prof, sh);
    return true;
  } catch (const Error&) {
    return false;
  }
}

}  // namespace

TEST_CASE("each profile's attention plan at its device's limits is the intended one", "[attention][plan]") {
  for (const IntendedPlan& want : kIntended) {
    DeviceCaps caps = test::device_for_profile(want.profile);
    Profile prof = fit_profile(profile_named(want.profile), caps);
    ops::AttentionPlan got = ops::attention_plan(caps, prof, prefill(want.head_dim));
    INFO(fmt::format("{} on {} at head dim {}: {}x{}/{} {} B", want.profile, caps.name, want.head_dim, got.br, got.bc,
                     got.wg, got.shared_bytes));
    CHECK(got.br == want.br);
    CHECK(got.bc == want.bc);
    CHECK(got.wg == want.wg);
    CHECK(got.shared_bytes == want.shared_bytes);
    CHECK(got.shared_bytes <= caps.max_shared_memory);
    CHECK(got.splits == 1);
  }
}

TEST_CASE("a plan that cannot fit is refused, not shrunk past a forced tile", "[attention][plan]") {
  ops::AttentionShape sh = prefill(128);
  sh.force_br = 32, sh.force_bc = 32, sh.force_wg = 128;
  Profile nvidia = profile_named("nvidia");
  CHECK(ops::attention_plan(test::nvidia_device(), nvidia, sh).shared_bytes == 37888);
  CHECK_THROWS_AS(ops::attention_plan(test::lavapipe_device(), nvidia, sh), Error);
}

// Each intended tile runs here: at its own head dim when that fits, else at the largest smaller
// one (a multiple of 16) that does. A causal GQA prefill of 9 tokens x 4 heads per KV head (36
// rows, more than any br) over 100 keys (several key tiles, the last partial), and a split-K
// decode, both against the reference.
TEST_CASE("each profile's intended tile executes against the reference", "[attention][plan]") {
  const DeviceCaps& here = test::gpu().caps();
  test::for_each_profile([&](const Profile& profile) {
    for (const IntendedPlan& want : kIntended) {
      if (profile.name != want.profile) continue;
      uint32_t d = want.head_dim;
      while (d > 16 && !tile_fits(here, profile, want, d)) d -= 16;
      REQUIRE(tile_fits(here, profile, want, d));
      fmt::print("plan {} head dim {}: {}x{}/{} runs here at head dim {}\n", want.profile, want.head_dim, want.br,
                 want.bc, want.wg, d);
      AttentionCase prefill_case{.n_q = 9,
                                 .n_kv = 100,
                                 .heads = 8,
                                 .kv_heads = 2,
                                 .dk = d,
                                 .dv = d,
                                 .br = want.br,
                                 .bc = want.bc,
                                 .wg = want.wg};
      test::check_attention(prefill_case, 1e-10, " profile=" + profile.name);
      AttentionCase decode_case = prefill_case;
      decode_case.n_q = 1, decode_case.splits = 2;
      test::check_attention(decode_case, 1e-10, " profile=" + profile.name);
    }
  });
}

// Split-K at decode aims at attn_wgs_per_cu workgroups per compute unit where the device reports
// its units (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties), else at the profile's
// attn_target_wgs. Llama-3.1-8B's shape (32/8 heads, head dim 128): one row block per KV head, 8
// workgroups before splitting; 65536 keys allow the most splits (64).
TEST_CASE("decode split-K is sized by the device's compute units where it reports them", "[attention][plan]") {
  ops::AttentionShape decode{.n_q = 1, .n_heads = 32, .n_kv_heads = 8, .dk = 128, .dv = 128, .max_kv = 65536};
  Profile nvidia = profile_named("nvidia");
  DeviceCaps unknown = test::nvidia_device();
  CHECK(attention_target_workgroups(unknown, nvidia) == nvidia.attn_target_wgs);
  CHECK(ops::attention_plan(unknown, nvidia, decode).splits == ceil_div(nvidia.attn_target_wgs, 8));
  DeviceCaps h200 = test::nvidia_device();
  h200.compute_units = 132;  // an H200's SMs
  CHECK(attention_target_workgroups(h200, nvidia) == 132 * nvidia.attn_wgs_per_cu);
  CHECK(ops::attention_plan(h200, nvidia, decode).splits == ceil_div(132 * nvidia.attn_wgs_per_cu, 8));
  DeviceCaps small = test::nvidia_device();
  small.compute_units = 16;
  CHECK(ops::attention_plan(small, nvidia, decode).splits == ceil_div(16 * nvidia.attn_wgs_per_cu, 8));
  Profile wide = nvidia;
  wide.attn_wgs_per_cu = 8;
  CHECK(ops::attention_plan(h200, wide, decode).splits == 64);  // capped
  decode.max_kv = 4096;                                         // at most 4096 / attn_split_min splits
  CHECK(ops::attention_plan(h200, nvidia, decode).splits == 4096 / nvidia.attn_split_min);
}
