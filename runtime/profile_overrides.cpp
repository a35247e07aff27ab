// VKLLM_PROFILE's "name:field=value,..." form: the field table, the parser, and applying it.
#include "profile_overrides.h"

#include <fmt/format.h>
#include <fmt/ranges.h>
#include <algorithm>
#include <charconv>
#include <limits>

#include "error.h"

namespace vkllm {

namespace {

// One settable field: a number (`number`) or a switch (`flag`), and the smallest number allowed
// (0 only where 0 means something: subgroup_size 0 is the device's own size).
struct Field {
  const char* name;
  uint32_t Profile::*number = nullptr;
  bool Profile::*flag = nullptr;
  uint32_t min = 1;
};

// Every number and switch of Profile (caps.h), in its order; a test holds this list to the struct.
const std::vector<Field>& fields() {
  static const std::vector<Field> table = {
      {"wg_size", &Profile::wg_size},
      {"matvec_wg", &Profile::matvec_wg},
      {"matvec_rows", &Profile::matvec_rows},
      {"matvec_rows_per_thread", &Profile::matvec_rows_per_thread},
      {"matvec_tokens", &Profile::matvec_tokens},
      {"matvec_unroll", &Profile::matvec_unroll},
      {"matvec_norm", nullptr, &Profile::matvec_norm},
      {"matvec_wide_loads", nullptr, &Profile::matvec_wide_loads},
      {"matvec_wide_q4", nullptr, &Profile::matvec_wide_q4},
      {"matmul_tiled_min_n", &Profile::matmul_tiled_min_n},
      {"matmul_bm", &Profile::matmul_bm},
      {"matmul_bn", &Profile::matmul_bn},
      {"matmul_bk", &Profile::matmul_bk},
      {"matmul_wg", &Profile::matmul_wg},
      {"matmul_tm", &Profile::matmul_tm},
      {"matmul_tn", &Profile::matmul_tn},
      {"attn_br", &Profile::attn_br},
      {"attn_bc", &Profile::attn_bc},
      {"attn_wg", &Profile::attn_wg},
      {"attn_split_min", &Profile::attn_split_min},
      {"attn_target_wgs", &Profile::attn_target_wgs},
      {"attn_wgs_per_cu", &Profile::attn_wgs_per_cu},
      {"coopmat", nullptr, &Profile::coopmat},
      {"coop_fill_wgs", &Profile::coop_fill_wgs},
      {"subgroup_ops", nullptr, &Profile::subgroup_ops},
      {"subgroup_size", &Profile::subgroup_size, nullptr, 0},
  };
  return table;
}

const Field& field_named(std::string_view name, std::string_view text) {
  for (const Field& f : fields())
    if (name == f.name) return f;
  throw Error(
      fmt::format("profile '{}': no field '{}' (fields: {})", text, name, fmt::join(profile_field_names(), ", ")));
}

uint32_t parse_value(const Field& f, std::string_view value, std::string_view text) {
  if (f.flag) {
    if (value == "1" || value == "true") return 1;
    if (value == "0" || value == "false") return 0;
    throw Error(fmt::format("profile '{}': {}={} is not 0, 1, true or false", text, f.name, value));
  }
  uint64_t v = 0;
  auto [end, ec] = std::from_chars(value.data(), value.data() + value.size(), v);
  if (value.empty() || ec != std::errc() || end != value.data() + value.size() || v < f.min ||
      v > std::numeric_limits<uint32_t>::max())
    throw Error(fmt::format("profile '{}': {}={} is not a whole number from {} to {}", text, f.name, value, f.min,
                            std::numeric_limits<uint32_t>::max()));
  return uint32_t(v);
}

}  // namespace

std::vector<std::string> profile_field_names() {
  std::vector<std::string> names;
  for (const Field& f : fields()) names.emplace_back(f.name);
  return names;
}

ProfileRequest parse_profile_request(std::string_view text) {
  ProfileRequest r;
  size_t colon = text.find(':');
  r.name = std::string(text.substr(0, colon));
  if (!r.name.empty()) profile_named(r.name);  // throws for an unknown name
  if (colon == std::string_view::npos) return r;
  std::string_view rest = text.substr(colon + 1);
  if (rest.empty()) throw Error(fmt::format("profile '{}': nothing after ':' (field=value, comma-separated)", text));
  while (!rest.empty()) {
    size_t comma = rest.find(',');
    std::string_view item = rest.substr(0, comma);
    rest = comma == std::string_view::npos ? std::string_view{} : rest.substr(comma + 1);
    size_t eq = item.find('=');
    if (eq == std::string_view::npos)
      throw Error(fmt::format("profile '{}': '{}' has no value (field=value)", text, item));
    const Field& f = field_named(item.substr(0, eq), text);
    r.overrides.emplace_back(f.name, parse_value(f, item.substr(eq + 1), text));
    if (comma != std::string_view::npos && rest.empty()) throw Error(fmt::format("profile '{}': a trailing ','", text));
  }
  return r;
}

Profile profile_for(const ProfileRequest& request, const DeviceCaps& caps) {
  Profile p = request.name.empty() ? choose_profile(caps) : profile_named(request.name);
  for (const auto& [name, value] : request.overrides) {
    const Field& f = field_named(name, name);
    if (f.flag)
      p.*f.flag = value != 0;
    else
      p.*f.number = value;
    p.overrides += fmt::format("{}{}={}", p.overrides.empty() ? "" : ",", name, value);
  }
  if (!request.overrides.empty()) p.tuned = false;
  return fit_profile(p, caps);
}

}  // namespace vkllm
