// VKLLM_PROFILE's overrides: a profile with some of its numbers and switches set by name, for
// sweeps on hardware (`VKLLM_PROFILE=nvidia:matvec_wg=256,matvec_rows=8`, or `:attn_br=64` for
// the device's own profile). Parsed once, checked field by field; applied per device.
#pragma once
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "caps.h"

namespace vkllm {

struct ProfileRequest {
  std::string name;                                         // a built-in profile; "": the device's own
  std::vector<std::pair<std::string, uint32_t>> overrides;  // field, value (bools as 0 / 1), in order
};

// "NAME", "NAME:field=value,...", ":field=value,..." or "" (the device's own, as it is). Throws
// Error with one line naming what is wrong: an unknown profile or field, a value that is not a
// whole number in the field's range (bools: 0, 1, true, false), a field without a value.
ProfileRequest parse_profile_request(std::string_view text);

// The requested profile for this device: the named one (or the device's choice), the overrides
// set, fitted to the device (fit_profile). An overridden profile is not the tuned one: tuned is
// false and `overrides` lists what was set.
Profile profile_for(const ProfileRequest& request, const DeviceCaps& caps);

// The fields VKLLM_PROFILE may set: every number and switch of Profile but `tuned` and
// `run_subgroup_size` (which fit_profile derives).
std::vector<std::string> profile_field_names();

}  // namespace vkllm
