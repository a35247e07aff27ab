// `vkllm devices [--json]`: every Vulkan device, what it can do, and the device and profile `run`
// would use (honouring VKLLM_DEVICE, VKLLM_PROFILE and VKLLM_COOPMAT as a Context does). Where the
// chosen device has cooperative matrices, every such pipeline is checked against the tiled kernel
// first (ops_matmul_coop.h), and what was turned off is listed.
#include <fmt/format.h>
#include <cstdio>
#include <nlohmann/json.hpp>

#include "commands.h"
#include "context.h"
#include "error.h"
#include "ops_matmul_coop.h"
#include "output.h"
#include "profile_overrides.h"
#include "shader_features.h"

namespace vkllm::cli {

namespace {

std::string version_string(uint32_t v) {
  return fmt::format("{}.{}.{}", VK_API_VERSION_MAJOR(v), VK_API_VERSION_MINOR(v), VK_API_VERSION_PATCH(v));
}

// The choice a Context would make; unknown names are warnings here, not errors.
struct Choice {
  std::optional<uint32_t> device;
  std::optional<ProfileRequest> profile;  // forced by VKLLM_PROFILE
};

Choice choose(std::vector<DeviceReport>& reports) {
  Choice c;
  std::optional<uint32_t> requested = requested_device({});
  if (requested && *requested >= reports.size())
    std::fprintf(stderr, "warning: VKLLM_DEVICE=%u is not a device index (%s found); none is chosen\n", *requested,
                 count(reports.size(), "device").c_str());
  c.device = requested ? (*requested < reports.size() ? requested : std::nullopt) : preferred_device(reports);
  if (std::string name = requested_profile({}); !name.empty()) {
    try {
      c.profile = parse_profile_request(name);
    } catch (const Error& e) {
      std::fprintf(stderr, "warning: VKLLM_PROFILE: %s; each device shows its own\n", e.what());
    }
  }
  if (c.profile)
    for (DeviceReport& r : reports)
      r.profile = profile_for(*c.profile, r.caps), r.problems = problems(r.caps, r.profile);
  return c;
}

// What the embedded SPIR-V declares, as Vulkan names (the same for every device).
std::vector<std::string> required_feature_names() {
  std::vector<std::string> names;
  for (const FeatureUse& use : shader_requirements().uses) names.push_back(feature_name(use));
  return names;
}

// The self-checks of the chosen device's cooperative-matrix pipelines, run on a Context of it
// (under the profile VKLLM_PROFILE asks for, overrides included, as `run` would use it).
CoopChecks run_coop_checks(const DeviceReport& r) {
  if (r.coopmat.api == CoopApi::None || !r.problems.empty()) return {};
  Context ctx(ContextOptions{.device = r.index});
  ops::check_all_coop(ctx);
  return ctx.coop_checks();
}

nlohmann::json coop_json(const DeviceReport& r, const CoopChecks& checks) {
  auto shapes = [](const std::vector<CoopShape>& v) {
    nlohmann::json a = nlohmann::json::array();
    for (const CoopShape& s : v) a.push_back(coop_shape_name(s));
    return a;
  };
  nlohmann::json list = nlohmann::json::array();
  for (const auto& [key, c] : checks.done)
    list.push_back({{"op", coop_op_name(std::get<0>(key))},
                    {"type", info(std::get<1>(key)).name},
                    {"tile", coop_tile_name(std::get<2>(key))},
                    {"state", c.state == CoopCheck::State::Kept ? "kept" : "off"},
                    {"nmse", c.nmse},
                    {"note", c.note}});
  const CoopPlan& p = r.coopmat;
  return {{"api", coop_api_name(p.api)},
          {"shape", p.api == CoopApi::None ? nlohmann::json() : nlohmann::json(coop_shape_name(p.shape))},
          {"why_not", p.why_not},
          {"offered", {{"nv", shapes(r.caps.coop_shapes_nv)}, {"khr", shapes(r.caps.coop_shapes_khr)}}},
          {"checks", list}};
}

nlohmann::json to_json(const DeviceReport& r, bool chosen, const CoopChecks& checks) {
  const DeviceCaps& c = r.caps;
  nlohmann::json heaps = nlohmann::json::array();
  for (const MemoryHeap& h : c.heaps)
    heaps.push_back({{"bytes", h.size}, {"device_local", h.device_local}, {"host_visible", h.host_visible}});
  return {
      {"index", r.index},
      {"name", c.name},
      {"type", c.type},
      {"vendor_id", c.vendor_id},
      {"device_id", c.device_id},
      {"driver", c.driver},
      {"api_version", version_string(c.api_version)},
      {"suitable", r.problems.empty()},
      {"problems", r.problems},
      {"chosen", chosen},
      {"profile", r.profile.name},
      {"profile_tuned", r.profile.tuned},
      {"profile_overrides", r.profile.overrides},  // VKLLM_PROFILE's field=value list ("": none)
      // Kernels that cannot take their intended path here (empty: all run as planned).
      {"path_notes", path_notes(c, r.profile)},
      {"features",
       {{"fp16", c.fp16},
        {"int8", c.int8},
        {"int16", c.int16},
        {"storage_16bit", c.storage16},
        {"storage_8bit", c.storage8},
        {"subgroup_size_control", c.subgroup_size_control},
        {"integer_dot_product", c.integer_dot_product},
        {"cooperative_matrix", c.cooperative_matrix},
        {"cooperative_matrix_nv", c.cooperative_matrix_nv}}},
      // The prefill kernels' cooperative matrices: the extension and shape used (or why none),
      // the shapes each extension offers, and the chosen device's pipeline self-checks.
      {"cooperative_matrices", coop_json(r, checks)},
      {"required_features", required_feature_names()},
      {"subgroup",
       {{"size", c.subgroup_size},
        {"min_size", c.min_subgroup_size},
        {"max_size", c.max_subgroup_size},
        {"planned_size", r.profile.subgroup_size},  // 0: the profile takes the device's
        {"run_size", r.profile.run_subgroup_size},
        {"operations", c.subgroup_op_names()}}},
      {"limits",
       {{"shared_memory_bytes", c.max_shared_memory},
        {"max_workgroup_invocations", c.max_workgroup_invocations},
        {"max_push_constants_bytes", c.max_push_constants},
        {"max_storage_buffer_range", c.max_storage_buffer_range},
        {"max_memory_allocation_size", c.max_memory_allocation},
        {"max_buffer_size", c.max_buffer_size},
        {"min_storage_buffer_offset_alignment", c.storage_offset_alignment},
        {"timestamp_period_ns", c.timestamp_period_ns}}},
      {"memory_heaps", heaps},
      {"uma", c.uma},
      // Multiprocessors as a vendor extension reports them (0: not reported), and the workgroups
      // decode attention's split-K aims at from them (or from the profile's guess).
      {"compute_units", c.compute_units},
      {"compute_units_source", c.compute_units_source},
      {"attention_split_target", attention_target_workgroups(c, r.profile)},
      {"denorm_preserve_f32", c.denorm_preserve_f32},
  };
}

std::string yes_no(bool b) { return b ? "yes" : "no"; }

std::string bytes(uint64_t b) {
  if (b >= (1ull << 30)) return fmt::format("{:.3g} GiB", b / 1073741824.0);
  if (b >= (1ull << 20)) return fmt::format("{:.0f} MiB", b / 1048576.0);
  return fmt::format("{} KiB", b / 1024.0);
}

void print_text(const DeviceReport& r, bool chosen, bool forced, const CoopChecks& checks) {
  const DeviceCaps& c = r.caps;
  fmt::print("{} {}: {} ({}, Vulkan {}){}\n", chosen ? '*' : ' ', r.index, c.name, c.type,
             version_string(c.api_version), chosen ? "  <- chosen" : "");
  fmt::print("    driver: {}\n", c.driver);
  std::string tuning = !r.profile.overrides.empty() ? ", overridden: " + r.profile.overrides
                       : r.profile.tuned
                           ? ", tuned by measurement"
                           : ", untuned: values reasoned from vendor documentation, not measured on hardware";
  fmt::print("    profile: {}{}{}\n", r.profile.name, forced ? " (VKLLM_PROFILE)" : "", tuning);
  if (!r.problems.empty()) fmt::print("    cannot run vkllm: {}\n", fmt::join(r.problems, "; "));
  fmt::print("    fp16 {}, int8 {}, 16-bit storage {}, 8-bit storage {}, integer dot {}\n", yes_no(c.fp16),
             yes_no(c.int8), yes_no(c.storage16), yes_no(c.storage8), yes_no(c.integer_dot_product));
  fmt::print("    the kernels' SPIR-V needs: {}\n", fmt::join(required_feature_names(), ", "));
  for (const std::string& line : coop_report(r.coopmat, checks)) fmt::print("    {}\n", line);
  fmt::print("    subgroup size {} ({}..{}), kernels run {}, operations: {}\n", c.subgroup_size, c.min_subgroup_size,
             c.max_subgroup_size, r.profile.run_subgroup_size, fmt::join(c.subgroup_op_names(), " "));
  for (const std::string& note : path_notes(c, r.profile)) fmt::print("    not as planned: {}\n", note);
  fmt::print("    shared memory {}, workgroup up to {} invocations, push constants {} B\n", bytes(c.max_shared_memory),
             c.max_workgroup_invocations, c.max_push_constants);
  fmt::print("    maxStorageBufferRange {}, maxMemoryAllocationSize {}, maxBufferSize {}\n",
             bytes(c.max_storage_buffer_range), bytes(c.max_memory_allocation), bytes(c.max_buffer_size));
  for (size_t i = 0; i < c.heaps.size(); ++i)
    fmt::print("    heap {}: {}{}{}\n", i, bytes(c.heaps[i].size), c.heaps[i].device_local ? ", device-local" : "",
               c.heaps[i].host_visible ? ", host-visible" : "");
  fmt::print("    unified memory: {}\n", yes_no(c.uma));
  uint32_t target = attention_target_workgroups(c, r.profile);
  if (c.compute_units)
    fmt::print("    compute units: {} ({}); decode attention splits the keys for {} workgroups ({} per unit)\n",
               c.compute_units, c.compute_units_source, target, r.profile.attn_wgs_per_cu);
  else
    fmt::print("    compute units: not reported; decode attention splits the keys for the profile's {} workgroups\n",
               target);
  fmt::print("    f32 subnormals: {}\n", c.denorm_preserve_f32
                                             ? "kept where a kernel asks (shaderDenormPreserveFloat32)"
                                             : "the driver's choice (no shaderDenormPreserveFloat32)");
}

}  // namespace

void add_devices_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("devices", "List Vulkan devices, their features and the chosen profile");
  auto json = std::make_shared<bool>(false);
  cmd->add_flag("--json", *json, "Print one JSON object");
  cmd->callback([json] {
    Instance instance(validation_requested({}));
    std::vector<DeviceReport> reports = survey_devices(instance);
    Choice c = choose(reports);
    CoopChecks checks = c.device ? run_coop_checks(reports[*c.device]) : CoopChecks{};
    auto checks_of = [&](const DeviceReport& r) { return c.device == r.index ? checks : CoopChecks{}; };
    if (*json) {
      nlohmann::json out = {{"devices", nlohmann::json::array()}, {"profile_forced", c.profile.has_value()}};
      for (const DeviceReport& r : reports) out["devices"].push_back(to_json(r, c.device == r.index, checks_of(r)));
      return print_json(out);
    }
    if (reports.empty()) fmt::print("no Vulkan devices\n");
    for (const DeviceReport& r : reports) print_text(r, c.device == r.index, c.profile.has_value(), checks_of(r));
  });
}

}  // namespace vkllm::cli
