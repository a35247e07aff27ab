// Runs the built `vkllm` binary (or another program: vkllm-bench, the llama.cpp oracle) as a user
// would and captures what it prints.
#pragma once
#include <algorithm>
#include <cstddef>
#include <string>
#include <vector>

#include <nlohmann/json_fwd.hpp>

namespace vkllm::test {

struct CliResult {
  int exit_code = -1;
  std::string out, err;
};

// `args` is appended to the vkllm path (a shell command line: quotes and redirections work);
// `env` (e.g. "VK_ICD_FILENAMES=/none") is prefixed; `input` is the file read as stdin.
CliResult run_vkllm(const std::string& args, const std::string& env = "", const std::string& input = "/dev/null");
// `vkllm info --json` of the model file at `path`, required to exit 0 (its stderr is the failure's note).
nlohmann::json info_json(const std::string& path);
// The same for vkllm-bench.
CliResult run_bench(const std::string& args, const std::string& env = "");
// The same for any program.
CliResult run_program(const std::string& bin, const std::string& args, const std::string& env = "",
                      const std::string& input = "/dev/null");

// llama.cpp's pieces that scripts/fetch_llamacpp puts in build/llamacpp: the oracle program
// (tests/llamacpp) and the test vocabularies too large for tests/data/vocab. The *_missing
// functions say why one is unusable (for test::skip), or return "" when it is there.
std::string llamacpp_oracle_missing();
std::string mtmd_oracle_missing();                    // the image oracle (tests/llamacpp/mtmd_oracle.cpp)
std::string llamacpp_vocab(const std::string& name);  // the path of ggml-vocab-<name>.gguf
std::string llamacpp_vocab_missing(const std::string& name);
// An stb_image_write callback: appends what it writes to the std::vector<std::byte> at ctx.
inline void append_bytes(void* ctx, void* data, int size) {
  auto* out = static_cast<std::vector<std::byte>*>(ctx);
  out->insert(out->end(), static_cast<std::byte*>(data), static_cast<std::byte*>(data) + size);
}
// A file's bytes ("" when it cannot be read).
std::string read_file(const std::string& path);
// The lines of what a program printed ("error: ...\n" is one).
inline size_t line_count(const std::string& s) { return size_t(std::count(s.begin(), s.end(), '\n')); }

// A file under /tmp that removes itself.
struct TempFile {
  std::string path;
  explicit TempFile(const std::string& tag);
  ~TempFile();
  void write(const std::vector<std::byte>& bytes) const;
  void write(const std::string& text) const;
};

}  // namespace vkllm::test
