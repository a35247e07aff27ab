// What the commands print: stdout writes that fail loudly (a full disk or a closed stdout is an
// error, not a silent exit 0), JSON that survives invalid UTF-8, counts with their plural, sizes.
#pragma once
#include <cstdint>
#include <nlohmann/json.hpp>
#include <string>
#include <string_view>

namespace vkllm::cli {

// Writes to stdout, flushed; throws Error "cannot write to standard output: ..." on failure.
void write_stdout(std::string_view text);
// One JSON document and a newline; invalid UTF-8 in strings becomes U+FFFD.
void print_json(const nlohmann::json& j);
// main's last step: flushes stdout and throws Error if anything written to it was lost.
void finish_stdout();

// A token's piece on one line: \n, \t, \r, \\ and other control characters (and, in a partial
// UTF-8 character, every high byte) written as escapes.
std::string escape_piece(std::string_view piece);
// "1 token", "2 tokens".
std::string count(uint64_t n, std::string_view singular, std::string_view plural = {});
// "12.5 MiB".
std::string human_bytes(double bytes);

// "loading NAME: 42% (1.1 GiB of 2.6 GiB, 850 MB/s)": a model upload's progress line.
std::string load_progress_text(const std::string& name, uint64_t done, uint64_t total, double seconds);
// Files from this size on show their upload's progress on a terminal (smaller ones load in a blink).
inline constexpr uint64_t kLoadProgressBytes = 256ull << 20;

}  // namespace vkllm::cli
