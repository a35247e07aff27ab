// Reads DeviceCaps from a physical device and picks a Profile. The only file naming vendors.
#include "caps.h"

#include <fmt/format.h>
#include <algorithm>
#include <cstring>

#include "check.h"
#include "coopmat.h"
#include "shader_features.h"

namespace vkllm {

// --- reading the device

namespace {

bool has_extension(const std::vector<VkExtensionProperties>& exts, const char* name) {
  return std::any_of(exts.begin(), exts.end(),
                     [&](const VkExtensionProperties& e) { return std::strcmp(e.extensionName, name) == 0; });
}

const char* type_name(VkPhysicalDeviceType t) {
  switch (t) {
    case VK_PHYSICAL_DEVICE_TYPE_DISCRETE_GPU:
      return "discrete";
    case VK_PHYSICAL_DEVICE_TYPE_INTEGRATED_GPU:
      return "integrated";
    case VK_PHYSICAL_DEVICE_TYPE_VIRTUAL_GPU:
      return "virtual";
    case VK_PHYSICAL_DEVICE_TYPE_CPU:
      return "cpu";
    default:
      return "other";
  }
}

void read_queue(VkPhysicalDevice pd, DeviceCaps& c) {
  uint32_t n = 0;
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, nullptr);
  std::vector<VkQueueFamilyProperties> families(n);
  vkGetPhysicalDeviceQueueFamilyProperties(pd, &n, families.data());
  // Prefer a compute-only family (async compute on discrete GPUs), else any with compute.
  for (int pass = 0; pass < 2 && c.compute_queue_family == UINT32_MAX; ++pass) {
    for (uint32_t i = 0; i < n; ++i) {
      bool compute = families[i].queueFlags & VK_QUEUE_COMPUTE_BIT;
      bool graphics = families[i].queueFlags & VK_QUEUE_GRAPHICS_BIT;
      if (compute && (pass == 1 || !graphics)) {
        c.compute_queue_family = i;
        c.timestamp_valid_bits = families[i].timestampValidBits;
        break;
      }
    }
  }
}

void read_memory(VkPhysicalDevice pd, DeviceCaps& c) {
  VkPhysicalDeviceMemoryProperties mp;
  vkGetPhysicalDeviceMemoryProperties(pd, &mp);
  c.heaps.resize(mp.memoryHeapCount);
  for (uint32_t i = 0; i < mp.memoryHeapCount; ++i) {
    c.heaps[i].size = mp.memoryHeaps[i].size;
    c.heaps[i].device_local = mp.memoryHeaps[i].flags & VK_MEMORY_HEAP_DEVICE_LOCAL_BIT;
  }
  for (uint32_t i = 0; i < mp.memoryTypeCount; ++i)
    if (mp.memoryTypes[i].propertyFlags & VK_MEMORY_PROPERTY_HOST_VISIBLE_BIT)
      c.heaps[mp.memoryTypes[i].heapIndex].host_visible = true;
  // Unified memory: every device-local heap can be mapped by the host, and the device is not
  // a discrete card (whose small mappable BAR window is no substitute for staging).
  bool all_mappable = std::all_of(c.heaps.begin(), c.heaps.end(),
                                  [](const MemoryHeap& h) { return !h.device_local || h.host_visible; });
  c.uma = all_mappable && c.type != "discrete";
}

// Heap budgets (VK_EXT_memory_budget): what the driver says this process may still allocate.
void read_budget(VkPhysicalDevice pd, DeviceCaps& c) {
  VkPhysicalDeviceMemoryBudgetPropertiesEXT budget{.sType =
                                                       VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_BUDGET_PROPERTIES_EXT};
  VkPhysicalDeviceMemoryProperties2 mp{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MEMORY_PROPERTIES_2,
                                       .pNext = &budget};
  vkGetPhysicalDeviceMemoryProperties2(pd, &mp);
  for (size_t i = 0; i < c.heaps.size(); ++i) {
    uint64_t b = budget.heapBudget[i], used = budget.heapUsage[i];
    c.heaps[i].budget = b > used ? b - used : 0;
  }
}

// The cooperative-matrix shapes with f16 A and B, f32 C and result, in subgroup scope (the
// component types and scope have the same numbers in both extensions). Only the extensions'
// own entry points are called, never a pNext structure: Debian 12's validation layer would
// report VK_KHR_cooperative_matrix's structures as unknown.
constexpr uint32_t kComponentF16 = 0, kComponentF32 = 1, kScopeSubgroup = 3;

bool f16_f32_subgroup(uint32_t a, uint32_t b, uint32_t c, uint32_t result, uint32_t scope) {
  return a == kComponentF16 && b == kComponentF16 && c == kComponentF32 && result == kComponentF32 &&
         scope == kScopeSubgroup;
}

// Calls an extension's vkGetPhysicalDeviceCooperativeMatrixProperties* twice (count, then list).
template <class Props, class Get>
std::vector<Props> coop_properties(VkPhysicalDevice pd, Get get, VkStructureType type) {
  uint32_t n = 0;
  if (!get || get(pd, &n, nullptr) != VK_SUCCESS) return {};
  std::vector<Props> props(n);
  for (Props& p : props) p.sType = type, p.pNext = nullptr;
  if (get(pd, &n, props.data()) != VK_SUCCESS) return {};
  props.resize(n);
  return props;
}

void read_coop_shapes(VkInstance instance, VkPhysicalDevice pd, DeviceCaps& c) {
  if (c.cooperative_matrix_nv) {
    auto get = reinterpret_cast<PFN_vkGetPhysicalDeviceCooperativeMatrixPropertiesNV>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesNV"));
    for (const auto& p :
         coop_properties<VkCooperativeMatrixPropertiesNV>(pd, get, VK_STRUCTURE_TYPE_COOPERATIVE_MATRIX_PROPERTIES_NV))
      if (f16_f32_subgroup(p.AType, p.BType, p.CType, p.DType, p.scope))
        c.coop_shapes_nv.push_back({p.MSize, p.NSize, p.KSize});
  }
  if (c.cooperative_matrix) {
    auto get = reinterpret_cast<khr::GetProperties>(
        vkGetInstanceProcAddr(instance, "vkGetPhysicalDeviceCooperativeMatrixPropertiesKHR"));
    for (const auto& p : coop_properties<khr::CooperativeMatrixProperties>(pd, get, khr::kPropertiesType))
      if (f16_f32_subgroup(p.AType, p.BType, p.CType, p.ResultType, p.scope))
        c.coop_shapes_khr.push_back({p.MSize, p.NSize, p.KSize});
  }
}

}  // namespace

