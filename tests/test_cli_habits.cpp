// What llama.cpp and Ollama users type, each with its exit status and message: the model as the
// first word (`run MODEL.gguf "text"`), a piped prompt, llama.cpp's flags (-cnv, --jinja, -fa,
// -ctk/-ctv, -np, -sys, --mlock, --no-mmap, --color), read errors that say why, serve's checks
// before anything loads, and `info`'s chat template.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <filesystem>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "output.h"
#include "pty_session.h"

using vkllm::test::CliResult;
using vkllm::test::line_count;
using vkllm::test::run_vkllm;
using vkllm::test::TempFile;

namespace {

void check_error(const CliResult& r, const std::string& message, int code) {
  INFO(r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err.starts_with("error: "));
  CHECK(r.err.find(message) != std::string::npos);
  CHECK(line_count(r.err) == 1);
  CHECK(r.out.empty());
}

const TempFile& chat_model() {
  static TempFile f = [] {
    TempFile t("habits_chatml");
    t.write(vkllm::make_fixture_model({.chat = "chatml"}));
    return t;
  }();
  return f;
}

}  // namespace

TEST_CASE("the model as the first word, as Ollama takes it", "[cli][habits]") {
  // A .gguf that is not there is an error, never the embedded model with the name as the prompt.
  check_error(run_vkllm("run smol.gguf -n 4"), "smol.gguf: cannot open: No such file or directory", 1);
  check_error(run_vkllm("chat smol.gguf"), "smol.gguf: cannot open: No such file or directory", 1);
  check_error(run_vkllm("chat smol"), "smol: no such file (a model is a .gguf file)", 1);
  check_error(run_vkllm(fmt::format("run {} -m {} hi", chat_model().path, chat_model().path)),
              "names a model, and so does -m", 2);
  auto r = run_vkllm(fmt::format("run {} 'In the beginning' -n 4 -s 1", chat_model().path));
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.out.starts_with("In the beginning"));
  CHECK(r.err.find(chat_model().path + " on ") != std::string::npos);
  CHECK(run_vkllm(fmt::format("run -p 'In the beginning' -n 4 -s 1 -m {}", chat_model().path)).out == r.out);
  TempFile turns("habits_turns");
  turns.write(std::string("hello\n"));
  auto c = run_vkllm(fmt::format("chat {} -n 3 -s 1", chat_model().path), "", turns.path);
  CHECK(c.exit_code == 0);
  CHECK(c.err.find("using ChatML") == std::string::npos);  // the file's own template
  CHECK(line_count(c.out) == 1);
}

TEST_CASE("a piped prompt, an empty one, and read errors that say why", "[cli][habits]") {
  TempFile prompt("habits_prompt");
  prompt.write(std::string("And God said\n"));
  auto piped = run_vkllm("run -n 3 -s 4", "", prompt.path);
  auto given = run_vkllm("run -n 3 -s 4 -p 'And God said'");
  INFO(piped.err);
  CHECK(piped.exit_code == 0);
  CHECK(piped.out == given.out);  // the pipe's last newline is not part of the prompt
  auto empty = run_vkllm("run -n 2 -s 1 -p ''");
  CHECK(empty.exit_code == 0);
  CHECK(empty.err.find("warning: the prompt is empty: the text starts from nothing\n") != std::string::npos);
  char dir[] = "/tmp/vkllm_adir_XXXXXX";
  REQUIRE(mkdtemp(dir));
  check_error(run_vkllm(fmt::format("run -f {}", dir)), fmt::format("error: {}: is a directory\n", dir), 1);
  check_error(run_vkllm(fmt::format("run -f {}/none", dir)), fmt::format("{}/none: no such file or directory", dir), 1);
  check_error(run_vkllm(fmt::format("info -m {}", dir)), fmt::format("{}: is a directory", dir), 1);
  std::filesystem::remove(dir);
}

