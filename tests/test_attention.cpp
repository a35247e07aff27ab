// ops::attention (flash, prefill and split-K decode) vs ref::attention over a covering design:
// every listed q_len, kv_len, head grouping and head dim appears, with head dim x K/V type,
// grouping x causal and q_len x kv_len crossed in full, MLA 576/512 on the decode path, masks,
// graph replay with a new step, and every profile's tile plan. NMSE is printed for each case.
#include <fmt/format.h>

#include "attention_case.h"
#include "catch.h"
#include "error.h"

using namespace vkllm;
using test::AttentionCase;

namespace {

// f32 K/V: f32 arithmetic against double over reductions of up to 1500 keys and 576 dims.
constexpr double kBoundF32 = 1e-10;
// f16 K/V: the reference sees the same f16-rounded values, so only arithmetic differs.
constexpr double kBoundF16 = 1e-10;

double bound(const AttentionCase& c) { return c.kv_type() == DType::F16 ? kBoundF16 : kBoundF32; }

}  // namespace

TEST_CASE("flash attention every head dim with f16 and f32 K/V", "[attention]") {
  const uint32_t dims[] = {64, 80, 96, 112, 128, 192, 256};
  int i = 0;
  for (uint32_t d : dims)
    for (bool f16 : {true, false}) {
      AttentionCase c{.n_q = i % 2 ? 7u : 64u,
                      .n_kv = i % 3 ? 64u : 333u,
                      .heads = 8,
                      .kv_heads = 2,
                      .dk = d,
                      .dv = d,
                      .f16 = f16,
                      .causal = i % 2 == 0};
      test::check_attention(c, bound(c));
      ++i;
    }
}

TEST_CASE("flash attention head groupings MHA GQA MQA with and without causal mask", "[attention]") {
  struct Heads {
    uint32_t h, g;
  };
  const Heads groupings[] = {{8, 8}, {8, 2}, {8, 1}, {6, 3}, {16, 1}};
  const uint32_t q_lens[] = {2, 7, 64, 1, 200}, kv_lens[] = {5, 64, 333, 1500, 64};
  int i = 0;
  for (Heads hg : groupings)
    for (bool causal : {false, true}) {
      AttentionCase c{.n_q = q_lens[i % 5],
                      .n_kv = kv_lens[(i + causal) % 5],
                      .heads = hg.h,
                      .kv_heads = hg.g,
                      .dk = 64,
                      .dv = 64,
                      .f16 = i % 3 != 0,
                      .causal = causal};
      test::check_attention(c, bound(c));
      ++i;
    }
}

TEST_CASE("flash attention every q_len against every kv_len", "[attention]") {
  const uint32_t q_lens[] = {1, 2, 7, 64, 200}, kv_lens[] = {1, 5, 64, 333, 1500};
  int i = 0;
  for (uint32_t q : q_lens)
    for (uint32_t kv : kv_lens) {
      // Causal prefill where the cache holds the queries' own keys; keys only (no mask) otherwise.
      AttentionCase c{.n_q = q,
                      .n_kv = kv,
                      .heads = 4,
                      .kv_heads = i % 2 ? 1u : 4u,
                      .dk = i % 2 ? 80u : 64u,
                      .dv = i % 2 ? 80u : 64u,
                      .f16 = i % 4 < 2,
                      .causal = i % 3 != 1};
      test::check_attention(c, bound(c));
      ++i;
    }
}

TEST_CASE("flash attention MLA decode 576/512 with V a view of K", "[attention]") {
  for (uint32_t q : {1u, 7u})
    for (uint32_t kv : {333u, 1500u}) {
      AttentionCase c{.n_q = q, .n_kv = kv, .heads = 16, .kv_heads = 1, .dk = 576, .dv = 512, .mla_view = true};
      test::check_attention(c, bound(c));
    }
  AttentionCase f32{.n_q = 1,
                    .n_kv = 333,
                    .heads = 16,
                    .kv_heads = 1,
                    .dk = 576,
                    .dv = 512,
                    .f16 = false,
                    .splits = 3,
                    .mla_view = true};
  test::check_attention(f32, bound(f32));
  // Separate K and V buffers with different dims (no view).
  AttentionCase kv{.n_q = 2, .n_kv = 100, .heads = 16, .kv_heads = 1, .dk = 576, .dv = 512};
  test::check_attention(kv, bound(kv));
}

