#include "host_memory.h"

#include <fstream>
#include <limits>
#include <string>

namespace vkllm {

std::optional<uint64_t> available_host_memory() {
  std::ifstream f("/proc/meminfo");
  std::string key;
  uint64_t kib = 0;
  while (f >> key >> kib) {
    if (key == "MemAvailable:") return kib * 1024;
    f.ignore(std::numeric_limits<std::streamsize>::max(), '\n');
  }
  return std::nullopt;
}

}  // namespace vkllm
