// The command line as users coming from llama.cpp or Ollama type it: every flag is checked before a
// model is loaded, with the allowed values in one `error:` line; llama.cpp's spellings (-ngl, -c,
// -s, -t, -f) work; unknown commands and options are named; lost output is an error.
#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <sys/wait.h>

#include <algorithm>
#include <cstdlib>
#include <fstream>
#include <optional>

#include "catch.h"
#include "cli.h"
#include "host_memory.h"

using vkllm::test::line_count;
using vkllm::test::run_bench;
using vkllm::test::run_vkllm;
using vkllm::test::TempFile;

namespace {

struct Case {
  std::string args, message;
  int exit_code = 2;  // 2: the command line; 1: what it names
};

void check_error(const Case& c, const vkllm::test::CliResult& r) {
  INFO(c.args << "\n" << r.err);
  CHECK(r.exit_code == c.exit_code);
  CHECK(r.err.starts_with("error: "));
  CHECK(r.err.find(c.message) != std::string::npos);
  CHECK(line_count(r.err) == 1);
  CHECK(r.out.empty());
  CHECK(r.err.find("loading") == std::string::npos);
}

}  // namespace

TEST_CASE("numeric flags are checked against the range help shows", "[cli-flags]") {
  const Case cases[] = {
      {"run --temp abc -p x", "--temp: 'abc' is not a number >= 0"},
      {"run --temp -1 -p x", "--temp: '-1' is not a number >= 0"},
      {"run --top-k -1 -p x", "--top-k: '-1' is not an integer >= 0"},
      {"run --top-p 0 -p x", "--top-p: '0' is not a number in (0, 1]"},
      {"run --top-p 1.5 -p x", "--top-p: '1.5' is not a number in (0, 1]"},
      {"run --min-p 1 -p x", "--min-p: '1' is not a number in [0, 1)"},
      {"run --repeat-penalty 0 -p x", "--repeat-penalty: '0' is not a number > 0"},
      {"run --temp nan -p x", "--temp: 'nan' is not a number >= 0"},
      {"run -n -2 -p x", "--n-predict: '-2' is not an integer >= -1"},
      {"run -n 99999999999 -p x", "--n-predict: '99999999999' is too large (at most 2147483647)"},
      {"run -s -2 -p x", "--seed: '-2' is not an integer >= -1"},
      {"run -c -1 -p x", "--ctx-size: '-1' is not an integer in [0, 1048576]"},
      {"run -b 0 -p x", "--batch-size: '0' is not an integer in [1, 4096]"},
      {"run --kv-type q8 -p x", "--kv-type: 'q8' is not one of f16, f32"},
      {"run --logprobs 101 -p x --json", "--logprobs: '101' is not an integer in [0, 100]"},
      {"bench -p -1", "--n-prompt: '-1' is not an integer in [0, 1048576]"},
      {"run --stop '' -p x", "--stop: an empty stop string"},
      {"run --logprobs 3 -p x", "--logprobs requires --json"},
      {"chat --top-p 0", "--top-p: '0' is not a number in (0, 1]"},
      {"chat -n -5", "--n-predict: '-5' is not an integer >= -1"},
      {"chat --system a --system-file b", "--system excludes --system-file"},
      {"chat --system-file -", "--system-file: standard input holds the turns"},
      {"chat --stop x", "unknown option --stop for vkllm chat"},
  };
  for (const Case& c : cases) check_error(c, run_vkllm(c.args));
  auto help = run_vkllm("run --help");
  CHECK(help.out.find("--top-p P") != std::string::npos);
  CHECK(help.out.find("(in (0, 1], default 0.95)") != std::string::npos);
  CHECK(help.out.find("(in [0, 1), default 0.05)") != std::string::npos);
  CHECK(help.out.find("(>= -1, default 128)") != std::string::npos);
  CHECK(help.out.find("(>= 0, default 0.8)") != std::string::npos);
}

