// Real chat templates (tests/data/templates, from llama.cpp's models/templates) rendered over the
// conversations in conversations.json must give exactly what Python's jinja2 gave under Hugging
// Face's settings (expected/<template>.json, written by scripts/render_chat_templates), and fail
// where it failed (a template's raise_exception, an undefined variable, a sandbox refusal).
#include <fstream>
#include <sstream>
#include <string>

#include "catch.h"
#include "error.h"
#include "text/chat_template.h"

namespace {

using json = nlohmann::ordered_json;

std::string data_path(const std::string& name) {
  return std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/" + name;
}

std::string slurp(const std::string& path) {
  std::ifstream f(path, std::ios::binary);
  REQUIRE(f.good());
  std::stringstream s;
  s << f.rdbuf();
  return s.str();
}

}  // namespace

TEST_CASE("chat templates render byte-identically to Python jinja2", "[chat_template]") {
  json templates = json::parse(slurp(data_path("templates.json")));
  json cases = json::parse(slurp(data_path("conversations.json")));
  REQUIRE(templates.size() >= 29);
  size_t rendered = 0, raised = 0;
  for (const auto& [file, tokens] : templates.items()) {
    std::string stem = file.substr(0, file.size() - std::string(".jinja").size());
    json expected = json::parse(slurp(data_path("expected/" + stem + ".json")));
    vkllm::ChatTemplate t = vkllm::ChatTemplate::parse(slurp(data_path(file)));
    for (const auto& [name, c] : cases.items()) {
      INFO(stem << " / " << name);
      vkllm::ChatTemplate::Options o{.bos_token = tokens["bos_token"], .eos_token = tokens["eos_token"]};
      o.add_generation_prompt = c.value("add_generation_prompt", true);
      if (c.contains("tools")) o.tools = c["tools"];
      if (c.contains("extra")) o.extra = c["extra"];
      o.now = 1736936400;  // the script's strftime_now time
      const json& want = expected.at(name);
      if (want.contains("error")) {
        INFO("jinja2 raised " << want["error"].get<std::string>());
        CHECK_THROWS_AS(t.render(c["messages"], o), vkllm::Error);
        ++raised;
      } else {
        CHECK(t.render(c["messages"], o) == want["text"].get<std::string>());
        ++rendered;
      }
    }
  }
  CHECK(rendered > 350);
  CHECK(raised > 0);
}

TEST_CASE("chat template: a nlohmann::json conversation renders too", "[chat_template]") {
  // The server hands nlohmann::json (keys sorted); it converts to ordered_json implicitly.
  vkllm::ChatTemplate t = vkllm::ChatTemplate::parse(slurp(data_path("Qwen-Qwen2.5-7B-Instruct.jinja")));
  nlohmann::json messages = nlohmann::json::parse(R"([{"role": "user", "content": "Hi"}])");
  vkllm::ChatTemplate::Options o;
  o.extra = nlohmann::json::object();
  CHECK(t.render(messages, o) ==
        "<|im_start|>system\nYou are Qwen, created by Alibaba Cloud. You are a helpful assistant.<|im_end|>\n"
        "<|im_start|>user\nHi<|im_end|>\n<|im_start|>assistant\n");
}