DeviceCaps read_caps(VkInstance instance, VkPhysicalDevice pd) {
  DeviceCaps c;
  VkPhysicalDeviceProperties base;
  vkGetPhysicalDeviceProperties(pd, &base);
  c.name = base.deviceName;
  c.type = type_name(base.deviceType);
  c.vendor_id = base.vendorID;
  c.device_id = base.deviceID;
  c.api_version = base.apiVersion;
  c.timestamp_period_ns = base.limits.timestampPeriod;
  c.max_shared_memory = base.limits.maxComputeSharedMemorySize;
  c.max_workgroup_invocations = base.limits.maxComputeWorkGroupInvocations;
  for (int i = 0; i < 3; ++i) {
    c.max_workgroup_size[i] = base.limits.maxComputeWorkGroupSize[i];
    c.max_workgroup_count[i] = base.limits.maxComputeWorkGroupCount[i];
  }
  c.max_push_constants = base.limits.maxPushConstantsSize;
  c.max_storage_buffer_range = base.limits.maxStorageBufferRange;
  c.storage_offset_alignment = base.limits.minStorageBufferOffsetAlignment;
  read_queue(pd, c);
  read_memory(pd, c);
  if (VK_API_VERSION_MINOR(c.api_version) < 2 && VK_API_VERSION_MAJOR(c.api_version) == 1) return c;

  uint32_t n = 0;
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, nullptr);
  std::vector<VkExtensionProperties> exts(n);
  vkEnumerateDeviceExtensionProperties(pd, nullptr, &n, exts.data());
  bool v13 = VK_API_VERSION_MINOR(c.api_version) >= 3;
  bool size_control = v13 || has_extension(exts, VK_EXT_SUBGROUP_SIZE_CONTROL_EXTENSION_NAME);
  bool maint4 = v13 || has_extension(exts, VK_KHR_MAINTENANCE_4_EXTENSION_NAME);
  c.integer_dot_product = v13 || has_extension(exts, VK_KHR_SHADER_INTEGER_DOT_PRODUCT_EXTENSION_NAME);
  c.cooperative_matrix = has_extension(exts, khr::kExtension);
  c.cooperative_matrix_nv = has_extension(exts, VK_NV_COOPERATIVE_MATRIX_EXTENSION_NAME);
  read_coop_shapes(instance, pd, c);
  c.memory_budget = has_extension(exts, VK_EXT_MEMORY_BUDGET_EXTENSION_NAME);
  if (c.memory_budget) read_budget(pd, c);

  // Each struct is pushed to the front of a pNext chain, only where the device has it.
  void* chain = nullptr;
  auto link = [&chain](auto& s) { s.pNext = chain, chain = &s; };
  VkPhysicalDeviceMaintenance4Properties m4{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_MAINTENANCE_4_PROPERTIES};
  VkPhysicalDeviceSubgroupSizeControlProperties ssc{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_PROPERTIES};
  VkPhysicalDeviceVulkan12Properties p12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_PROPERTIES};
  VkPhysicalDeviceVulkan11Properties p11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_PROPERTIES};
  // The multiprocessor counts Vulkan core does not report, where a vendor extension does.
  VkPhysicalDeviceShaderSMBuiltinsPropertiesNV sm{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_SM_BUILTINS_PROPERTIES_NV};
  VkPhysicalDeviceShaderCorePropertiesAMD amd{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_AMD};
  VkPhysicalDeviceShaderCoreProperties2AMD amd2{.sType =
                                                    VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SHADER_CORE_PROPERTIES_2_AMD};
  bool has_sm = has_extension(exts, VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME);
  bool has_amd = has_extension(exts, VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME);
  bool has_amd2 = has_extension(exts, VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME);
  if (has_sm) link(sm);
  if (has_amd) link(amd);
  if (has_amd2) link(amd2);
  if (maint4) link(m4);
  if (size_control) link(ssc);
  link(p12), link(p11);
  VkPhysicalDeviceProperties2 p2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_PROPERTIES_2, .pNext = chain};
  vkGetPhysicalDeviceProperties2(pd, &p2);
  c.driver = fmt::format("{} {}", p12.driverName, p12.driverInfo);
  c.denorm_preserve_f32 = p12.shaderDenormPreserveFloat32;
  if (has_sm && sm.shaderSMCount) {
    c.compute_units = sm.shaderSMCount, c.compute_units_source = VK_NV_SHADER_SM_BUILTINS_EXTENSION_NAME;
  } else if (has_amd2 && amd2.activeComputeUnitCount) {  // disabled units left out
    c.compute_units = amd2.activeComputeUnitCount;
    c.compute_units_source = VK_AMD_SHADER_CORE_PROPERTIES_2_EXTENSION_NAME;
  } else if (has_amd) {
    c.compute_units = amd.shaderEngineCount * amd.shaderArraysPerEngineCount * amd.computeUnitsPerShaderArray;
    c.compute_units_source = VK_AMD_SHADER_CORE_PROPERTIES_EXTENSION_NAME;
  }
  if (p12.driverID == VK_DRIVER_ID_MESA_LLVMPIPE) c.loop_iteration_limit = 65535;  // LP_MAX_TGSI_LOOP_ITERATIONS
  c.subgroup_size = p11.subgroupSize;
  c.min_subgroup_size = c.max_subgroup_size = p11.subgroupSize;
  if (size_control) {
    c.min_subgroup_size = ssc.minSubgroupSize;
    c.max_subgroup_size = ssc.maxSubgroupSize;
    c.required_subgroup_size_stages = ssc.requiredSubgroupSizeStages;
    c.max_workgroup_subgroups = ssc.maxComputeWorkgroupSubgroups;
  }
  if (p11.subgroupSupportedStages & VK_SHADER_STAGE_COMPUTE_BIT) c.subgroup_ops = p11.subgroupSupportedOperations;
  c.max_memory_allocation = p11.maxMemoryAllocationSize;
  c.max_buffer_size = maint4 ? m4.maxBufferSize : c.max_memory_allocation;

  chain = nullptr;
  VkPhysicalDeviceSubgroupSizeControlFeatures sscf{
      .sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_SUBGROUP_SIZE_CONTROL_FEATURES};
  VkPhysicalDeviceVulkan12Features f12{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_2_FEATURES};
  VkPhysicalDeviceVulkan11Features f11{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_VULKAN_1_1_FEATURES};
  if (size_control) link(sscf);
  link(f12), link(f11);
  VkPhysicalDeviceFeatures2 f2{.sType = VK_STRUCTURE_TYPE_PHYSICAL_DEVICE_FEATURES_2, .pNext = chain};
  vkGetPhysicalDeviceFeatures2(pd, &f2);
  c.fp16 = f12.shaderFloat16;
  c.int8 = f12.shaderInt8;
  c.int16 = f2.features.shaderInt16;
  c.int64 = f2.features.shaderInt64;
  c.storage16 = f11.storageBuffer16BitAccess;
  c.storage8 = f12.storageBuffer8BitAccess;
  c.vulkan_memory_model = f12.vulkanMemoryModel;
  c.subgroup_size_control = size_control && sscf.subgroupSizeControl;
  return c;
}

