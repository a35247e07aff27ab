// What both oracle programs (llamacpp_oracle.cpp, mtmd_oracle.cpp) do with llama.cpp's logging:
// llama.cpp logs a lot; keep its first error-level line (the cause; later ones say what gave up)
// to explain a failure, and print nothing else.
#pragma once
#include <ggml.h>

#include <stdexcept>
#include <string>

namespace oracle {

inline std::string& first_error() {
  static std::string line;
  return line;
}

inline void quiet_log(ggml_log_level level, const char* text, void*) {
  if (level != GGML_LOG_LEVEL_ERROR || !text) return;
  std::string line(text);
  while (!line.empty() && (line.back() == '\n' || line.back() == ' ')) line.pop_back();
  if (!line.empty() && first_error().empty()) first_error() = line;
}

[[noreturn]] inline void fail(const std::string& what) {
  const std::string& e = first_error();
  throw std::runtime_error(e.empty() ? what : what + " (llama.cpp: " + e + ")");
}

}  // namespace oracle
