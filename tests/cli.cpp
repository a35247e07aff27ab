// Runs the vkllm binary through the shell, stdout and stderr captured into temporary files.
#include "cli.h"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>

namespace vkllm::test {

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

CliResult run_program(const std::string& bin, const std::string& args, const std::string& env,
                      const std::string& input) {
  std::string base = "/tmp/vkllm_cli_" + std::to_string(getpid());
  std::string cmd = env + " " + bin + " " + args + " >" + base + ".out 2>" + base + ".err <" + input;
  int status = std::system(cmd.c_str());
  CliResult r;
  r.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
  r.out = read_file(base + ".out");
  r.err = read_file(base + ".err");
  std::remove((base + ".out").c_str());
  std::remove((base + ".err").c_str());
  return r;
}

CliResult run_vkllm(const std::string& args, const std::string& env, const std::string& input) {
  return run_program(VKLLM_BIN, args, env, input);
}

CliResult run_bench(const std::string& args, const std::string& env) {
  return run_program(VKLLM_BENCH_BIN, args, env, "/dev/null");
}

TempFile::TempFile(const std::string& tag) : path("/tmp/vkllm_cli_" + std::to_string(getpid()) + "_" + tag + ".gguf") {}

TempFile::~TempFile() { std::remove(path.c_str()); }

void TempFile::write(const std::string& text) const { std::ofstream(path, std::ios::binary) << text; }

void TempFile::write(const std::vector<std::byte>& bytes) const {
  std::ofstream(path, std::ios::binary)
      .write(reinterpret_cast<const char*>(bytes.data()), std::streamsize(bytes.size()));
}

}  // namespace vkllm::test
