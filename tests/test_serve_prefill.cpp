// Through serve::Api with a scripted generator (tests/scripted_api.h): assistant prefill on the
// three chat doors (continue_final_message on /v1/chat/completions, a trailing assistant turn on
// /api/chat and /v1/messages), checked on the prompt the model is given and on what the client
// gets back (only what the model adds); Ollama's /api/generate in its own shape, whole and
// streamed; Gemma 4's calls read from its syntax; and templates whose tool syntax vkllm does not
// read, served without tools.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "scripted_api.h"
#include "serve_process.h"

using namespace vkllm;
using json = nlohmann::json;

namespace {

struct PrefillServer : test::ScriptedApi {
  using ScriptedApi::ScriptedApi;
  json call(const std::string& path, const json& body, int status = 200) const {
    serve::HttpReply r = post(path, body);
    INFO(path << " " << body.dump() << "\n" << r.body);
    REQUIRE(r.status == status);
    return json::parse(r.body);
  }
  std::string streamed(const std::string& path, const json& body) const {
    serve::HttpReply r = post(path, body);
    REQUIRE(r.status == 200);
    REQUIRE(r.stream);
    std::string text;
    r.stream([&](std::string_view s) { return text += s, true; }, [] { return true; });
    return text;
  }
  std::string prompt() const { return gen->tokenizer().decode(gen->prompt); }
};

json turns(std::initializer_list<std::pair<const char*, const char*>> t) {
  json out = json::array();
  for (auto [role, content] : t) out.push_back({{"role", role}, {"content", content}});
  return out;
}

}  // namespace

TEST_CASE("serve prefill: continue_final_message continues the assistant's message", "[serve_prefill]") {
  PrefillServer s("Qwen-Qwen3-0.6B.jinja");
  json body = {{"messages", turns({{"user", "Name a colour."}, {"assistant", "My favourite colour is"}})},
               {"continue_final_message", true},
               {"add_generation_prompt", false}};
  s.script({" blue", "."});
  json r = s.call("/v1/chat/completions", body);
  CHECK(s.prompt().ends_with("<|im_start|>assistant\nMy favourite colour is"));
  CHECK(r["choices"][0]["message"]["content"] == " blue.");
  // thinking off: the template's empty reasoning block stays before the continued text
  body["chat_template_kwargs"] = {{"enable_thinking", false}};
  s.script({" red."});
  s.call("/v1/chat/completions", body);
  CHECK(s.prompt().ends_with("<|im_start|>assistant\n<think>\n\n</think>\n\nMy favourite colour is"));
  // streamed: the deltas hold only the continuation
  body["stream"] = true;
  s.script({" gr", "een."});
  test::SseStream st = test::parse_sse(s.streamed("/v1/chat/completions", body));
  std::string joined;
  for (const json& e : st.events)
    if (!e["choices"].empty()) joined += e["choices"][0]["delta"].value("content", "");
  CHECK(joined == " green.");

  // continuing the reasoning: the reply goes on inside it
  json think = {{"messages", json::array({{{"role", "user"}, {"content", "2+2?"}},
                                          {{"role", "assistant"}, {"content", ""}, {"reasoning_content", "Two and"}}})},
                {"continue_final_message", true}};
  s.script({" two make four.\n</think>\n\n", "4"});
  json r2 = s.call("/v1/chat/completions", think);
  CHECK(s.prompt().ends_with("<|im_start|>assistant\n<think>\nTwo and"));
  CHECK(r2["choices"][0]["message"]["reasoning_content"] == "two make four.");
  CHECK(r2["choices"][0]["message"]["content"] == "4");

  // as llama-server: a trailing assistant message is continued unless the request says otherwise
  s.script({" purple."});
  s.call("/v1/chat/completions", {{"messages", body["messages"]}});
  CHECK(s.prompt().ends_with("assistant\nMy favourite colour is"));
  s.call("/v1/chat/completions", {{"messages", body["messages"]}, {"continue_final_message", false}});
  CHECK(s.prompt().ends_with("My favourite colour is<|im_end|>\n<|im_start|>assistant\n"));

  auto refused = [&](const json& b, const std::string& says) {
    json e = s.call("/v1/chat/completions", b, 400);
    CHECK(e["error"]["message"].get<std::string>().find(says) != std::string::npos);
  };
  refused({{"messages", body["messages"]}, {"continue_final_message", true}, {"add_generation_prompt", true}},
          "cannot both be true");
  refused({{"messages", turns({{"user", "Hi"}})}, {"continue_final_message", true}}, "the assistant's");
  refused({{"messages", body["messages"]}, {"continue_final_message", "everything"}}, "continue_final_message");
  refused({{"messages", turns({{"user", "Hi"}, {"assistant", "A"}, {"assistant", "B"}})}}, "two assistant messages");
  refused({{"messages", body["messages"]}, {"response_format", {{"type", "json_object"}}}}, "continued assistant");
}

