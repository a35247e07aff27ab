// Runs the vkllm binary through the shell, stdout and stderr captured into temporary files.
#include "cli.h"

#include <sys/wait.h>
#include <unistd.h>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <nlohmann/json.hpp>

#include "catch.h"

namespace vkllm::test {

nlohmann::json info_json(const std::string& path) {
  CliResult r = run_vkllm("info --json -m " + path);
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  return nlohmann::json::parse(r.out);
}

std::string read_file(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  std::stringstream ss;
  ss << f.rdbuf();
  return ss.str();
}

namespace {

// Why build/llamacpp lacks what a test needs: the reason fetch_llamacpp wrote, else `otherwise`.
std::string llamacpp_skipped(const std::string& otherwise) {
  std::ifstream why(VKLLM_BUILD_DIR "/llamacpp/SKIPPED");
  std::string reason;
  std::getline(why, reason);
  return reason.empty() ? otherwise : reason;
}

}  // namespace

std::string llamacpp_oracle_missing() {
  std::string oracle = VKLLM_LLAMACPP_ORACLE;
  if (!oracle.empty() && std::filesystem::exists(oracle)) return "";
  return "llama.cpp oracle not built (" +
         llamacpp_skipped("build/llamacpp has no llama.cpp libraries: scripts/test fetches them with npm") + ")";
}

std::string mtmd_oracle_missing() {
  std::string oracle = VKLLM_MTMD_ORACLE;
  if (!oracle.empty() && std::filesystem::exists(oracle)) return "";
  return "llama.cpp's image oracle not built (" +
         llamacpp_skipped(
             "build/llamacpp has no llama.cpp libraries or mtmd source: scripts/test fetches them with npm") +
         ")";
}

std::string llamacpp_vocab(const std::string& name) {
  return std::string(VKLLM_BUILD_DIR) + "/llamacpp/vocab/ggml-vocab-" + name + ".gguf";
}

std::string llamacpp_vocab_missing(const std::string& name) {
  std::string path = llamacpp_vocab(name);
  for (const std::string& p : {path, path + ".inp", path + ".out"})
    if (!std::filesystem::exists(p))
      return "llama.cpp's test vocabulary " + name + " not fetched (" +
             llamacpp_skipped("no " + p + ": scripts/test fetches it with npm") + ")";
  return "";
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