uint64_t DeviceCaps::device_local_bytes() const {
  uint64_t total = 0;
  for (const MemoryHeap& h : heaps)
    if (h.device_local) total += h.size;
  return total;
}

uint64_t DeviceCaps::usable_device_bytes() const {
  uint64_t best = 0, usable = 0;
  for (const MemoryHeap& h : heaps)
    if (h.device_local && h.size > best) best = h.size, usable = h.budget ? std::min(h.budget, h.size) : h.size;
  return usable;
}

std::vector<std::string> subgroup_op_names(VkSubgroupFeatureFlags ops) {
  static const std::pair<VkSubgroupFeatureFlagBits, const char*> names[] = {
      {VK_SUBGROUP_FEATURE_BASIC_BIT, "basic"},
      {VK_SUBGROUP_FEATURE_VOTE_BIT, "vote"},
      {VK_SUBGROUP_FEATURE_ARITHMETIC_BIT, "arithmetic"},
      {VK_SUBGROUP_FEATURE_BALLOT_BIT, "ballot"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_BIT, "shuffle"},
      {VK_SUBGROUP_FEATURE_SHUFFLE_RELATIVE_BIT, "shuffle_relative"},
      {VK_SUBGROUP_FEATURE_CLUSTERED_BIT, "clustered"},
      {VK_SUBGROUP_FEATURE_QUAD_BIT, "quad"}};
  std::vector<std::string> out;
  for (auto [bit, name] : names)
    if (ops & bit) out.push_back(name);
  return out;
}

