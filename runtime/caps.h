// DeviceCaps: what one physical device can do, read once. Profile: the tunables chosen from it.
// caps.cpp is the only place in vkllm that names GPU vendors.
#pragma once
#include <vulkan/vulkan.h>
#include <algorithm>
#include <cstdint>
#include <string>
#include <vector>

namespace vkllm {

struct MemoryHeap {
  uint64_t size = 0;
  bool device_local = false;
  bool host_visible = false;  // some memory type of this heap can be mapped
  // VK_EXT_memory_budget, where the device has it (0: unknown): what this process may still
  // allocate from the heap (heapBudget - heapUsage when read, before vkllm allocated anything).
  uint64_t budget = 0;
};

// A cooperative-matrix shape for f16 inputs and f32 accumulation in subgroup scope (the only kind
// vkllm's kernels use): A is m x k, B k x n, the accumulator m x n.
struct CoopShape {
  uint32_t m = 0, n = 0, k = 0;
  auto operator<=>(const CoopShape&) const = default;
};

// A tile of the cooperative-matrix matrix product (shaders/matmul_coop.glsl): bm weight rows by bn
// tokens per workgroup, K in steps of bk, each subgroup computing wm x wn of it.
struct CoopTile {
  uint32_t bm = 128, bn = 128, bk = 32, wm = 64, wn = 64;
  auto operator<=>(const CoopTile&) const = default;
};

// The names of the subgroup operation classes in `ops` ("basic", "arithmetic", ...).
std::vector<std::string> subgroup_op_names(VkSubgroupFeatureFlags ops);

struct DeviceCaps {
  std::string name;
  std::string driver;  // driverName + driverInfo
  std::string type;    // "discrete", "integrated", "virtual", "cpu", "other"
  uint32_t vendor_id = 0, device_id = 0;
  uint32_t api_version = 0;
  uint32_t compute_queue_family = UINT32_MAX;  // UINT32_MAX: no compute queue
  uint32_t timestamp_valid_bits = 0;
  float timestamp_period_ns = 0;

  // Features (each optional; what a kernel needs is checked by the kernel's ops:: entry).
  bool fp16 = false;       // shaderFloat16: f16 arithmetic
  bool int8 = false;       // shaderInt8
  bool int16 = false;      // shaderInt16
  bool int64 = false;      // shaderInt64
  bool storage16 = false;  // storageBuffer16BitAccess
  bool storage8 = false;   // storageBuffer8BitAccess
  bool subgroup_size_control = false;
  bool integer_dot_product = false;    // VK_KHR_shader_integer_dot_product
  bool cooperative_matrix = false;     // VK_KHR_cooperative_matrix
  bool cooperative_matrix_nv = false;  // VK_NV_cooperative_matrix
  bool vulkan_memory_model = false;    // vulkanMemoryModel (the cooperative-matrix modules use it)
  bool memory_budget = false;          // VK_EXT_memory_budget
  // The f16 x f16 + f32 subgroup shapes each cooperative-matrix extension lists (runtime/coopmat.h).
  std::vector<CoopShape> coop_shapes_khr, coop_shapes_nv;

  // Subgroups.
  uint32_t subgroup_size = 0, min_subgroup_size = 0, max_subgroup_size = 0;
  // Size control: the stages a pipeline may require a size for (requiredSubgroupSizeStages) and
  // the most subgroups one workgroup may then hold (maxComputeWorkgroupSubgroups).
  VkShaderStageFlags required_subgroup_size_stages = 0;
  uint32_t max_workgroup_subgroups = 0;
  // Whether a compute pipeline may be created with this required subgroup size.
  bool can_require_subgroup_size(uint32_t size) const {
    return subgroup_size_control && (required_subgroup_size_stages & VK_SHADER_STAGE_COMPUTE_BIT) &&
           size >= min_subgroup_size && size <= max_subgroup_size && (size & (size - 1)) == 0;
  }
  VkSubgroupFeatureFlags subgroup_ops = 0;  // in compute shaders
  bool subgroup_arithmetic() const { return subgroup_ops & VK_SUBGROUP_FEATURE_ARITHMETIC_BIT; }