TEST_CASE("serve prefill: gpt-oss continues its final channel, and Ollama and Anthropic prefill", "[serve_prefill]") {
  {
    PrefillServer s("openai-gpt-oss-120b.jinja");
    s.script({" world!"});
    json r = s.call("/v1/chat/completions", {{"messages", turns({{"user", "Say hello."}, {"assistant", "Hello,"}})},
                                             {"continue_final_message", true}});
    CHECK(s.prompt().ends_with("<|start|>assistant<|channel|>final<|message|>Hello,"));
    CHECK(r["choices"][0]["message"]["content"] == " world!");
  }
  PrefillServer s;  // ChatML
  s.script({" the light."});
  json o =
      s.call("/api/chat", {{"model", "fixture"},
                           {"stream", false},
                           {"messages", turns({{"user", "What was first?"}, {"assistant", "In the beginning was"}})}});
  CHECK(s.prompt().ends_with("<|im_start|>assistant\nIn the beginning was"));
  CHECK(o["message"]["content"] == " the light.");

  s.script({" the word."});
  json a = s.call("/v1/messages",
                  {{"model", "fixture"},
                   {"max_tokens", 16},
                   {"messages", turns({{"user", "What was first?"}, {"assistant", "In the beginning was"}})}});
  CHECK(s.prompt().ends_with("<|im_start|>assistant\nIn the beginning was"));
  CHECK(a["content"][0]["text"] == " the word.");
  json e = s.call("/v1/messages",
                  {{"model", "fixture"},
                   {"max_tokens", 16},
                   {"messages", turns({{"user", "What was first?"}, {"assistant", "In the beginning "}})}},
                  400);
  CHECK(e["error"]["message"].get<std::string>().find("trailing whitespace") != std::string::npos);
}

TEST_CASE("serve ollama: /api/generate answers in its own shape, whole and streamed", "[serve_prefill]") {
  PrefillServer s;
  s.script({"Let there", " be light."});
  json whole = s.call("/api/generate", {{"model", "fixture"}, {"prompt", "And God said"}, {"stream", false}});
  CHECK(whole["response"] == "Let there be light.");
  CHECK_FALSE(whole.contains("message"));
  CHECK(whole["done"] == true);
  REQUIRE(whole["context"].is_array());
  std::vector<int32_t> context = whole["context"];
  CHECK(s.gen->tokenizer().decode(context).ends_with(
      "And God said<|im_end|>\n<|im_start|>assistant\nLet there be light."));
  s.script({"Let there", " be light."});
  std::vector<json> lines =
      test::parse_ndjson(s.streamed("/api/generate", {{"model", "fixture"}, {"prompt", "And God said"}}));
  REQUIRE(lines.size() == 3);
  CHECK(lines[0]["response"] == "Let there");
  CHECK(lines[1]["response"] == " be light.");
  CHECK_FALSE(lines[0].contains("message"));
  CHECK(lines[2]["done"] == true);
  CHECK(lines[2]["response"] == "");
  CHECK(lines[2]["context"] == whole["context"]);
  // raw: the prompt as it is, and no context (as Ollama)
  s.script({"!"});
  json raw =
      s.call("/api/generate", {{"model", "fixture"}, {"prompt", "And God said"}, {"raw", true}, {"stream", false}});
  CHECK(raw["response"] == "!");
  CHECK_FALSE(raw.contains("context"));
}