TEST_CASE("llama.cpp habits: -ngl is not -n gl, unknown options and commands are named", "[cli-flags]") {
  const Case cases[] = {
      {"run -xy -p x", "unknown option -xy for vkllm run: short options are one letter, as in -n 5"},
      {"tokenize -ctk q8_0 -p x", "unknown option -ctk for vkllm tokenize (llama.cpp's --cache-type-k, which"},
      {"run -n 5 -i -f x", "unknown option -f for vkllm chat"},  // -i is chat, which takes no -f
      {"tokenize -i -p x", "unknown option -i for vkllm tokenize"},
      {"run --nope -p x", "unknown option --nope for vkllm run (see vkllm run --help)"},
      {"tokenize -ngl 5 -p x", "unknown option -ngl for vkllm tokenize"},
      {"run -ngl", "--n-gpu-layers needs a value (N; see vkllm run --help)"},
      {"bogus",
       "unknown command 'bogus' (commands: devices, info, tokenize, detokenize, run, logits, attention, bench, "
       "perplexity"},
      {"help bogus", "unknown command 'bogus'"},
      {"-m x.gguf run", "unknown option -m before the command"},
      {"", "no command given"},
      {"run -p a -f b", "--prompt excludes --file"},
      {"run -m '' -p x", "--model: the path is empty"},
      {"run -f '' ", "--file: the path is empty"},
  };
  for (const Case& c : cases) check_error(c, run_vkllm(c.args));
  // Accepted and run: -ngl/-t are ignored (everything runs on the GPU), -c/-s are --ctx/--seed.
  auto a = run_vkllm("run -ngl 99 -t 8 -c 64 -s 7 -n 4 -p 'In the beginning'");
  auto b = run_vkllm("run --n-gpu-layers 0 --threads 1 --ctx 64 --seed 7 -n 4 -p 'In the beginning'");
  INFO(a.err);
  REQUIRE(a.exit_code == 0);
  CHECK(a.out == b.out);
  CHECK(a.err.find("KV cache 192.0 KiB (64 tokens, f16)") != std::string::npos);
  CHECK(a.err.find("(seed 7)") != std::string::npos);
}

TEST_CASE("llama.cpp's -i is vkllm chat, with the same flags", "[cli-flags]") {
  TempFile turns("turns");
  turns.write(std::string("In the beginning\n"));
  auto chat = run_vkllm("chat -n 4 -s 2 --temp 0.5", "", turns.path);
  auto run_i = run_vkllm("run -n 4 -i -s 2 --temp 0.5", "", turns.path);
  auto bare_i = run_vkllm("-i -n 4 -s 2 --temp 0.5", "", turns.path);
  INFO(chat.err << run_i.err << bare_i.err);
  REQUIRE(chat.exit_code == 0);
  CHECK(!chat.out.empty());
  CHECK(run_i.exit_code == 0);
  CHECK(run_i.out == chat.out);
  CHECK(bare_i.out == chat.out);
}

TEST_CASE("vkllm --version, help CMD and --help", "[cli-flags]") {
  auto v = run_vkllm("--version");
  CHECK(v.exit_code == 0);
  CHECK(v.out.starts_with("vkllm "));
  auto h = run_vkllm("help run"), h2 = run_vkllm("run --help");
  CHECK(h.exit_code == 0);
  CHECK(h.out == h2.out);
  CHECK(h.out.find("-f,--file FILE") != std::string::npos);
  auto top = run_vkllm("help");
  CHECK(top.exit_code == 0);
  CHECK(top.out.find("perplexity") != std::string::npos);
}

TEST_CASE("a FIFO or a directory as the model is refused at once", "[cli-flags]") {
  std::string fifo = fmt::format("/tmp/vkllm_cli_{}_fifo", getpid());
  REQUIRE(mkfifo(fifo.c_str(), 0600) == 0);
  for (std::string cmd : {"info", "run -p x", "tokenize -p x"}) {
    auto r = run_vkllm(fmt::format("{} -m {}", cmd, fifo), "timeout 20");  // a hang would end as 124
    check_error({cmd, fifo + ": not a regular file", 1}, r);
  }
  check_error({"info -m /tmp", "/tmp: is a directory", 1}, run_vkllm("info -m /tmp"));
  std::remove(fifo.c_str());
}