  // Limits.
  uint32_t max_shared_memory = 0;
  uint32_t max_workgroup_invocations = 0;
  uint32_t max_workgroup_size[3] = {};
  uint32_t max_workgroup_count[3] = {};
  uint32_t max_push_constants = 0;
  uint64_t max_storage_buffer_range = 0;
  uint64_t max_memory_allocation = 0;
  uint64_t max_buffer_size = 0;
  uint64_t storage_offset_alignment = 0;
  std::vector<MemoryHeap> heaps;
  bool uma = false;  // one memory for CPU and GPU: device-local memory can be mapped, no staging
  // Multiprocessors (NVIDIA SMs, AMD compute units) as the driver reports them, where it does
  // (VK_NV_shader_sm_builtins, VK_AMD_shader_core_properties); 0: unknown (Vulkan core has no
  // such count). compute_units_source names the extension it came from.
  uint32_t compute_units = 0;
  std::string compute_units_source;
  // shaderDenormPreserveFloat32: kernels that declare the DenormPreserve execution mode keep f32
  // subnormals; without it the mode is dropped when their module is created, and the driver may
  // flush subnormals to zero (docs/design.md, Numerics).
  bool denorm_preserve_f32 = false;
  // Quirk: lavapipe (llvmpipe) ends every loop of a shader invocation, silently, once the loops
  // of that invocation have run this many iterations in total (entries count too). 0: no limit.
  // Kernels with long loops must keep each invocation's work under it.
  uint32_t loop_iteration_limit = 0;

