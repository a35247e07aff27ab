// Checked output for the commands.
#include "output.h"

#include <fmt/format.h>
#include <cerrno>
#include <cstdio>
#include <cstring>

#include "error.h"

namespace vkllm::cli {

namespace {

[[noreturn]] void write_failed() {
  throw Error(fmt::format("cannot write to standard output: {}", std::strerror(errno)));
}

}  // namespace

void write_stdout(std::string_view text) {
  if (std::fwrite(text.data(), 1, text.size(), stdout) != text.size() || std::fflush(stdout) != 0) write_failed();
}

void print_json(const nlohmann::json& j) {
  write_stdout(j.dump(2, ' ', false, nlohmann::json::error_handler_t::replace) + "\n");
}

void finish_stdout() {
  if (std::fflush(stdout) != 0 || std::ferror(stdout)) write_failed();
}

std::string count(uint64_t n, std::string_view singular, std::string_view plural) {
  if (n == 1) return fmt::format("1 {}", singular);
  return plural.empty() ? fmt::format("{} {}s", n, singular) : fmt::format("{} {}", n, plural);
}

std::string human_bytes(double b) {
  const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  for (; b >= 1024 && u < 4; ++u) b /= 1024;
  return u == 0 ? fmt::format("{} B", b) : fmt::format("{:.1f} {}", b, units[u]);
}

}  // namespace vkllm::cli