TEST_CASE("llama.cpp's flags work or say in one line what they mean", "[cli][habits]") {
  TempFile turns("habits_cnv");
  turns.write(std::string("In the beginning\n"));
  auto chat = run_vkllm("chat -n 4 -s 2 --system 'Be brief.'", "", turns.path);
  REQUIRE(chat.exit_code == 0);
  for (std::string args : {"run -cnv -n 4 -s 2 -sys 'Be brief.'", "run -n 4 -s 2 --system-prompt 'Be brief.' -cnv",
                           "-cnv -n 4 -s 2 --jinja -sys 'Be brief.'", "chat -n 4 -s 2 --system 'Be brief.' --jinja"}) {
    auto r = run_vkllm(args, "", turns.path);
    INFO(args << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == chat.out);
  }
  auto chat_help = run_vkllm("chat --help");
  CHECK(chat_help.exit_code == 0);
  for (std::string line :
       {"Slash commands (a line that starts with /):\n", "  /? or /help ", "  /bye or /exit ", "  /set NAME VALUE ",
        "  /show model|template|settings|system\n", "  /save FILE, /load FILE "})
    CHECK(chat_help.out.find(line) != std::string::npos);
  // -p with -cnv is the first message, as llama-cli takes it; the input then goes on.
  auto first = run_vkllm("run -cnv -n 4 -s 2 --system 'Be brief.' -p 'In the beginning'");
  INFO(first.err);
  CHECK(first.exit_code == 0);
  CHECK(first.out == chat.out);
  // Accepted: flash attention is all vkllm has; mmap and mlock have no meaning once on the GPU.
  auto plain = run_vkllm("run -n 3 -s 5 -p x");
  for (std::string flags : {"-fa", "-fa on", "--flash-attn auto", "--mlock --no-mmap", "-fa -ngl 99 --mlock"}) {
    auto r = run_vkllm("run " + flags + " -n 3 -s 5 -p x");
    INFO(flags << "\n" << r.err);
    CHECK(r.exit_code == 0);
    CHECK(r.out == plain.out);
  }
  auto help = run_vkllm("run --help").out;
  CHECK(help.find("the weights live in GPU memory once loaded, so there is nothing to lock") != std::string::npos);
  CHECK(help.find("attention is always flash attention") != std::string::npos);
  check_error(run_vkllm("run -fa off -p x"), "--flash-attn: vkllm has only flash attention; drop -fa off", 2);
  check_error(run_vkllm("run --flash-attn=maybe -p x"), "--flash-attn: 'maybe' is not one of on, off, auto", 2);
  // -fa takes only on|off|auto as its value: any other word after it stays what it was.
  check_error(run_vkllm("run -fa maybe -p x"), "the prompt is given twice: -p and the text 'maybe'", 2);

  // -ctk/-ctv are --kv-type: one type for K and V.
  auto q8 = run_vkllm("run -ctk q8_0 -ctv q8_0 -n 2 -p x");
  CHECK(q8.exit_code == 0);
  CHECK(q8.err.find("(256 tokens, q8_0)") != std::string::npos);
  CHECK(run_vkllm("run --cache-type-v q4_0 -n 2 -p x").err.find("(256 tokens, q4_0)") != std::string::npos);
  check_error(run_vkllm("run -ctk q8_0 -ctv f16 -p x"),
              "-ctk q8_0 and -ctv f16 differ: vkllm stores K and V in one type (--kv-type)", 2);
  check_error(run_vkllm("run --kv-type f32 -ctk q8_0 -p x"), "--kv-type f32 and -ctk/-ctv q8_0 differ", 2);
  check_error(run_vkllm("run -ctk q5_1 -p x"), "--cache-type-k: 'q5_1' is not one of f16, f32, q8_0, q4_0", 2);

  // -np is --parallel where there is one.
  auto info = run_vkllm("info -np 3");
  CHECK(info.out.find("--parallel 3 slots") != std::string::npos);
  check_error(run_vkllm("run -np 2 -p x"),
              "unknown option -np for vkllm run (llama.cpp's --parallel, which vkllm run has not)", 2);

  // --color: the prompt in colour, on a terminal (auto, the flag alone) or always (on).
  CHECK(run_vkllm("run --color on -n 2 -p x").out.starts_with("\033[33mx\033[0m"));
  CHECK(run_vkllm("run --color -n 2 -p x").out.starts_with("x"));  // stdout is a file here
  CHECK(run_vkllm("run -co off -n 2 -p x").out.starts_with("x"));
  check_error(run_vkllm("run --color=pink -p x"), "--color: 'pink' is not one of on, off, auto", 2);
}

