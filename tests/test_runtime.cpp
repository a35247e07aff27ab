// The Vulkan runtime: device choice and its errors, buffer limits, barriers, replay, timestamps.
#include <fmt/format.h>

#include "catch.h"
#include "error.h"
#include "harness.h"
#include "ops.h"
#include "stream.h"

using namespace vkllm;

TEST_CASE("the chosen device is suitable and its caps are sane", "[runtime]") {
  const DeviceCaps& c = test::gpu().caps();
  CHECK(c.problems().empty());
  CHECK(c.subgroup_size >= 1);
  CHECK((c.subgroup_size & (c.subgroup_size - 1)) == 0);
  CHECK(c.max_shared_memory >= 16384);
  CHECK(c.max_storage_buffer_range >= (1u << 27));
  CHECK(c.storage_offset_alignment >= 1);
  fmt::print("device: {} ({}), profile {}\n", c.name, c.type, test::gpu().profile().name);
}

TEST_CASE("a device index out of range is a clear error", "[runtime]") {
  auto make = [] { Context ctx(ContextOptions{.device = 99, .validation = true}); };
  REQUIRE_THROWS_AS(make(), Error);
  REQUIRE_THROWS_WITH(make(), Catch::Contains("device index 99 is out of range"));
}

TEST_CASE("an unknown profile name is a clear error", "[runtime]") {
  REQUIRE_THROWS_WITH(profile_named("voodoo"), Catch::Contains("unknown profile 'voodoo'"));
}

TEST_CASE("every profile fits this device once fitted", "[runtime]") {
  const DeviceCaps& c = test::gpu().caps();
  for (const Profile& p : all_profiles()) {
    Profile f = fit_profile(p, c);
    for (uint32_t wg : {f.wg_size, f.matvec_wg, f.matmul_wg, f.attn_wg}) {
      CHECK(wg <= c.max_workgroup_invocations);
      CHECK((wg & (wg - 1)) == 0);  // tree reductions need powers of two
    }
  }
}

TEST_CASE("buffers respect the device's limits", "[runtime]") {
  Context& ctx = test::gpu();
  uint64_t too_big = ctx.caps().max_memory_allocation + 1;
  REQUIRE_THROWS_WITH(Buffer(ctx, too_big, Memory::Device, "huge"), Catch::Contains("exceeds the device's largest"));
  Buffer b(ctx, 64, Memory::Device, "small");
  REQUIRE_THROWS_WITH(b.view(32, 64), Catch::Contains("outside buffer 'small'"));
}

TEST_CASE("buffers are counted, and one past the memory limit is an out-of-memory error", "[runtime]") {
  Context ctx(ContextOptions{.validation = true, .memory_limit = 1 << 20});
  {
    Buffer a(ctx, 512 << 10, Memory::Device, "a");
    CHECK(ctx.allocated_bytes() >= 512 << 10);
    REQUIRE_THROWS_WITH(Buffer(ctx, 768 << 10, Memory::Device, "too much"),
                        Catch::Contains("out of GPU memory") && Catch::Contains("'too much'"));
    Buffer moved = std::move(a);
    Buffer b(ctx, 256 << 10, Memory::Host, "b");
  }
  CHECK(ctx.allocated_bytes() == 0);
  CHECK(ctx.peak_allocated_bytes() >= 768 << 10);
  Buffer whole(ctx, 1 << 20, Memory::Device, "the whole limit");  // freed memory is available again
}

TEST_CASE("a binding larger than maxStorageBufferRange is refused", "[runtime]") {
  Context& ctx = test::gpu();
  uint64_t range = ctx.caps().max_storage_buffer_range;
  if (range + 4 > ctx.caps().max_memory_allocation) return;  // the device allows any binding it can allocate
  Buffer big(ctx, range + 4, Memory::Device, "big");
  Stream s(ctx);
  REQUIRE_THROWS_WITH(ops::add(s, big, big, big, 1), Catch::Contains("maxStorageBufferRange"));
}

TEST_CASE("dependent dispatches see each other's results (barriers)", "[runtime]") {
  Context& ctx = test::gpu();
  uint32_t n = 4099;
  auto x = test::random_floats(n, 20), b = test::random_floats(n, 21);
  std::vector<float> want = x;
  Buffer gx = test::to_gpu(x), gb = test::to_gpu(b), tmp(ctx, n * 4, Memory::Device, "tmp");
  Stream s(ctx);
  for (int step = 0; step < 6; ++step) {  // x = (x + b) + b through a temporary: RAW, WAR and WAW
    ops::add(s, gx, gb, tmp, n);
    ops::add(s, tmp, gb, gx, n);
    for (uint32_t i = 0; i < n; ++i) want[i] = (want[i] + b[i]) + b[i];
  }
  s.submit_wait();
  test::check_nmse(test::from_gpu(gx), want, 0.0, "chain of 12 dependent adds");
}