TEST_CASE("flash attention split-K decode replays with new step values", "[attention]") {
  // Recorded once with capacity 600 and 7 splits, replayed for growing caches: splits past the
  // runtime n_kv are empty and the merge pass must ignore them.
  AttentionCase c{.n_q = 1, .n_kv = 1, .heads = 8, .kv_heads = 2, .dk = 128, .dv = 128, .splits = 7, .max_kv = 600};
  test::AttentionRun run(c);
  Stream s(test::gpu());
  run.record(s);
  for (uint32_t n_kv : {1u, 2u, 37u, 300u, 600u}) {
    run.set_step(n_kv - 1, n_kv);
    s.submit_wait();
    test::check_nmse(run.output(), run.expected(), kBoundF16, fmt::format("replay n_kv={} {}", n_kv, c.describe()));
  }
}

TEST_CASE("flash attention sliding window and rows with no visible key", "[attention]") {
  const AttentionCase cases[] = {
      {.n_q = 64, .n_kv = 200, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .window = 16},
      {.n_q = 7, .n_kv = 300, .heads = 4, .kv_heads = 4, .dk = 96, .dv = 96, .f16 = false, .window = 50},
      {.n_q = 1, .n_kv = 1500, .heads = 8, .kv_heads = 1, .dk = 64, .dv = 64, .window = 100, .splits = 5},
      {.n_q = 5, .n_kv = 40, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .causal = false, .window = 8},
      // Queries at positions 100.. over a cache of 50 keys with a window of 20: nothing visible.
      {.n_q = 3, .n_kv = 50, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .window = 20, .pos0 = 100},
      {.n_q = 3, .n_kv = 50, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .window = 20, .splits = 4, .pos0 = 100},
      // An empty cache (n_kv = 0), prefill and split.
      {.n_q = 2, .n_kv = 0, .heads = 2, .kv_heads = 2, .dk = 64, .dv = 64, .causal = false, .max_kv = 16},
      {.n_q = 1, .n_kv = 0, .heads = 2, .kv_heads = 2, .dk = 64, .dv = 64, .splits = 3, .max_kv = 16},
  };
  for (const AttentionCase& c : cases) test::check_attention(c, bound(c));
}

// Gemma 2's soft-cap (cap·tanh(s / cap) before the mask) with the causal and window masks, prefill
// and split-K decode; a small cap so tanh bends every score, and 50 as the models use.
TEST_CASE("flash attention soft-cap with causal and window masks", "[attention]") {
  const AttentionCase cases[] = {
      {.n_q = 37, .n_kv = 37, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .softcap = 1.0f},
      {.n_q = 20,
       .n_kv = 90,
       .heads = 2,
       .kv_heads = 1,
       .dk = 96,
       .dv = 96,
       .f16 = false,
       .window = 30,
       .softcap = 2.0f},
      {.n_q = 1,
       .n_kv = 700,
       .heads = 8,
       .kv_heads = 2,
       .dk = 64,
       .dv = 64,
       .window = 100,
       .softcap = 50.0f,
       .splits = 3},
      {.n_q = 5, .n_kv = 40, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .causal = false, .softcap = 0.5f},
  };
  for (const AttentionCase& c : cases) test::check_attention(c, bound(c));
  test::for_each_profile([&](const Profile& profile) {
    AttentionCase c{.n_q = 9, .n_kv = 60, .heads = 4, .kv_heads = 4, .dk = 64, .dv = 64, .window = 7, .softcap = 3.0f};
    test::check_attention(c, bound(c), " profile=" + profile.name);
  });
}

TEST_CASE("flash attention over a cache longer than lavapipe lets one workgroup loop", "[attention]") {
  // 40000 keys in one workgroup would pass lavapipe's loop iteration limit (DeviceCaps); the
  // planner must split the keys even when one split is asked for.
  AttentionCase c{.n_q = 1, .n_kv = 40000, .heads = 1, .kv_heads = 1, .dk = 64, .dv = 64, .splits = 1};
  ops::AttentionPlan plan = ops::attention_plan(test::gpu(), c.shape());
  if (test::gpu().caps().loop_iteration_limit) CHECK(plan.splits > 1);
  test::check_attention(c, bound(c), fmt::format(" (planned splits {})", plan.splits));
}

