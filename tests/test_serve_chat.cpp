// /v1/chat/completions renders the messages with the model's chat template before tokenising:
// the prompt tokens serve hands to the generator are exactly those of the template's text (one
// BOS, control tokens parsed), chat_template_kwargs and tools reach the template, and a template
// that raises is a 400. Api is driven directly with a generator that records the prompt (no GPU).
#include <memory>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "recording_generator.h"
#include "serve/api.h"
#include "text/chat_template.h"

using namespace vkllm;

namespace {

struct ChatServer {
  std::vector<std::byte> bytes;
  std::unique_ptr<GgufFile> file;
  std::unique_ptr<test::RecordingGenerator> gen;
  std::unique_ptr<serve::Api> api;
  // chat: the fixture's template family ("" none: ChatML); source: a template of the test's own.
  ChatServer(const std::string& chat, const std::string& tokenizer, const std::string& source = "") {
    bytes = make_fixture_model({.vocab_size = 512, .tokenizer = tokenizer, .chat = chat});
    file = std::make_unique<GgufFile>(GgufFile::parse(bytes, "chat fixture"));
    // 2048 tokens: gpt-oss's template alone is 400 of the fixture's.
    gen = std::make_unique<test::RecordingGenerator>(Tokenizer::from_gguf(*file), ModelConfig::from_gguf(*file), 2048);
    auto t = std::make_shared<const ChatTemplate>(source.empty() ? ChatTemplate::from_gguf(*file)
                                                                 : ChatTemplate::parse(source));
    api = std::make_unique<serve::Api>(*gen, serve::ApiOptions{.model_id = "fixture", .chat_template = t});
  }
  serve::HttpReply chat(const nlohmann::json& body) const {
    return api->handle({.method = "POST", .path = "/v1/chat/completions", .body = body.dump()}, [] { return true; });
  }
};

const nlohmann::json kMessages = {{{"role", "system"}, {"content", "Be brief."}},
                                  {{"role", "user"}, {"content", "Hi there"}}};

}  // namespace

TEST_CASE("serve chat: a model without a template gets ChatML, tokenised with its control tokens", "[serve]") {
  ChatServer s("", "llama");
  serve::HttpReply r = s.chat({{"messages", kMessages}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  nlohmann::json j = nlohmann::json::parse(r.body);
  CHECK(j["object"] == "chat.completion");
  CHECK(j["choices"][0]["message"] == nlohmann::json({{"role", "assistant"}, {"content", "ok"}}));
  const Tokenizer& tok = s.gen->tokenizer();
  std::string want =
      "<|im_start|>system\nBe brief.<|im_end|>\n<|im_start|>user\nHi there<|im_end|>\n"
      "<|im_start|>assistant\n";
  CHECK(s.gen->prompt == tok.encode(want, tok.add_bos(), true));
  CHECK(j["usage"]["prompt_tokens"] == s.gen->prompt.size());
}

TEST_CASE("serve chat: the model's template is used, and a BOS it writes is not added twice", "[serve]") {
  ChatServer s("llama3", "llama");
  REQUIRE(s.chat({{"messages", kMessages}}).status == 200);
  const Tokenizer& tok = s.gen->tokenizer();
  REQUIRE(s.gen->prompt.size() > 2);
  CHECK(s.gen->prompt[0] == tok.bos());
  CHECK(s.gen->prompt[1] != tok.bos());
  ChatTemplate t = ChatTemplate::from_gguf(*s.file);
  std::string text = t.render(kMessages, {.bos_token = t.bos_token(), .eos_token = t.eos_token()});
  CHECK(text.find("<|start_header_id|>user<|end_header_id|>") != std::string::npos);
  CHECK(s.gen->prompt == tok.encode(text, false, true));
}

TEST_CASE("serve chat: chat_template_kwargs and tools reach the template, and a raising template is a 400", "[serve]") {
  ChatServer s("", "gpt2",
               "{% if not greeting %}{{ raise_exception('say hello first') }}{% endif %}"
               "{{ greeting }} {{ tools | length }} {{ messages[0].content }}");
  REQUIRE(s.chat({{"messages", kMessages},
                  {"chat_template_kwargs", {{"greeting", "hello"}}},
                  {"tools",
                   {{{"type", "function"}, {"function", {{"name", "a"}}}},
                    {{"type", "function"}, {"function", {{"name", "b"}}}}}}})
              .status == 200);
  CHECK(s.gen->prompt == s.gen->tokenizer().encode("hello 2 Be brief.", s.gen->tokenizer().add_bos(), true));

  serve::HttpReply r = s.chat({{"messages", kMessages}});
  INFO(r.body);
  CHECK(r.status == 400);
  nlohmann::json e = nlohmann::json::parse(r.body)["error"];
  CHECK(e["type"] == "invalid_request_error");
  CHECK(e["message"].get<std::string>().find("say hello first") != std::string::npos);
  CHECK(s.chat({{"messages", kMessages}, {"chat_template_kwargs", "x"}}).status == 400);
}

TEST_CASE("serve chat: past reasoning reaches templates that read `thinking`, as llama.cpp hands it to them",
          "[serve]") {
  auto source = [](const char* name) {
    return test::read_file(std::string(VKLLM_SOURCE_DIR) + "/tests/data/templates/" + name);
  };
  const nlohmann::json call = {{"id", "c1"},
                               {"type", "function"},
                               {"function", {{"name", "get_weather"}, {"arguments", "{\"city\":\"Oslo\"}"}}}};
  const nlohmann::json messages = {{{"role", "user"}, {"content", "Weather in Oslo?"}},
                                   {{"role", "assistant"},
                                    {"content", "Checking."},
                                    {"reasoning_content", "The tool knows."},
                                    {"tool_calls", {call}}},
                                   {{"role", "tool"}, {"tool_call_id", "c1"}, {"content", "sunny"}}};
  // LFM2.5 writes an assistant turn's `thinking` between <think> tags (past turns when asked to).
  ChatServer lfm("", "gpt2", source("LFM2.5-8B-A1B.jinja"));
  REQUIRE(lfm.chat({{"messages", messages}, {"chat_template_kwargs", {{"preserve_thinking", true}}}}).status == 200);
  std::string text = lfm.gen->tokenizer().decode(lfm.gen->prompt, false);
  INFO(text);
  CHECK(text.find("<think>The tool knows.</think>") != std::string::npos);
  // gpt-oss writes it as the analysis before the call; such a turn's content goes, as in llama.cpp
  // (the template refuses a call turn with both).
  ChatServer oss("", "gpt2", source("openai-gpt-oss-120b.jinja"));
  serve::HttpReply r = oss.chat({{"messages", messages}});
  INFO(r.body);
  REQUIRE(r.status == 200);
  text = oss.gen->tokenizer().decode(oss.gen->prompt, false);
  INFO(text);
  CHECK(text.find("<|channel|>analysis<|message|>The tool knows.<|end|>") != std::string::npos);
  CHECK(text.find("Checking.") == std::string::npos);
}