// vkllm with its stdout redirected as `redirect` says; stderr captured.
static vkllm::test::CliResult with_stdout(const std::string& args, const std::string& redirect) {
  TempFile err("stderr");
  int status = std::system(fmt::format("{} {} {} 2>{} </dev/null", VKLLM_BIN, args, redirect, err.path).c_str());
  std::ifstream in(err.path);
  return {WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status), "",
          std::string(std::istreambuf_iterator<char>(in), {})};
}

TEST_CASE("output lost on a full or closed stdout is an error", "[cli-flags]") {
  for (std::string args : {"info", "tokenize -p hello", "run -p hi -n 2", "detokenize --tokens 1,2,3 --json"})
    for (std::string redirect : {">/dev/full", ">&-"}) {
      auto r = with_stdout(args, redirect);
      INFO(args << " " << redirect << "\n" << r.err);
      CHECK(r.exit_code == 1);
      CHECK(r.err.find("error: cannot write to standard output: ") != std::string::npos);
    }
  // A pipe closed early (| head) ends quietly by SIGPIPE, as every Unix tool does.
  auto piped = with_stdout("info", "| head -c 1 >/dev/null");
  CHECK(piped.err.empty());
}

// A fixture bigger than memory is refused before any weight is made, with a --layers that fits
// (Qwen3-30B-A3B in f32: 122 GB; where a machine has that much free, there is nothing to refuse).
TEST_CASE("vkllm-bench fixture refuses a model that cannot fit in memory", "[cli-flags]") {
  std::optional<uint64_t> free = vkllm::available_host_memory();
  if (!free || *free / 4 * 3 >= 122'000'000'000ull) {
    WARN("this machine could write the fixture: the refusal is not exercised");
    return;
  }
  std::string out = fmt::format("/tmp/vkllm_test_huge_{}.gguf", getpid());
  auto r = run_bench("fixture --preset qwen3-30b-a3b --type f32 -o " + out);
  check_error({"fixture --preset qwen3-30b-a3b --type f32", "fixture: qwen3-30b-a3b with 48 layers needs 12", 1}, r);
  CHECK(r.err.find("GB is available: pass --layers ") != std::string::npos);
  CHECK(!std::ifstream(out).good());
}

TEST_CASE("vkllm-bench checks its flags before touching the device", "[cli-flags]") {
  const Case cases[] = {
      {"matvec --tokens 9", "--tokens: '9' is not an integer in [1, 8]"},
      {"matvec --rows 0", "--rows: '0' is not an integer in [1, 16777216]"},
      {"matvec --cols 100 --type q4_k", "--cols 100: not a multiple of the q4_k block of 256 values", 1},
      {"matvec --type iq2_xxs", "--type: 'iq2_xxs' is not one of f32, f16, bf16, q8_0"},
      {"matmul --k 48 --type q8_0", "--k 48: not a multiple of the q8_0 block of 32 values", 1},
      {"attention --heads 6 --kv-heads 4", "--kv-heads 4 does not divide --heads 6", 1},
      {"fixture --preset smollm2-135m --layers 0 -o /tmp/x.gguf", "--layers: '0' is not an integer in [1, 1024]"},
      {"fixture --preset smollm2-135m --type iq2_xxs -o /tmp/x.gguf", "--type: 'iq2_xxs' is not one of f32"},
      {"fixture --preset gpt5 -o /tmp/x.gguf", "--preset: 'gpt5' is not one of"},
      {"fixture --preset small --fused-gate-up -o /tmp/x.gguf",
       "fixture: llama.cpp reads no fused expert gate/up (ffn_gate_up_exps) for llama without experts", 1},
      {"fixture --preset small-mla --fused-qkv -o /tmp/x.gguf",
       "fixture: llama.cpp reads no fused QKV (attn_qkv) for deepseek2", 1},
      {"matvec --profile fast", "--profile: 'fast' is not one of generic"},
      {"matvec -x", "unknown option -x for vkllm-bench matvec"},
  };
  for (const Case& c : cases) {
    auto r = run_bench(c.args, "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json");
    check_error(c, r);
  }
}