TEST_CASE("flash attention plans no split-K when one tile holds every key a replay sees", "[attention]") {
  test::for_each_profile([&](const Profile& profile) {
    ops::AttentionShape sh{.n_q = 1, .n_heads = 9, .n_kv_heads = 3, .dk = 64, .dv = 64, .max_kv = 8192};
    ops::AttentionPlan wide = ops::attention_plan(test::gpu(), sh);
    CHECK(wide.splits > 1);  // decode over a long cache: split-K on every profile
    sh.plan_kv = wide.bc;
    ops::AttentionPlan one_tile = ops::attention_plan(test::gpu(), sh);
    INFO("profile " << profile.name << " bc " << one_tile.bc);
    CHECK(one_tile.splits == 1);
    CHECK(one_tile.bc == wide.bc);
  });
}

TEST_CASE("flash attention under every profile", "[attention]") {
  const AttentionCase cases[] = {
      {.n_q = 33, .n_kv = 70, .heads = 6, .kv_heads = 3, .dk = 80, .dv = 80},
      {.n_q = 1, .n_kv = 300, .heads = 8, .kv_heads = 1, .dk = 128, .dv = 128, .f16 = false, .splits = 3},
  };
  test::for_each_profile([&](const Profile& profile) {
    for (const AttentionCase& c : cases) {
      ops::AttentionPlan plan = ops::attention_plan(test::gpu(), c.shape());
      test::check_attention(
          c, bound(c),
          fmt::format(" profile={} br={} bc={} wg={} splits={}", profile.name, plan.br, plan.bc, plan.wg, plan.splits));
    }
  });
}

TEST_CASE("flash attention on workgroups narrower than the subgroup", "[attention]") {
  // A profile may give attention fewer threads than the device's subgroups hold (llvmpipe's 16 on
  // NVIDIA's 32): the subgroup softmax must then count the invocations it has, not the subgroup
  // size (it read past them, NMSE 1e60 on the H200). Here: half and a quarter of the subgroup.
  const DeviceCaps& caps = test::gpu().caps();
  for (uint32_t wg : {caps.subgroup_size / 2, caps.subgroup_size / 4}) {
    if (wg < 2) continue;  // one thread cannot hold a 4-row tile's accumulators (subgroups of 4)
    AttentionCase prefill{
        .n_q = 9, .n_kv = 100, .heads = 8, .kv_heads = 2, .dk = 32, .dv = 32, .br = 4, .bc = 32, .wg = wg};
    test::check_attention(prefill, bound(prefill), fmt::format(" subgroup={}", caps.subgroup_size));
    AttentionCase decode = prefill;
    decode.n_q = 1, decode.splits = 2;
    test::check_attention(decode, bound(decode), fmt::format(" subgroup={}", caps.subgroup_size));
  }
}

TEST_CASE("flash attention reads q8_0 and q4_0 K/V tiles", "[attention][kv_quant]") {
  // The reference attends over the same dequantised values, so the bound stays that of f32.
  const AttentionCase cases[] = {
      {.n_q = 37, .n_kv = 100, .heads = 8, .kv_heads = 2, .dk = 64, .dv = 64},                   // GQA prefill
      {.n_q = 5, .n_kv = 70, .heads = 4, .kv_heads = 4, .dk = 128, .dv = 128, .causal = false},  // MHA
      {.n_q = 1, .n_kv = 600, .heads = 8, .kv_heads = 1, .dk = 128, .dv = 128, .splits = 3},     // MQA split-K
      {.n_q = 1, .n_kv = 300, .heads = 4, .kv_heads = 1, .dk = 96, .dv = 64, .splits = 2, .mla_view = true},
      {.n_q = 3, .n_kv = 200, .heads = 4, .kv_heads = 1, .dk = 576, .dv = 512, .mla_view = true},  // MLA latent
      {.n_q = 7, .n_kv = 90, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .window = 20, .softcap = 3.0f},  // gemma2
  };
  int i = 0;
  for (AttentionCase c : cases)
    for (DType t : {DType::Q8_0, DType::Q4_0}) {
      c.quant = t;
      if (i++ % 2) c.max_kv = c.n_kv + 32;  // a cache longer than the keys in use
      test::check_attention(c, kBoundF32);
    }
  test::for_each_profile([&](const Profile& profile) {
    AttentionCase c{.n_q = 9, .n_kv = 90, .heads = 6, .kv_heads = 3, .dk = 64, .dv = 64, .quant = DType::Q4_0};
    test::check_attention(c, kBoundF32, " profile=" + profile.name);
  });
}