TEST_CASE("serve checks its host, port and context before loading anything", "[cli][habits][serve]") {
  auto t0 = std::chrono::steady_clock::now();
  check_error(run_vkllm("serve --port abc"), "--port: 'abc' is not an integer in [0, 65535]", 2);
  check_error(run_vkllm("serve --port 70000"), "--port: '70000' is not an integer in [0, 65535]", 2);
  check_error(run_vkllm("run -n abc -p x"), "--n-predict: 'abc' is not an integer >= -1", 2);  // one wording
  check_error(run_vkllm("serve --parallel 0"), "--parallel: '0' is not an integer in [1, 256]", 2);
  check_error(run_vkllm("serve --host 999.1.1.1"), "--host: '999.1.1.1' is not an IPv4 address", 2);
  check_error(run_vkllm("serve --host 'fe80::zz'"), "--host: 'fe80::zz' is not an IPv6 address", 2);
  check_error(run_vkllm("serve --ctx 1"),
              "--ctx 1 is less than the 35 tokens the shortest request needs (a chat template's frame around one "
              "token, and one token of reply)",
              1);
  check_error(run_vkllm("chat --ctx 5"), "--ctx 5 is less than the 35 tokens the shortest request needs", 1);
  // A port someone else holds.
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}, .sin_zero = {}};
  REQUIRE(bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a) == 0);
  REQUIRE(listen(fd, 1) == 0);
  socklen_t len = sizeof a;
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
  int port = ntohs(a.sin_port);
  check_error(run_vkllm(fmt::format("serve --port {}", port)),
              fmt::format("--port {}: 127.0.0.1:{} is in use", port, port), 1);
  close(fd);
  double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  CHECK(seconds < 30);  // nothing was loaded onto the GPU
}

TEST_CASE("info says whether the file has a chat template, and its family", "[cli][habits][info]") {
  auto none = run_vkllm("info");
  CHECK(none.out.find("template    none: vkllm chat and serve frame turns with ChatML\n") != std::string::npos);
  auto chatml = run_vkllm("info -m " + chat_model().path);
  CHECK(chatml.out.find("template    ChatML (the file's chat template)\n") != std::string::npos);
  TempFile llama3("habits_llama3");
  llama3.write(vkllm::make_fixture_model({.chat = "llama3"}));
  auto j = run_vkllm("info --json -m " + llama3.path);
  CHECK(j.out.find("\"chat_template\": {\n    \"family\": \"Llama 3\",\n    \"present\": true,\n    \"reasoning\": "
                   "false,\n    \"tool_calls\": \"generic\",\n    \"tool_calls_unread\": null\n  }") !=
        std::string::npos);
  CHECK(chatml.out.find("tool calls  hermes\n") != std::string::npos);
  // A template whose tool-call syntax vkllm does not read says so, naming the family.
  TempFile glm("habits_glm");
  glm.write(vkllm::make_fixture_model({.chat = "chatml",
                                       .chat_template = vkllm::test::read_file(
                                           std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/GLM-4.6.jinja")}));
  auto g = run_vkllm("info -m " + glm.path);
  CHECK(g.out.find("tool calls  not read: the template (GLM-4) writes them in a syntax vkllm does not know") !=
        std::string::npos);
  CHECK(run_vkllm("info --json -m " + glm.path).out.find("\"tool_calls_unread\": \"GLM-4\"") != std::string::npos);
}

TEST_CASE("loading a big file shows its progress and upload MB/s on a terminal", "[cli][habits]") {
  CHECK(vkllm::cli::load_progress_text("m.gguf", 512ull << 20, 2048ull << 20, 0.5) ==
        "loading m.gguf:  25% (512.0 MiB of 2.0 GiB, 1074 MB/s)");
  // 256 MiB of f32 embeddings (tied: no output matrix), the smallest file that shows it.
  TempFile big("habits_big");
  big.write(vkllm::make_fixture_model({.dim = 1024,
                                       .n_layers = 1,
                                       .n_heads = 8,
                                       .n_kv_heads = 8,
                                       .hidden_dim = 256,
                                       .vocab_size = 65536,
                                       .tied_embeddings = true,
                                       .weight_type = vkllm::DType::F32}));
  REQUIRE(std::filesystem::file_size(big.path) >= vkllm::cli::kLoadProgressBytes);
  vkllm::test::PtySession s({"run", "-m", big.path, "-n", "1", "-p", "x"});
  CHECK(s.wait_exit(300) == 0);
  CHECK(s.output().find("loading " + big.path + ": 100% (") != std::string::npos);
  CHECK(s.output().find(" MB/s)") != std::string::npos);
  auto quiet = run_vkllm("run -n 1 -p x -m " + big.path);  // not a terminal: no progress
  CHECK(quiet.exit_code == 0);
  CHECK(quiet.err.find("loading ") == std::string::npos);
}
