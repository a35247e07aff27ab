// problems(caps, profile) against described devices (device_descriptions.h): a device is refused,
// with the kernel and the bytes or threads named, when a profile's fixed tiles or workgroups do
// not fit it; every profile fits the device it is meant for and lavapipe (where tests run them).
#include <fmt/format.h>

#include "catch.h"
#include "device_descriptions.h"

using namespace vkllm;

namespace {

std::string joined(const std::vector<std::string>& v) { return fmt::format("{}", fmt::join(v, "; ")); }

}  // namespace

TEST_CASE("kernel needs follow the profile's tiles", "[profile][problems]") {
  KernelNeeds n = kernel_needs(profile_named("nvidia"));
  // 4 B x bk 32 x (bm 64 + bn 64 + 1) = 16,512 B; IQ3_S's grid 2,048 B more (18,560 B); matmul_id
  // adds its 64 pair ids.
  CHECK(n.shared_bytes == 16512 + 2048 + 256);
  CHECK(n.shared_by == "matmul_id 64x64x32 tile with IQ3_S");
  CHECK(n.workgroup == 256);
  KernelNeeds intel = kernel_needs(profile_named("intel"));
  CHECK(intel.shared_bytes == 4 * 32 * (32 + 32 + 1) + 4 * 32 + 2048);
}

TEST_CASE("every profile fits its own device and lavapipe", "[profile][problems]") {
  for (const Profile& p : all_profiles()) {
    DeviceCaps own = test::device_for_profile(p.name);
    INFO(p.name << " on " << own.name << ": " << joined(problems(own, fit_profile(p, own))));
    CHECK(problems(own, fit_profile(p, own)).empty());
    DeviceCaps lvp = test::lavapipe_device();
    INFO(p.name << " on lavapipe: " << joined(problems(lvp, fit_profile(p, lvp))));
    CHECK(problems(lvp, fit_profile(p, lvp)).empty());
  }
}

TEST_CASE("a device with 16 KiB of shared memory is refused, naming the tile", "[profile][problems]") {
  DeviceCaps c = test::nvidia_device();
  c.max_shared_memory = 16384;
  Profile p = fit_profile(profile_named("nvidia"), c);
  auto why = problems(c, p);
  REQUIRE(why.size() == 1);
  CHECK(why[0] == "16384 B of shared memory; profile nvidia's matmul_id 64x64x32 tile with IQ3_S needs 18816 B");
  c.max_shared_memory = 18816;
  CHECK(problems(c, p).empty());
}

TEST_CASE("a device with narrow workgroups is refused", "[profile][problems]") {
  DeviceCaps c = test::rdna_device();
  c.max_workgroup_size[0] = 128;  // invocations 1024, but x (the only dimension kernels use) is narrow
  auto why = problems(c, fit_profile(profile_named("amd_rdna"), c));
  REQUIRE(why.size() == 1);
  CHECK(why[0].find("maxComputeWorkGroupSize[0] 128") != std::string::npos);
  CHECK(why[0].find("uses 256") != std::string::npos);
  DeviceCaps minimum = test::minimum_device();
  auto generic = problems(minimum, fit_profile(profile_named("generic"), minimum));
  INFO(joined(generic));
  CHECK(generic.size() == 2);  // 16 KiB and 128 invocations are both too little
}

TEST_CASE("missing features are reported whatever the profile", "[profile][problems]") {
  DeviceCaps c = test::intel_device();
  c.storage16 = false;
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT;
  auto why = problems(c, fit_profile(profile_named("intel"), c));
  CHECK(why.size() == 2);
}

TEST_CASE("pipelines run the planned subgroup size, or the change is reported", "[profile][subgroup]") {
  // RDNA with size control: wave32 as planned, every kernel on its intended path.
  DeviceCaps rdna = test::rdna_device();
  rdna.required_subgroup_size_stages = VK_SHADER_STAGE_COMPUTE_BIT, rdna.max_workgroup_subgroups = 32;
  Profile p = fit_profile(profile_named("amd_rdna"), rdna);
  CHECK(p.run_subgroup_size == 32);
  CHECK(path_notes(rdna, p).empty());
  // Without size control the driver's wave64 applies: matvec's 32 threads per row group are half
  // a subgroup, so it takes the shared-memory tree, and says so.
  rdna.subgroup_size_control = false;
  p = fit_profile(profile_named("amd_rdna"), rdna);
  CHECK(p.run_subgroup_size == 64);
  auto notes = path_notes(rdna, p);
  INFO(joined(notes));
  REQUIRE(notes.size() == 3);
  CHECK(notes[0] ==
        "profile amd_rdna is planned for subgroup size 32; this device runs 64 (sizes 32..64, no size "
        "control)");
  CHECK(notes[1] ==
        "matvec: 32 threads per row group is not a multiple of subgroup size 64: shared-memory tree "
        "instead of the subgroup reduction");
  // NVIDIA's fixed 32 and a profile without a planned size: nothing to report.
  DeviceCaps nv = test::nvidia_device();
  CHECK(path_notes(nv, fit_profile(profile_named("nvidia"), nv)).empty());
  CHECK(path_notes(nv, fit_profile(profile_named("generic"), nv)).empty());
}

TEST_CASE("fits is judged against the memory budget where the device reports one", "[profile][memory]") {
  DeviceCaps c = test::nvidia_device();
  c.heaps = {{.size = 24ull << 30, .device_local = true}, {.size = 64ull << 30, .host_visible = true}};
  CHECK(c.usable_device_bytes() == 24ull << 30);
  c.heaps[0].budget = 20ull << 30;  // another process holds 4 GiB
  CHECK(c.usable_device_bytes() == 20ull << 30);
}