std::vector<std::string> DeviceCaps::problems() const {
  std::vector<std::string> why;
  if (VK_API_VERSION_MAJOR(api_version) == 1 && VK_API_VERSION_MINOR(api_version) < 2)
    why.push_back(fmt::format("Vulkan {}.{} (vkllm needs 1.2)", VK_API_VERSION_MAJOR(api_version),
                              VK_API_VERSION_MINOR(api_version)));
  if (compute_queue_family == UINT32_MAX) why.push_back("no compute queue");
  if (!why.empty()) return why;  // the feature bits below were not read
  // Exactly what the embedded SPIR-V declares (shader_features.h); a module declaring a capability
  // must not reach a device without it, even on a path the profile does not take.
  for (const FeatureUse& use : shader_requirements().uses) {
    if (device_has(*this, use)) continue;
    size_t more = use.shaders.size() - 1;
    why.push_back(fmt::format("no {} (declared by {}{})", feature_name(use), use.shaders.front(),
                              more ? fmt::format(" and {} more kernel{}", more, more == 1 ? "" : "s") : ""));
  }
  return why;
}

KernelNeeds kernel_needs(const Profile& p) {
  constexpr uint32_t kIq3sGrid = 512 * 4;  // quant.glsl's table, in every kernel reading IQ3_S
  constexpr uint32_t kMoePlanWg = 256;     // ops_moe.cpp's moe_plan workgroup
  KernelNeeds n;
  auto need_shared = [&](uint64_t bytes, std::string by) {
    if (bytes > n.shared_bytes) n.shared_bytes = uint32_t(bytes), n.shared_by = std::move(by);
  };
  uint64_t tile = 4ull * p.matmul_bk * (p.matmul_bm + p.matmul_bn + 1);
  need_shared(tile + kIq3sGrid, fmt::format("matmul {}x{}x{} tile with IQ3_S", p.matmul_bm, p.matmul_bn, p.matmul_bk));
  need_shared(tile + 4ull * p.matmul_bn + kIq3sGrid,
              fmt::format("matmul_id {}x{}x{} tile with IQ3_S", p.matmul_bm, p.matmul_bn, p.matmul_bk));
  // matvec with a gate/up pair keeps at least 2 rows per thread (ops_matmul.cpp), and a normed
  // one reduces Σx² beside them.
  uint64_t rt = std::max(2u, p.matvec_rows_per_thread) + 1;
  need_shared(4 * rt * p.matvec_tokens * p.matvec_wg + kIq3sGrid, "matvec reduction with IQ3_S");
  auto need_wg = [&](uint32_t wg, std::string by) {
    if (wg > n.workgroup) n.workgroup = wg, n.workgroup_by = std::move(by);
  };
  // matmul's threads are fixed by its tile, whatever matmul_wg was clamped to.
  uint32_t matmul_threads = (p.matmul_bm / std::max(1u, p.matmul_tm)) * (p.matmul_bn / std::max(1u, p.matmul_tn));
  need_wg(p.wg_size, "row kernels"), need_wg(p.matvec_wg, "matvec"), need_wg(p.attn_wg, "attention");
  need_wg(matmul_threads, fmt::format("matmul {}x{} tile", p.matmul_bm, p.matmul_bn));
  need_wg(kMoePlanWg, "moe_plan");
  return n;
}