TEST_CASE("serve tools: Gemma 4's calls under tool_choice required come back as OpenAI's tool_calls",
          "[serve_prefill]") {
  PrefillServer s("google-gemma-4-31B-it.jinja");
  json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather", "description": "Weather.",
    "parameters": {"type": "object", "properties": {"city": {"type": "string"}, "days": {"type": "integer"}},
                   "required": ["city"]}}}])");
  json body = {{"messages", turns({{"user", "Weather in Oslo?"}})}, {"tools", tools}, {"tool_choice", "required"}};
  s.script({"<|tool_call>call:get_weather{city:<|\"|>Os", "lo<|\"|>,days:2}<tool_call|>"});
  json r = s.call("/v1/chat/completions", body);
  REQUIRE(s.gen->request.constraint.automaton);
  // thinking is off (the template's empty thought block ends the prompt): the call comes at once
  auto& a = *s.gen->request.constraint.automaton;
  CHECK(a.after_bytes(a.initial(), "<|channel>") < 0);
  CHECK(a.after_bytes(a.initial(), "<|tool_call>call:get_weather{") >= 0);
  const json& m = r["choices"][0]["message"];
  CHECK(r["choices"][0]["finish_reason"] == "tool_calls");
  REQUIRE(m["tool_calls"].size() == 1);
  CHECK(m["tool_calls"][0]["function"]["name"] == "get_weather");
  CHECK(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()) ==
        json{{"city", "Oslo"}, {"days", 2}});
  // the next turn: the call and its result rendered by Gemma 4's template
  json next = body;
  next["messages"].push_back(m);
  next["messages"].push_back(
      {{"role", "tool"}, {"tool_call_id", m["tool_calls"][0]["id"]}, {"content", "{\"sky\": \"clear\"}"}});
  next["tool_choice"] = "auto";
  s.script({"It is clear."});
  json answer = s.call("/v1/chat/completions", next);
  CHECK(s.prompt().find("<|tool_call>call:get_weather{city:<|\"|>Oslo<|\"|>,days:2}<tool_call|>") != std::string::npos);
  CHECK(answer["choices"][0]["message"]["content"] == "It is clear.");
}

TEST_CASE("serve tools: a template whose tool syntax vkllm does not read is served without tools", "[serve_prefill]") {
  for (const auto& [file, family] :
       {std::pair{"GLM-4.6.jinja", "GLM-4"}, std::pair{"meetkai-functionary-medium-v3.1.jinja", "Functionary v3.1"}}) {
    INFO(file);
    PrefillServer s(file);
    json tools = json::parse(R"([{"type": "function", "function": {"name": "f", "parameters": {"type": "object"}}}])");
    json e = s.call("/v1/chat/completions", {{"messages", turns({{"user", "Hi"}})}, {"tools", tools}}, 400);
    std::string says = e["error"]["message"];
    CHECK(says.find(family) != std::string::npos);
    CHECK(says.find("'tools'") != std::string::npos);
    json o = s.call("/api/chat", {{"model", "fixture"}, {"messages", turns({{"user", "Hi"}})}, {"tools", tools}}, 400);
    CHECK(o["error"].get<std::string>().find(family) != std::string::npos);
    s.call("/v1/chat/completions", {{"messages", turns({{"user", "Hi"}})}});  // without tools it serves
    json show = s.call("/api/show", {{"model", "fixture"}});
    CHECK(std::find(show["capabilities"].begin(), show["capabilities"].end(), "tools") == show["capabilities"].end());
  }
}
