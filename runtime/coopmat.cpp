// Which cooperative-matrix extension and shape a device's prefill kernels use.
#include "coopmat.h"

#include <fmt/format.h>
#include <algorithm>
#include <optional>

#include "error.h"

namespace vkllm {

const char* coop_api_name(CoopApi api) {
  switch (api) {
    case CoopApi::Nv:
      return "nv";
    case CoopApi::Khr:
      return "khr";
    case CoopApi::None:
      break;
  }
  return "none";
}

namespace {

// 16 x 16 x 16 where offered (every vendor's tensor/matrix units have it, and the profiles' tiles
// are multiples of 16), else the first shape whose sides divide 64: a subgroup tile the profiles
// can be given.
std::optional<CoopShape> pick_shape(const std::vector<CoopShape>& shapes) {
  const CoopShape square{16, 16, 16};
  if (std::find(shapes.begin(), shapes.end(), square) != shapes.end()) return square;
  for (const CoopShape& s : shapes)
    if (s.m && s.n && s.k && 64 % s.m == 0 && 64 % s.n == 0 && 32 % s.k == 0) return s;
  return std::nullopt;
}

std::string shape_list(const std::vector<CoopShape>& shapes) {
  std::string out;
  for (const CoopShape& s : shapes) out += fmt::format("{}{}x{}x{}", out.empty() ? "" : ", ", s.m, s.n, s.k);
  return out.empty() ? "none" : out;
}

// Why the device cannot run the kernels through `api`, or nothing.
std::optional<std::string> lacks(const DeviceCaps& c, CoopApi api, const CoopRequest& r) {
  bool khr = api == CoopApi::Khr;
  if (!(khr ? c.cooperative_matrix : c.cooperative_matrix_nv))
    return fmt::format("no {}", khr ? "VK_KHR_cooperative_matrix" : "VK_NV_cooperative_matrix");
  if (khr && r.validation && !r.layer_knows_khr)
    return "the Vulkan validation layer predates VK_KHR_cooperative_matrix (it would report it as an error)";
  if (!c.fp16) return "no shaderFloat16";
  if (!c.vulkan_memory_model) return "no vulkanMemoryModel";
  if (!c.storage16) return "no storageBuffer16BitAccess";
  if (!(c.subgroup_ops & VK_SUBGROUP_FEATURE_BASIC_BIT)) return "no basic subgroup operations in compute shaders";
  const std::vector<CoopShape>& shapes = khr ? c.coop_shapes_khr : c.coop_shapes_nv;
  if (!pick_shape(shapes))
    return fmt::format("no f16 x f16 + f32 subgroup shape the kernels can use (offered: {})", shape_list(shapes));
  return std::nullopt;
}

CoopPlan plan_for(const DeviceCaps& c, CoopApi api) {
  return {.api = api, .shape = *pick_shape(api == CoopApi::Khr ? c.coop_shapes_khr : c.coop_shapes_nv)};
}

}  // namespace

CoopPlan plan_coopmat(const DeviceCaps& caps, const CoopRequest& r) {
  const std::string& mode = r.mode;
  ENSURE(mode.empty() || mode == "auto" || mode == "off" || mode == "nv" || mode == "khr",
         fmt::format("VKLLM_COOPMAT='{}' is not one of auto, off, nv, khr", mode));
  if (mode == "off") return {.why_not = "turned off by VKLLM_COOPMAT=off"};
  if (mode == "nv" || mode == "khr") {
    CoopApi api = mode == "nv" ? CoopApi::Nv : CoopApi::Khr;
    if (auto why = lacks(caps, api, r)) return {.why_not = fmt::format("VKLLM_COOPMAT={}: {}", mode, *why)};
    return plan_for(caps, api);
  }
  // The NV form first where both exist (coopmat.h says why), else the KHR one.
  std::optional<std::string> nv = lacks(caps, CoopApi::Nv, r), khr = lacks(caps, CoopApi::Khr, r);
  if (!nv) return plan_for(caps, CoopApi::Nv);
  if (!khr) return plan_for(caps, CoopApi::Khr);
  if (!caps.cooperative_matrix && !caps.cooperative_matrix_nv)
    return {.why_not =
                "the device has no cooperative matrices (VK_KHR_cooperative_matrix or VK_NV_cooperative_matrix)"};
  return {.why_not = caps.cooperative_matrix ? *khr : *nv};
}

const char* coop_op_name(CoopOp op) { return op == CoopOp::Matmul ? "matmul" : "matmul_id"; }

std::string coop_tile_name(const CoopTile& t) {
  return fmt::format("{}x{}x{} ({}x{} per subgroup)", t.bm, t.bn, t.bk, t.wm, t.wn);
}

std::string coop_shape_name(const CoopShape& s) { return fmt::format("{}x{}x{}", s.m, s.n, s.k); }

std::vector<std::string> coop_report(const CoopPlan& plan, const CoopChecks& checks) {
  if (plan.api == CoopApi::None) return {fmt::format("cooperative matrices: not used: {}", plan.why_not)};
  size_t kept = 0, off = 0;
  for (const auto& [key, c] : checks.done)
    if (c.state != CoopCheck::State::Unchecked) (c.state == CoopCheck::State::Kept ? kept : off) += 1;
  std::string head = fmt::format("cooperative matrices: VK_{}_cooperative_matrix, {} f16 x f16 + f32; ",
                                 plan.api == CoopApi::Nv ? "NV" : "KHR", coop_shape_name(plan.shape));
  if (kept + off == 0)
    head += "no pipeline checked yet";
  else
    head += fmt::format("{} pipeline{} checked against the tiled kernel: {} kept, {} turned off", kept + off,
                        kept + off == 1 ? "" : "s", kept, off);
  std::vector<std::string> lines{head};
  for (const auto& [key, c] : checks.done)
    if (c.state == CoopCheck::State::Off)
      lines.push_back(fmt::format("cooperative matrices off for {} {} {}: {}", coop_op_name(std::get<0>(key)),
                                  info(std::get<1>(key)).name, coop_tile_name(std::get<2>(key)), c.note));
  return lines;
}

}  // namespace vkllm