TEST_CASE("naive attention matches the reference", "[attention]") {
  const AttentionCase cases[] = {
      {.n_q = 7, .n_kv = 333, .heads = 8, .kv_heads = 2, .dk = 64, .dv = 64, .naive = true},
      {.n_q = 64,
       .n_kv = 64,
       .heads = 6,
       .kv_heads = 3,
       .dk = 80,
       .dv = 80,
       .f16 = false,
       .causal = false,
       .naive = true},
      {.n_q = 1, .n_kv = 200, .heads = 16, .kv_heads = 1, .dk = 576, .dv = 512, .mla_view = true, .naive = true},
      {.n_q = 3, .n_kv = 50, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .window = 20, .pos0 = 100, .naive = true},
  };
  for (const AttentionCase& c : cases) test::check_attention(c, bound(c));
}

// gpt-oss's attention sinks: one logit per head joins the softmax denominator and weighs no
// value. Prefill tiles, split-K decode (the sink enters once, in split 0), windows, rows that see
// no key (the output is 0, not the sink's weight of nothing), the naive path and every profile.
TEST_CASE("flash attention with attention sinks", "[attention][sinks]") {
  const AttentionCase cases[] = {
      {.n_q = 37, .n_kv = 37, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .sinks = true},
      {.n_q = 64,
       .n_kv = 200,
       .heads = 8,
       .kv_heads = 1,
       .dk = 64,
       .dv = 64,
       .f16 = false,
       .window = 16,
       .sinks = true},
      {.n_q = 1, .n_kv = 700, .heads = 8, .kv_heads = 2, .dk = 64, .dv = 64, .splits = 5, .sinks = true},
      {.n_q = 1,
       .n_kv = 300,
       .heads = 4,
       .kv_heads = 4,
       .dk = 128,
       .dv = 128,
       .window = 128,
       .splits = 3,
       .sinks = true},
      {.n_q = 3, .n_kv = 50, .heads = 2, .kv_heads = 1, .dk = 64, .dv = 64, .window = 20, .pos0 = 100, .sinks = true},
      {.n_q = 1, .n_kv = 1, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .splits = 3, .max_kv = 64, .sinks = true},
      {.n_q = 7, .n_kv = 90, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .quant = DType::Q8_0, .sinks = true},
      {.n_q = 7, .n_kv = 333, .heads = 8, .kv_heads = 2, .dk = 64, .dv = 64, .naive = true, .sinks = true},
  };
  for (const AttentionCase& c : cases) test::check_attention(c, bound(c));
  test::for_each_profile([&](const Profile& profile) {
    AttentionCase c{.n_q = 9, .n_kv = 60, .heads = 4, .kv_heads = 2, .dk = 64, .dv = 64, .window = 7, .sinks = true};
    test::check_attention(c, bound(c), " profile=" + profile.name);
  });
}

TEST_CASE("attention rejects bad shapes with a clear error", "[attention]") {
  Context& ctx = test::gpu();
  Buffer small(ctx, 1024, Memory::Device, "small");
  Stream s(ctx);
  ops::AttentionShape bad_groups{.n_heads = 6, .n_kv_heads = 4, .dk = 8, .dv = 8, .max_kv = 4};
  CHECK_THROWS_AS(ops::attention(s, bad_groups, small, small, small, small, small, {}), Error);
  ops::AttentionShape too_big_k{.n_heads = 1, .n_kv_heads = 1, .dk = 64, .dv = 64, .max_kv = 100};
  CHECK_THROWS_AS(ops::attention(s, too_big_k, small, small, small, small, small, {}), Error);
  ops::AttentionShape odd_dim{.n_heads = 1, .n_kv_heads = 1, .dk = 7, .dv = 8, .max_kv = 4};
  CHECK_THROWS_AS(ops::attention(s, odd_dim, small, small, small, small, small, {}), Error);
  ops::AttentionShape q8_48{.n_heads = 1, .n_kv_heads = 1, .dk = 48, .dv = 48, .kv_type = DType::Q8_0, .max_kv = 4};
  CHECK_THROWS_WITH(ops::attention(s, q8_48, small, small, small, small, small, {}),
                    Catch::Contains("q8_0 K/V need head dims and K/V strides that are multiples of 32"));
  // The naive score matrix for 8 heads x 8192 x 8192 is 2 GiB: more than one binding can hold.
  ops::AttentionShape huge{.n_q = 8192, .n_heads = 8, .n_kv_heads = 8, .dk = 128, .dv = 128, .max_kv = 8192};
  if (ops::attention_naive_scratch_bytes(huge) > ctx.caps().max_storage_buffer_range)
    CHECK_THROWS_AS(ops::attention_naive(s, huge, small, small, small, small, small, small), Error);
}