namespace {

// What the kernels assume of a profile's own numbers (VKLLM_PROFILE can set any of them): the
// tree reductions and tile splits are over powers of two, matvec's row groups split its threads,
// matmul's micro-tiles divide its tile.
std::vector<std::string> profile_problems(const Profile& p) {
  std::vector<std::string> why;
  auto pow2 = [&](uint32_t v, const char* field) {
    if (v == 0 || (v & (v - 1)) != 0)
      why.push_back(fmt::format("profile {}: {} {} is not a power of two", p.name, field, v));
  };
  pow2(p.wg_size, "wg_size"), pow2(p.matvec_wg, "matvec_wg"), pow2(p.matvec_rows, "matvec_rows");
  pow2(p.matvec_rows_per_thread, "matvec_rows_per_thread");
  pow2(p.attn_br, "attn_br"), pow2(p.attn_bc, "attn_bc"), pow2(p.attn_wg, "attn_wg");
  if (p.subgroup_size) pow2(p.subgroup_size, "subgroup_size");
  if (p.matvec_rows % p.matvec_rows_per_thread || uint64_t(p.matvec_wg) * p.matvec_rows_per_thread < p.matvec_rows)
    why.push_back(
        fmt::format("profile {}: matvec_rows {} must be a multiple of matvec_rows_per_thread {} and at most "
                    "matvec_wg x matvec_rows_per_thread ({})",
                    p.name, p.matvec_rows, p.matvec_rows_per_thread, uint64_t(p.matvec_wg) * p.matvec_rows_per_thread));
  if (p.matmul_bm % p.matmul_tm || p.matmul_bn % p.matmul_tn || p.matmul_bk % 8)
    why.push_back(
        fmt::format("profile {}: the matmul tile {}x{}x{} does not split into {}x{} micro-tiles with a K "
                    "step that is a multiple of 8",
                    p.name, p.matmul_bm, p.matmul_bn, p.matmul_bk, p.matmul_tm, p.matmul_tn));
  return why;
}

}  // namespace

