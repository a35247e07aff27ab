// `vkllm chat` at a terminal (a pseudo-terminal, tests/pty_session.h), as llama-cli -cnv and
// `ollama run` behave: Ctrl-C stops a reply and the conversation goes on, slash commands are not
// sent to the model, """ and a trailing backslash continue a message, and Ctrl-C at an empty
// prompt, Ctrl-D, /bye and /exit all leave with exit status 0 and a final newline.
#include <fmt/format.h>
#include <unistd.h>

#include <chrono>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "catch.h"
#include "cli.h"
#include "pty_session.h"

using vkllm::test::PtySession;

namespace {

std::string temp_path(const std::string& tag) { return fmt::format("/tmp/vkllm_tty_{}_{}.json", getpid(), tag); }

}  // namespace

TEST_CASE("chat at a terminal: Ctrl-C stops the reply and the conversation goes on", "[cli][chat][tty]") {
  PtySession s({"chat", "-n", "-1", "--seed", "1", "--verbose"});
  REQUIRE(s.wait_for("Send a message (/? for help)\r\n"));
  REQUIRE(s.type_line("In the beginning"));
  size_t reply = s.output().size();
  REQUIRE(s.wait_for("LORD", 120, reply));  // the reply is streaming
  s.send("\x03");
  REQUIRE(s.wait_for("first token after", 60, reply));  // --verbose: the reply's statistics
  std::string saved = temp_path("conv");
  REQUIRE(s.type_line("/save " + saved));
  REQUIRE(s.wait_for("Saved 2 messages to " + saved, 30));
  REQUIRE(s.type_line("/bye"));
  CHECK(s.wait_exit() == 0);
  auto messages = nlohmann::json::parse(vkllm::test::read_file(saved));
  std::remove(saved.c_str());
  REQUIRE(messages.size() == 2);
  CHECK(messages[0] == nlohmann::json({{"role", "user"}, {"content", "In the beginning"}}));
  CHECK(messages[1]["role"] == "assistant");
  std::string kept = messages[1]["content"];
  CHECK(kept.find("LORD") != std::string::npos);  // what was shown before Ctrl-C stays
}

TEST_CASE("chat at a terminal: slash commands and multi-line messages", "[cli][chat][tty]") {
  std::string conv = temp_path("load");
  std::ofstream(conv) << R"([{"role": "system", "content": "Speak as the King James Bible."},
                           {"role": "user", "content": "Who?"}, {"role": "assistant", "content": "Moses."}])";
  PtySession s({"chat", "-n", "4", "--seed", "2"});
  REQUIRE(s.type_line("/?"));
  REQUIRE(s.wait_for("/set NAME VALUE"));
  REQUIRE(s.type_line("/set temperature 0"));
  REQUIRE(s.wait_for("Set temperature to 0."));
  REQUIRE(s.type_line("/set top_k abc"));
  REQUIRE(s.wait_for("error: /set top_k: 'abc' is not an integer >= 0"));
  REQUIRE(s.type_line("/set context 2"));  // refused while the model still runs
  REQUIRE(s.wait_for("error: /set context 2 is less than the 35 tokens the shortest request needs"));
  REQUIRE(s.type_line("/set parameter num_ctx 200"));  // Ollama's spelling; the model loads again
  REQUIRE(s.wait_for("Set context to 200 tokens"));
  REQUIRE(s.type_line("/set system Answer briefly."));
  REQUIRE(s.wait_for("Set the system message."));
  REQUIRE(s.type_line("/show settings"));
  REQUIRE(s.wait_for("system          Answer briefly."));
  CHECK(s.output().find("temperature     0\r\n") != std::string::npos);
  CHECK(s.output().find("context         200 tokens\r\n") != std::string::npos);
  REQUIRE(s.type_line("/show model"));
  REQUIRE(s.wait_for("template        none in the file: ChatML"));
  REQUIRE(s.type_line("/show template"));
  REQUIRE(s.wait_for("<|im_start|>"));
  REQUIRE(s.type_line("/load " + conv));
  REQUIRE(s.wait_for("Loaded 3 messages from " + conv));
  REQUIRE(s.type_line("/show system"));
  REQUIRE(s.wait_for("Speak as the King James Bible."));
  REQUIRE(s.type_line("/frobnicate"));
  REQUIRE(s.wait_for("error: unknown command '/frobnicate' (/? lists the commands)"));
  // """ ... """ and a trailing backslash make one message of several lines.
  REQUIRE(s.type_line("\"\"\"First line"));
  REQUIRE(s.wait_for("... "));
  s.send("second line\"\"\"\r");
  size_t at = s.output().size();
  REQUIRE(s.type_line("one \\"));
  REQUIRE(s.wait_for("one \\\r\n... ", 60, at));
  s.send("two\r");
  std::string saved = temp_path("multi");
  REQUIRE(s.type_line("/save " + saved));
  REQUIRE(s.wait_for("Saved 7 messages"));
  REQUIRE(s.type_line("/clear"));
  REQUIRE(s.wait_for("(conversation cleared)"));
  REQUIRE(s.type_line("/exit"));
  CHECK(s.wait_exit() == 0);  // the error lines above do not change it at a terminal
  auto m = nlohmann::json::parse(vkllm::test::read_file(saved));
  std::remove(saved.c_str());
  std::remove(conv.c_str());
  REQUIRE(m.size() == 7);
  CHECK(m[3]["content"] == "First line\nsecond line");
  CHECK(m[5]["content"] == "one \ntwo");
}

TEST_CASE("chat at a terminal: Ctrl-C at an empty prompt, Ctrl-D and /bye leave with 0 and a newline",
          "[cli][chat][tty]") {
  {
    PtySession s({"chat", "-n", "2"});
    REQUIRE(s.type_line("typed, then Enter"));  // a reply
    REQUIRE(s.type_line(""));                   // an empty line is no turn
    size_t at = s.output().size();
    REQUIRE(s.type("abc"));
    REQUIRE(s.wait_for("abc", 10, at));
    s.send("\x03");  // clears the typed line: a fresh prompt
    REQUIRE(s.wait_for("\r\n> ", 10, at));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    s.send("\x03");  // at an empty prompt: leave
    CHECK(s.wait_exit() == 0);
    CHECK(s.output().ends_with("\r\n"));
  }
  {
    PtySession s({"chat", "-n", "2"});
    REQUIRE(s.type_line("hello"));
    REQUIRE(s.type("\x04"));
    CHECK(s.wait_exit() == 0);
    CHECK(s.output().ends_with("\r\n"));
  }
  {
    PtySession s({"chat", "-n", "2", "-m", "/nonexistent.gguf"});
    CHECK(s.wait_exit() == 1);
    CHECK(s.output().find("error: /nonexistent.gguf: cannot open") != std::string::npos);
  }
}
