// Runs the built `vkllm` binary as a user would and captures what it prints.
#pragma once
#include <cstddef>
#include <string>
#include <vector>

namespace vkllm::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// `args` is appended to the vkllm path; `env` (e.g. "VK_ICD_FILENAMES=/none") is prefixed; stdin
// reads `input` (a file).
CliResult run_vkllm(const std::string& args, const std::string& env = "", const std::string& input = "/dev/null");

// A file under /tmp that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& tag);
  ~TempFile();
  void write(const std::vector<std::byte>& bytes) const;
};

}  // namespace vkllm::test
