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

bool valid_utf8(std::string_view s) {
  for (size_t i = 0; i < s.size();) {
    auto c = static_cast<unsigned char>(s[i]);
    size_t n = c < 0x80 ? 1 : (c >> 5) == 6 ? 2 : (c >> 4) == 14 ? 3 : (c >> 3) == 30 ? 4 : 0;
    if (n == 0 || i + n > s.size()) return false;
    for (size_t k = 1; k < n; ++k)
      if ((static_cast<unsigned char>(s[i + k]) & 0xC0) != 0x80) return false;
    i += n;
  }
  return true;
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

std::string load_progress_text(const std::string& name, uint64_t done, uint64_t total, double seconds) {
  int pct = total ? int(100 * done / total) : 100;
  double mb_s = seconds > 0 ? double(done) / 1e6 / seconds : 0;
  return fmt::format("loading {}: {:3}% ({} of {}, {:.0f} MB/s)", name, pct, human_bytes(double(done)),
                     human_bytes(double(total)), mb_s);
}

// A piece on one line: control characters and, in a partial UTF-8 character, every high byte
// are written as escapes.
std::string escape_piece(std::string_view p) {
  bool utf8 = valid_utf8(p);
  std::string out;
  for (char ch : p) {
    auto c = static_cast<unsigned char>(ch);
    if (c == '\n')
      out += "\\n";
    else if (c == '\t')
      out += "\\t";
    else if (c == '\r')
      out += "\\r";
    else if (c == '\\')
      out += "\\\\";
    else if (c < 0x20 || c == 0x7f || (c >= 0x80 && !utf8))
      out += fmt::format("\\x{:02x}", c);
    else
      out += ch;
  }
  return out;
}

}  // namespace vkllm::cli
