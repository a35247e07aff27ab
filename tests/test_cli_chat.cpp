// `vkllm chat` and `vkllm template` as a user runs them: two piped turns answered by the default
// model, the printed prompt of a template, and one-line errors.
#include <algorithm>
#include <fstream>

#include "catch.h"
#include "cli.h"

using vkllm::test::run_vkllm;

namespace {

struct TextFile {
  std::string path;
  TextFile(const std::string& tag, const std::string& text)
      : path("/tmp/vkllm_cli_" + tag + "_" + std::to_string(getpid())) {
    std::ofstream(path, std::ios::binary) << text;
  }
  ~TextFile() { std::remove(path.c_str()); }
};

std::string templates() { return std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/"; }

}  // namespace

TEST_CASE("vkllm chat answers two piped turns on the default model", "[cli][chat]") {
  TextFile turns("chat_turns", "In the beginning\n/reset\nAnd God said\n");
  auto r = run_vkllm("chat -n 6 --seed 3 --system 'Answer in the words of the King James Bible.'", "", turns.path);
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);  // one line per reply
  CHECK(r.out.size() > 4);
  CHECK(r.err.find("using ChatML") != std::string::npos);
  CHECK(r.err.find("(conversation cleared)") != std::string::npos);
}

TEST_CASE("vkllm chat: a bad turn is one error line and the conversation goes on", "[cli][chat]") {
  TextFile turns("chat_bad", "hello\nbad \xff byte\nagain\n/exit\nnever read\n");
  auto r = run_vkllm("chat -n 3 --seed 1", "", turns.path);
  CHECK(r.exit_code == 1);
  CHECK(r.err.find("error: the turn is not valid UTF-8\n") != std::string::npos);
  CHECK(std::count(r.out.begin(), r.out.end(), '\n') == 2);
}

TEST_CASE("vkllm template prints the rendered prompt exactly", "[cli][chat_template]") {
  TextFile messages("tpl_messages", R"([{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}])");
  auto r = run_vkllm("template --messages " + messages.path);  // the default model: ChatML
  CHECK(r.exit_code == 0);
  CHECK(r.out == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
  r = run_vkllm("template --template " + templates() + "meta-llama-Llama-3.1-8B-Instruct.jinja --messages " +
                messages.path + " --bos-token '<|begin_of_text|>' --no-generation-prompt");
  CHECK(r.exit_code == 0);
  CHECK(r.out.starts_with("<|begin_of_text|><|start_header_id|>system<|end_header_id|>\n\n"));
  CHECK(r.out.ends_with("Hi<|eot_id|>"));
}

TEST_CASE("vkllm template: bad input is one error line", "[cli][chat_template]") {
  TextFile not_array("tpl_obj", R"({"role": "user"})");
  TextFile not_json("tpl_bad", "[{");
  TextFile gemma_system("tpl_sys", R"([{"role": "system", "content": "S"}, {"role": "user", "content": "Hi"}])");
  TextFile broken("tpl_broken", "{% for m in messages %}{{ m.content }}");
  TextFile loops("tpl_loops", "{% for a in range(100000) %}{% for b in range(100000) %}x{% endfor %}{% endfor %}");
  auto one_error = [](const vkllm::test::CliResult& r) {
    INFO(r.err);
    CHECK(r.exit_code != 0);
    CHECK(r.err.starts_with("error: "));
    CHECK(std::count(r.err.begin(), r.err.end(), '\n') == 1);
    CHECK(r.out.empty());
  };
  one_error(run_vkllm("template --messages " + not_array.path));
  one_error(run_vkllm("template --messages " + not_json.path));
  one_error(run_vkllm("template --messages " + gemma_system.path + " --template " + templates() +
                      "google-gemma-2-2b-it.jinja"));
  one_error(run_vkllm("template --messages " + gemma_system.path + " --template " + broken.path));
  one_error(run_vkllm("template --messages " + gemma_system.path + " --template " + loops.path));
  auto r = run_vkllm("template --messages " + gemma_system.path + " --template " + templates() +
                     "google-gemma-2-2b-it.jinja");
  CHECK(r.err == "error: template: line 1: System role not supported\n");
}
