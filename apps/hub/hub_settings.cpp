// The hub's environment variables, read once.
#include "hub/hub_settings.h"

#include <cstdlib>

#include "error.h"

namespace vkllm::hub {

namespace {

std::string env(const char* name) {
  const char* v = std::getenv(name);
  return v ? std::string(v) : std::string();
}

}  // namespace

HubSettings HubSettings::from_environment() {
  HubSettings s;
  if (std::string e = env("HF_ENDPOINT"); !e.empty()) {
    while (!e.empty() && e.back() == '/') e.pop_back();
    ENSURE(e.starts_with("http://") || e.starts_with("https://"),
           "HF_ENDPOINT='" + e + "' is not an http:// or https:// address");
    s.endpoint = e;
  }
  s.token = env("HF_TOKEN");
  if (std::string c = env("VKLLM_CACHE"); !c.empty())
    s.cache = c;
  else if (std::string x = env("XDG_CACHE_HOME"); !x.empty())
    s.cache = std::filesystem::path(x) / "vkllm";
  else if (std::string h = env("HOME"); !h.empty())
    s.cache = std::filesystem::path(h) / ".cache" / "vkllm";
  else
    throw Error("no cache folder for models: set VKLLM_CACHE (or HOME)");
  return s;
}

}  // namespace vkllm::hub