  uint64_t device_local_bytes() const;
  // The largest device-local heap's memory this process may use: its budget where the device
  // reports one (other processes' use taken off), else its size. What "fits" is judged against.
  uint64_t usable_device_bytes() const;
  // Where vkllm starts a tensor that may be bound on its own (weights, KV halves, activations):
  // at least 256 bytes, the largest minStorageBufferOffsetAlignment Vulkan allows, so a layout
  // computed once is valid whatever the device asks.
  uint64_t binding_alignment() const { return std::max<uint64_t>(storage_offset_alignment, 256); }
  std::vector<std::string> subgroup_op_names() const { return vkllm::subgroup_op_names(subgroup_ops); }
  // Why this device cannot run vkllm, whatever the profile (version, queue, features); empty when
  // it can. problems(caps, profile) adds what the profile's kernels need.
  std::vector<std::string> problems() const;
};

// `instance` gives the extension queries (the cooperative-matrix shapes) their entry points.
DeviceCaps read_caps(VkInstance instance, VkPhysicalDevice pd);

// Tunables per GPU family, passed to kernels as specialization constants. Every profile must
// run (slowly) on lavapipe, and no result may depend on which profile ran: tests run them all.
struct Profile {
  std::string name;
  // Whether the values below were chosen by measuring on this kind of device (docs/decisions.md
  // keeps the sweeps); untuned profiles are reasoned from vendor documentation, and say so.
  bool tuned = false;
  uint32_t wg_size = 256;               // threads per workgroup for elementwise and row kernels
  uint32_t matvec_wg = 128;             // threads per workgroup in matvec
  uint32_t matvec_rows = 2;             // output rows per matvec workgroup
  uint32_t matvec_rows_per_thread = 1;  // rows a thread works on (sharing its loads of x); each row
                                        // group is split over wg·rows_per_thread/rows threads
  uint32_t matvec_tokens = 8;           // tokens per matvec workgroup (more run as several token blocks)
  uint32_t matvec_unroll = 1;           // units of a row a matvec thread loads per step (loads in flight)
  bool matvec_norm = true;              // a block's RMSNorm read in by its projections' matvec (no dispatch)
  bool matvec_wide_loads = false;       // Q8_0 blocks read as aligned 16-byte words (3 loads, not 10)
  bool matvec_wide_q4 = false;          // Q4_0 and IQ4_NL blocks likewise (2 loads, not 6)
  uint32_t matmul_tiled_min_n = 9;      // ops::matmul runs the tiled kernel from this many tokens, else matvec
  uint32_t matmul_bm = 64;              // matmul tile: rows of weights (outputs) per workgroup
  uint32_t matmul_bn = 64;              // tokens per workgroup
  uint32_t matmul_bk = 32;              // K step held in shared memory
  uint32_t matmul_wg = 256;             // threads per matmul workgroup
  uint32_t matmul_tm = 4;               // matmul micro-tile per thread: weight rows ...
  uint32_t matmul_tn = 4;               // ... by tokens; (bm / tm) * (bn / tn) = wg, bk a multiple of 8
  uint32_t attn_br = 16;                // flash attention: query rows per workgroup
  uint32_t attn_bc = 32;                // keys per shared-memory tile
  uint32_t attn_wg = 128;               // threads per attention workgroup
  uint32_t attn_split_min = 256;        // decode: fewest keys per split-K workgroup
  uint32_t attn_target_wgs = 64;        // decode: workgroups that fill the device, where it does not
                                        // report its compute units (split-K aims here)
  uint32_t attn_wgs_per_cu = 2;         // decode: split-K aims at this many workgroups per compute unit
                                        // where the device reports them (DeviceCaps::compute_units)
  // Prefill on cooperative matrices where the device has them (runtime/coopmat.h): from
  // matmul_tiled_min_n tokens, f16 inputs and f32 accumulation instead of the tiled f32 kernel.
  // coop_tile, or coop_tile_small where coop_tile would make fewer than coop_fill_wgs workgroups.
  bool coopmat = true;
  CoopTile coop_tile{};
  CoopTile coop_tile_small{.bm = 64, .bn = 64, .bk = 32, .wm = 32, .wn = 32};
  uint32_t coop_fill_wgs = 128;
  bool subgroup_ops = true;  // use subgroup reductions where the device has them
  // The subgroup size the kernels were planned for (matvec's TK threads per row group must be a
  // multiple of it for the subgroup reduction; 0: whatever the device uses). Pipelines require it
  // where the device allows (subgroup size control); fit_profile sets run_subgroup_size to the
  // size they will run with, and path_notes() says when that changes a kernel's path.
  uint32_t subgroup_size = 0;
  uint32_t run_subgroup_size = 0;
  // The fields VKLLM_PROFILE set on top of the named profile, "field=value,..." ("": none;
  // runtime/profile_overrides.h). A field added above must be added to that file's table too.
  std::string overrides;
};

// What the kernels need of a device under a profile, whatever the model: the most shared memory
// a fixed tile takes (matmul_id's weight and x tiles and pair list, 4·bk·(bm+bn+1) + 4·bn,
// IQ3_S's 2 KiB grid table on top; matvec's reduction) and the widest workgroup any pipeline is
// created with. Attention tiles shrink to fit and are checked per model when planned.
struct KernelNeeds {
  uint32_t shared_bytes = 0;
  std::string shared_by;  // the kernel that needs shared_bytes
  uint32_t workgroup = 0;
  std::string workgroup_by;
};
KernelNeeds kernel_needs(const Profile& p);
// caps.problems() and what the profile's kernels need that the device lacks; empty when it can run.
std::vector<std::string> problems(const DeviceCaps& caps, const Profile& p);

// Where a fitted profile's kernels cannot take their intended path on this device (a subgroup size
// other than planned, matvec's shared-memory tree instead of its subgroup reduction), one line
// each; `vkllm devices` prints them. Empty: every kernel runs as planned.
std::vector<std::string> path_notes(const DeviceCaps& caps, const Profile& p);

// The workgroups decode attention's split-K aims at on this device: attn_wgs_per_cu per compute
// unit where the device reports its compute units, else the profile's attn_target_wgs.
uint32_t attention_target_workgroups(const DeviceCaps& caps, const Profile& p);

// All built-in profiles, in a fixed order (tests iterate over them).
const std::vector<Profile>& all_profiles();
// The profile with this name; throws Error listing the names when unknown.
Profile profile_named(const std::string& name);
// The profile for this device (by vendor and family), limited to what the device supports.
Profile choose_profile(const DeviceCaps& caps);
// `p` with features the device lacks turned off and sizes clamped to its limits.
Profile fit_profile(Profile p, const DeviceCaps& caps);

}  // namespace vkllm