TEST_CASE("a recorded stream replays with new inputs", "[runtime]") {
  Context& ctx = test::gpu();
  uint32_t n = 513;
  Buffer ga(ctx, n * 4, Memory::Device, "a"), gb(ctx, n * 4, Memory::Device, "b"), gy(ctx, n * 4, Memory::Device, "y");
  Stream s(ctx);
  ops::add(s, ga, gb, gy, n);
  for (uint32_t seed = 0; seed < 3; ++seed) {
    auto a = test::random_floats(n, 30 + seed), b = test::random_floats(n, 40 + seed);
    ga.upload<float>(a), gb.upload<float>(b);
    s.submit_wait();  // the same command buffer each time
    std::vector<float> want(n);
    for (uint32_t i = 0; i < n; ++i) want[i] = a[i] + b[i];
    test::check_nmse(test::from_gpu(gy), want, 0.0, fmt::format("replay {}", seed));
  }
  CHECK(s.dispatch_count() == 1);
}

TEST_CASE("a profiling stream times every dispatch", "[runtime]") {
  Context& ctx = test::gpu();
  uint32_t n = 1 << 16;
  Buffer a = test::to_gpu(test::random_floats(n, 50)), y(ctx, n * 4, Memory::Device, "y");
  Stream s(ctx, /*profiling=*/true);
  ops::add(s, a, a, y, n);
  ops::rmsnorm(s, y, a, y, 16, n / 16, 1e-5f);
  s.submit_wait();
  auto t = s.timings();
  REQUIRE(t.size() == 2);
  CHECK(t[0].name == "add");
  CHECK(t[1].name == "rmsnorm");
  for (const KernelTime& k : t) CHECK(k.ms >= 0);
}

TEST_CASE("host buffers map and device buffers round-trip", "[runtime]") {
  Context& ctx = test::gpu();
  Buffer host(ctx, 1024, Memory::Host, "host");
  CHECK(host.mapped() != nullptr);
  auto data = test::random_floats(256, 60);
  Buffer dev(ctx, 1024, Memory::Device, "dev");
  dev.upload<float>(data);
  CHECK(dev.download<float>(256) == data);
  CHECK((dev.mapped() != nullptr) == ctx.caps().uma);
}

TEST_CASE("the uploader holds staging memory only where a destination is not mapped", "[runtime]") {
  Context& ctx = test::gpu();
  auto data = test::random_floats(1000, 61);
  Buffer dev(ctx, 4000, Memory::Device, "dev");
  uint64_t before = ctx.allocated_bytes();
  {
    Uploader up(ctx, 1024);  // smaller than the data: several flushes
    CHECK(up.staging_bytes() == 0);
    up.write(dev, 0, data.data(), 4000);
    up.flush();
    CHECK(up.staging_bytes() == (ctx.caps().uma ? 0u : 1024u));
    CHECK(ctx.allocated_bytes() >= before + up.staging_bytes());
  }
  CHECK(ctx.allocated_bytes() == before);
  CHECK(dev.download<float>(1000) == data);
}

TEST_CASE("the validation layer is on and its errors are counted", "[runtime][validation-error]") {
  Context& ctx = test::gpu();
  uint64_t before = validation_error_count();
  // A zero-sized buffer is invalid usage (VUID-VkBufferCreateInfo-size-00912).
  VkBufferCreateInfo info{
      .sType = VK_STRUCTURE_TYPE_BUFFER_CREATE_INFO, .size = 0, .usage = VK_BUFFER_USAGE_STORAGE_BUFFER_BIT};
  VkBuffer b = VK_NULL_HANDLE;
  if (vkCreateBuffer(ctx.device(), &info, nullptr, &b) == VK_SUCCESS) vkDestroyBuffer(ctx.device(), b, nullptr);
  CHECK(validation_error_count() > before);
}

TEST_CASE("synchronization validation catches a missing barrier", "[runtime][validation-error]") {
  Context& ctx = test::gpu();
  uint64_t before = validation_error_count();
  // Two raw copies into one buffer with no barrier between them: a write-after-write hazard.
  Buffer src(ctx, 256, Memory::Device, "src"), dst(ctx, 256, Memory::Device, "dst");
  ctx.run_now([&](VkCommandBuffer cb) {
    VkBufferCopy region{.srcOffset = 0, .dstOffset = 0, .size = 256};
    vkCmdCopyBuffer(cb, src.handle(), dst.handle(), 1, &region);
    vkCmdCopyBuffer(cb, src.handle(), dst.handle(), 1, &region);
  });
  CHECK(validation_error_count() > before);
}