std::vector<std::string> problems(const DeviceCaps& caps, const Profile& p) {
  std::vector<std::string> why = caps.problems();
  if (!why.empty()) return why;
  why = profile_problems(p);
  if (!why.empty()) return why;
  KernelNeeds n = kernel_needs(p);
  if (caps.max_shared_memory < n.shared_bytes)
    why.push_back(fmt::format("{} B of shared memory; profile {}'s {} needs {} B", caps.max_shared_memory, p.name,
                              n.shared_by, n.shared_bytes));
  uint32_t widest = std::min(caps.max_workgroup_invocations, caps.max_workgroup_size[0]);
  if (widest < n.workgroup)
    why.push_back(fmt::format(
        "workgroups of at most {} invocations (maxComputeWorkGroupInvocations {}, "
        "maxComputeWorkGroupSize[0] {}); profile {}'s {} uses {}",
        widest, caps.max_workgroup_invocations, caps.max_workgroup_size[0], p.name, n.workgroup_by, n.workgroup));
  return why;
}

// --- profiles

namespace {

constexpr uint32_t kVendorAmd = 0x1002, kVendorNvidia = 0x10DE, kVendorIntel = 0x8086, kVendorMesa = 0x10005;

std::vector<Profile> make_profiles() {
  Profile generic{.name = "generic"};
  Profile nvidia = generic, rdna = generic, gcn = generic, intel = generic, llvmpipe = generic;
  nvidia.name = "nvidia";
  // Matvec: 2 rows per thread halve the (L1) traffic of x, several times the weight traffic for
  // 4-bit weights; one 32-wide subgroup per row pair (its reduction needs no shared memory or
  // barrier), two units in flight per thread. (Reasoned, not yet measured on a GPU.)
  nvidia.matvec_wg = 128, nvidia.matvec_rows = 8, nvidia.matvec_rows_per_thread = 2, nvidia.matvec_unroll = 2;
  nvidia.matmul_bm = 64, nvidia.matmul_bn = 64, nvidia.matmul_bk = 32, nvidia.matmul_wg = 256;
  nvidia.attn_br = 32, nvidia.attn_bc = 32, nvidia.attn_wg = 128, nvidia.attn_split_min = 256;
  nvidia.attn_target_wgs = 256;
  nvidia.subgroup_size = 32;
  // Cooperative matrices (16 x 16 x 16): 4 subgroups of 64 x 64, as llama.cpp's coopmat tiles on
  // NVIDIA; a layer's q/k/v or o product at 512 tokens (4096 x 512) makes only 128 such
  // workgroups, fewer than two per multiprocessor of a big card, so it takes 64 x 64 tiles.
  nvidia.coop_fill_wgs = 256;
  rdna.name = "amd_rdna";
  rdna.matvec_wg = 64, rdna.matvec_rows = 4, rdna.matvec_rows_per_thread = 2;
  rdna.attn_br = 16, rdna.attn_bc = 64, rdna.attn_wg = 128, rdna.attn_target_wgs = 128;
  rdna.subgroup_size = 32;  // wave32: matvec's 32 threads per row group are one subgroup
  rdna.coop_tile = {.bm = 128, .bn = 128, .bk = 32, .wm = 64, .wn = 32};  // 8 subgroups (256 threads)
  gcn.name = "amd_gcn";
  gcn.matvec_wg = 64, gcn.matvec_rows = 1, gcn.wg_size = 256;
  gcn.attn_br = 16, gcn.attn_bc = 32, gcn.attn_wg = 64, gcn.attn_target_wgs = 128;
  gcn.subgroup_size = 64;
  intel.name = "intel";
  intel.matvec_wg = 64, intel.matvec_rows = 4, intel.wg_size = 128, intel.subgroup_ops = false;
  intel.matmul_bm = 32, intel.matmul_bn = 32, intel.matmul_bk = 32, intel.matmul_wg = 128;
  intel.matmul_tm = 4, intel.matmul_tn = 2;
  intel.attn_br = 8, intel.attn_bc = 32, intel.attn_wg = 64;
  llvmpipe.name = "llvmpipe";
  llvmpipe.tuned = true;
  // lavapipe runs each workgroup on one CPU thread with 8-wide SIMD: few big workgroups win.
  // Matvec: one SIMD-wide workgroup whose threads own 8 rows x 4 tokens. llvmpipe gathers every
  // load lane by lane, so x is loaded once per 8 rows (16 rows ran 10-25% faster but took 2x
  // longer to compile; 1 row per thread is 3x slower). The same kernel over token blocks runs
  // prefill 3-4x faster than the tiled one, whose shared-memory loads are gathers too.
  llvmpipe.matvec_wg = 8, llvmpipe.matvec_rows = 64, llvmpipe.matvec_rows_per_thread = 8, llvmpipe.matvec_tokens = 4;
  // Each of its lane-by-lane gathers costs about the same whatever its width: 16-byte loads for
  // Q8_0. Not for Q4_0: picking its 18 bytes out of a 32-byte window cost more than the 6 loads
  // it saves (2048x2048 matvec 1.33 -> 1.67 ms, best of 20).
  llvmpipe.matvec_wide_loads = true;
  // Each of its threads owns whole rows, so reading the norm in costs every thread a second
  // gathered load per x load: decode 11% and prefill 16% slower than the norm's own dispatch
  // (SmolLM2-135M shape, Q8_0; docs/decisions.md).
  llvmpipe.matvec_norm = false;
  llvmpipe.wg_size = 128;
  llvmpipe.matmul_tiled_min_n = UINT32_MAX;
  llvmpipe.matmul_bm = 32, llvmpipe.matmul_bn = 32, llvmpipe.matmul_bk = 32, llvmpipe.matmul_wg = 64;
  // Attention on 16 threads: two SIMD groups switch at each barrier where 64 threads made eight
  // (decode at hd 64-256 1.5-2.2x faster, prefill at hd 64 2.2x; docs/decisions.md has the sweep).
  llvmpipe.attn_br = 16, llvmpipe.attn_bc = 64, llvmpipe.attn_wg = 16, llvmpipe.attn_split_min = 512;
  llvmpipe.attn_target_wgs = 8;  // a few per CPU thread
  llvmpipe.coopmat = false;      // lavapipe has no cooperative matrices
  return {generic, nvidia, rdna, gcn, intel, llvmpipe};
}

}  // namespace

