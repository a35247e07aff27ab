// Cooperative matrices (the matrix units: NVIDIA's tensor cores, RDNA3's WMMA, Arc's XMX) for the
// prefill matrix product: which Vulkan extension a device runs the matmul_coop kernels through,
// with which matrix shape, and what their self-checks found (docs/decisions.md "Prefill on the
// matrix units").
// - Two forms of one kernel: VK_NV_cooperative_matrix (NVIDIA; the module glslang wrote) and
//   VK_KHR_cooperative_matrix (everyone; the build's rewrite of it, shaders/coopmat_khr.h).
//   Where both exist the NV form runs: the Khronos validation layer of Debian 12 (1.3.239),
//   which the tests run under, knows it and not the KHR one, so tests prove the path users take.
// - The KHR form is never used under a validation layer that predates it (it would report the
//   unknown extension and structures as errors).
// - Each pipeline is compared with the tiled f32 kernel on a small problem the first time a device
//   uses it (ops_matmul_coop.h); a mismatch turns it off for that device, and `vkllm devices` says so.
#pragma once
#include <vulkan/vulkan.h>
#include <cstdint>
#include <map>
#include <string>
#include <tuple>
#include <vector>

#include "caps.h"
#include "dtype.h"

namespace vkllm {

enum class CoopApi { None, Nv, Khr };
const char* coop_api_name(CoopApi api);  // "none", "nv", "khr"

struct CoopPlan {
  CoopApi api = CoopApi::None;
  CoopShape shape;      // the f16 x f16 + f32 shape the kernels are specialised to
  std::string why_not;  // api None: why, for `vkllm devices`
};

// What the caller allows: VKLLM_COOPMAT ("" or "auto": the best the device has; "off"; "nv";
// "khr"), and whether the validation layer is on and knows VK_KHR_cooperative_matrix.
struct CoopRequest {
  std::string mode;
  bool validation = false;
  bool layer_knows_khr = false;
};

// The path for this device: a pure function of its caps, so tests plan for devices not here.
// Throws Error for a mode it does not know.
CoopPlan plan_coopmat(const DeviceCaps& caps, const CoopRequest& request);
// The validation layer version from which it knows VK_KHR_cooperative_matrix (Vulkan 1.3.255).
constexpr uint32_t kLayerKnowsKhrCoopmat = VK_MAKE_API_VERSION(0, 1, 3, 255);

// What the first use of one cooperative-matrix pipeline found.
struct CoopCheck {
  enum class State { Unchecked, Kept, Off };
  State state = State::Unchecked;
  double nmse = 0;   // against the tiled kernel
  std::string note;  // Off: why (the mismatch, or the error creating or running it)
};
// The products with a cooperative-matrix kernel: ops::matmul's and ops::matmul_id's (experts).
enum class CoopOp { Matmul, MatmulId };
const char* coop_op_name(CoopOp op);  // "matmul", "matmul_id"
// The pipelines checked on one device, by product, weight type and tile.
struct CoopChecks {
  std::map<std::tuple<CoopOp, DType, CoopTile>, CoopCheck> done;
};

// "128x128x32 (64x64 per subgroup)" and "16x16x16", for messages.
std::string coop_tile_name(const CoopTile& t);
std::string coop_shape_name(const CoopShape& s);
// What `vkllm devices` says: the path (or why there is none) and the checks run so far, then one
// line per pipeline turned off and why.
std::vector<std::string> coop_report(const CoopPlan& plan, const CoopChecks& checks);

// VK_KHR_cooperative_matrix's structures, which Debian 12's Vulkan headers (1.3.239) predate
// (vulkan_core.h 1.3.255 and the extension's specification).
namespace khr {
constexpr const char* kExtension = "VK_KHR_cooperative_matrix";
constexpr VkStructureType kFeaturesType = VkStructureType(1000506000);
constexpr VkStructureType kPropertiesType = VkStructureType(1000506001);
struct CooperativeMatrixFeatures {
  VkStructureType sType = kFeaturesType;
  void* pNext = nullptr;
  VkBool32 cooperativeMatrix = VK_FALSE;
  VkBool32 cooperativeMatrixRobustBufferAccess = VK_FALSE;
};
struct CooperativeMatrixProperties {
  VkStructureType sType = kPropertiesType;
  void* pNext = nullptr;
  uint32_t MSize = 0, NSize = 0, KSize = 0;
  uint32_t AType = 0, BType = 0, CType = 0, ResultType = 0;  // VkComponentTypeKHR: 0 f16, 1 f32
  VkBool32 saturatingAccumulation = VK_FALSE;
  uint32_t scope = 0;  // VkScopeKHR: 3 subgroup
};
using GetProperties = VkResult(VKAPI_PTR*)(VkPhysicalDevice, uint32_t*, CooperativeMatrixProperties*);
}  // namespace khr

}  // namespace vkllm
