// Descriptions of devices that are not here (DeviceCaps filled by hand), so the planners and
// problems() can be tested at the limits each profile will meet. The numbers are what the
// drivers report (vulkan.gpuinfo.org reports; Mesa's radv/anv/lvp physical-device limits):
// - NVIDIA (proprietary driver, Turing to Hopper): 48 KiB maxComputeSharedMemorySize (the
//   opt-in larger carve-out is not exposed to Vulkan compute), subgroup 32 only, 1024
//   invocations, workgroup size (1024, 1024, 64);
// - AMD RDNA (RADV, AMDVLK): 64 KiB LDS per workgroup, wave64 by default with size control down
//   to wave32, 1024 invocations; GCN: the same but wave64 only;
// - Intel Xe / Arc (ANV): 64 KiB of SLM, SIMD8 to SIMD32 (32 by default), 1024 invocations;
// - lavapipe (Mesa 22.3 lvp): 32 KiB, subgroup 8 (LP_NATIVE_VECTOR_WIDTH / 32), 1024 invocations;
// - the Vulkan 1.2 minimum limits: 16 KiB, 128 invocations, workgroup size (128, 128, 64).
// None of the GPU values has been read from the hardware by this project yet (issue 32, part 3).
#pragma once
#include <string>
#include <vector>

#include "caps.h"

namespace vkllm::test {

inline DeviceCaps described_device(const std::string& name, uint32_t vendor, uint32_t shared, uint32_t sg,
                                   uint32_t sg_min, uint32_t sg_max, uint32_t invocations) {
  DeviceCaps c;
  c.name = name;
  c.type = vendor == 0x10005 ? "cpu" : "discrete";
  c.vendor_id = vendor;
  c.api_version = VK_API_VERSION_1_3;
  c.compute_queue_family = 0;
  c.fp16 = c.int8 = c.int16 = c.storage16 = c.storage8 = true;
  c.subgroup_size_control = sg_min != sg_max;
  c.subgroup_size = sg, c.min_subgroup_size = sg_min, c.max_subgroup_size = sg_max;
  c.subgroup_ops = VK_SUBGROUP_FEATURE_BASIC_BIT | VK_SUBGROUP_FEATURE_ARITHMETIC_BIT;
  c.max_shared_memory = shared;
  c.max_workgroup_invocations = invocations;
  c.max_workgroup_size[0] = c.max_workgroup_size[1] = invocations, c.max_workgroup_size[2] = 64;
  c.max_workgroup_count[0] = c.max_workgroup_count[1] = c.max_workgroup_count[2] = 65535;
  c.max_push_constants = 128;
  c.max_storage_buffer_range = c.max_memory_allocation = c.max_buffer_size = 1ull << 31;
  c.storage_offset_alignment = 64;
  return c;
}

inline DeviceCaps nvidia_device() { return described_device("NVIDIA (described)", 0x10DE, 49152, 32, 32, 32, 1024); }
inline DeviceCaps rdna_device() { return described_device("AMD RDNA (described)", 0x1002, 65536, 64, 32, 64, 1024); }
inline DeviceCaps gcn_device() { return described_device("AMD GCN (described)", 0x1002, 65536, 64, 64, 64, 1024); }
inline DeviceCaps intel_device() { return described_device("Intel Xe (described)", 0x8086, 65536, 32, 8, 32, 1024); }
inline DeviceCaps lavapipe_device() {
  DeviceCaps c = described_device("llvmpipe (described)", 0x10005, 32768, 8, 8, 8, 1024);
  c.loop_iteration_limit = 65535;
  return c;
}
// The least a Vulkan 1.2 device may report (a generic profile's worst case).
inline DeviceCaps minimum_device() {
  DeviceCaps c = described_device("Vulkan minimum (described)", 0, 16384, 4, 4, 4, 128);
  c.max_workgroup_size[0] = c.max_workgroup_size[1] = 128;
  return c;
}

// The device each built-in profile is meant for (generic: lavapipe's limits, the smallest
// device it runs on here).
inline DeviceCaps device_for_profile(const std::string& profile) {
  if (profile == "nvidia") return nvidia_device();
  if (profile == "amd_rdna") return rdna_device();
  if (profile == "amd_gcn") return gcn_device();
  if (profile == "intel") return intel_device();
  return lavapipe_device();
}

}  // namespace vkllm::test