uint32_t attention_target_workgroups(const DeviceCaps& caps, const Profile& p) {
  if (caps.compute_units == 0) return p.attn_target_wgs;
  return uint32_t(std::min<uint64_t>(uint64_t(caps.compute_units) * p.attn_wgs_per_cu, UINT32_MAX));
}

const std::vector<Profile>& all_profiles() {
  static const std::vector<Profile> profiles = make_profiles();
  return profiles;
}

Profile profile_named(const std::string& name) {
  std::string known;
  for (const Profile& p : all_profiles()) {
    if (p.name == name) return p;
    known += (known.empty() ? "" : ", ") + p.name;
  }
  throw Error(fmt::format("unknown profile '{}' (known: {})", name, known));
}

Profile fit_profile(Profile p, const DeviceCaps& caps) {
  p.subgroup_ops = p.subgroup_ops && caps.subgroup_arithmetic();
  // Narrower workgroups where the device allows fewer threads; a matmul tile that then no
  // longer splits over its threads is reported by problems(), never run.
  auto clamp_wg = [&](uint32_t& wg) {
    wg = std::min({wg, caps.max_workgroup_invocations, caps.max_workgroup_size[0]});
  };
  clamp_wg(p.wg_size), clamp_wg(p.matvec_wg), clamp_wg(p.matmul_wg), clamp_wg(p.attn_wg);
  // Pipelines get the planned size where the device lets them require it, else its default
  // (modules are SPIR-V 1.5, so without a requirement gl_SubgroupSize is subgroupSize).
  bool planned = p.subgroup_size != 0 && caps.can_require_subgroup_size(p.subgroup_size);
  p.run_subgroup_size = planned ? p.subgroup_size : caps.subgroup_size;
  return p;
}

namespace {

// matvec's threads per row group (matvec.glsl's TK) for plain and gate/up-fused products.
uint32_t matvec_tk(const Profile& p, bool glu) {
  uint32_t rows = glu ? std::max(2u, p.matvec_rows) : p.matvec_rows;
  uint32_t rt = glu ? std::max(2u, p.matvec_rows_per_thread) : p.matvec_rows_per_thread;
  return p.matvec_wg * rt / std::max(1u, rows);
}

}  // namespace

std::vector<std::string> path_notes(const DeviceCaps& caps, const Profile& p) {
  std::vector<std::string> notes;
  uint32_t sg = p.run_subgroup_size;
  if (p.subgroup_size && sg != p.subgroup_size)
    notes.push_back(fmt::format("profile {} is planned for subgroup size {}; this device runs {} (sizes {}..{}{})",
                                p.name, p.subgroup_size, sg, caps.min_subgroup_size, caps.max_subgroup_size,
                                caps.subgroup_size_control ? "" : ", no size control"));
  if (!p.subgroup_ops || sg == 0) return notes;
  for (bool glu : {false, true}) {
    uint32_t tk = matvec_tk(p, glu);
    if (tk > 1 && tk % sg != 0)
      notes.push_back(
          fmt::format("matvec{}: {} threads per row group is not a multiple of subgroup size {}: "
                      "shared-memory tree instead of the subgroup reduction",
                      glu ? " (gate/up fused)" : "", tk, sg));
  }
  return notes;
}

Profile choose_profile(const DeviceCaps& caps) {
  std::string name = "generic";
  if (caps.vendor_id == kVendorNvidia) name = "nvidia";
  // RDNA can run wave32; GCN has only wave64.
  if (caps.vendor_id == kVendorAmd) name = caps.min_subgroup_size <= 32 ? "amd_rdna" : "amd_gcn";
  if (caps.vendor_id == kVendorIntel) name = "intel";
  if (caps.vendor_id == kVendorMesa && caps.type == "cpu") name = "llvmpipe";
  return fit_profile(profile_named(name), caps);
}

}  // namespace vkllm
