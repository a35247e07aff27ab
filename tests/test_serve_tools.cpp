// /v1/chat/completions for agents, driven through serve::Api with a generator that replays a
// scripted reply (no GPU): tool calls in message.tool_calls with finish_reason tool_calls, and
// streamed as OpenAI streams them (id and name first, then the arguments piece by piece; the
// pieces reassemble to the same call); reasoning_content split (and kept with reasoning_format
// none); the constraint each request hands the generator (tool_choice, response_format, grammar);
// logprobs in both routes' shapes; and 400s that name the problem.
#include <fmt/format.h>

#include <memory>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "scripted_api.h"
#include "serve/api.h"
#include "serve_process.h"
#include "text/chat_template.h"

using namespace vkllm;
using json = nlohmann::json;

namespace {

struct ToolServer : test::ScriptedApi {
  using ScriptedApi::ScriptedApi;
  json chat(const json& body, int status = 200) const {
    serve::HttpReply r = post("/v1/chat/completions", body);
    INFO(r.body);
    REQUIRE(r.status == status);
    return json::parse(r.body);
  }
  test::SseStream stream(const json& body) const {
    json b = body;
    b["stream"] = true;
    serve::HttpReply r = post("/v1/chat/completions", b);
    REQUIRE(r.status == 200);
    REQUIRE(r.stream);
    std::string text;
    r.stream([&](std::string_view s) { return text += s, true; }, [] { return true; });
    test::SseStream s = test::parse_sse(text);
    REQUIRE(s.done);
    return s;
  }
};

const json kWeatherFunction = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
  "parameters": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}}])");

json ask_tools(json extra = json::object()) {
  json body = {{"messages", {{{"role", "user"}, {"content", "Weather in Oslo?"}}}}};
  for (auto& [k, v] : extra.items()) body[k] = v;
  return body;
}

// What a stream's deltas add up to: content, reasoning, and the calls by index.
struct Assembled {
  std::string content, reasoning, finish;
  json calls = json::array();
};

Assembled assemble(const test::SseStream& s) {
  Assembled a;
  for (const json& e : s.events) {
    if (e["choices"].empty()) continue;
    const json& c = e["choices"][0];
    const json& d = c["delta"];
    if (d.contains("content") && d["content"].is_string()) a.content += d["content"].get<std::string>();
    if (d.contains("reasoning_content")) a.reasoning += d["reasoning_content"].get<std::string>();
    for (const json& t : d.value("tool_calls", json::array())) {
      size_t i = t["index"];
      if (i == a.calls.size()) {  // a new call comes with its id, type and name
        CHECK(t.contains("id"));
        CHECK(t["type"] == "function");
        a.calls.push_back({{"id", t["id"]}, {"name", t["function"]["name"]}, {"arguments", ""}});
      }
      REQUIRE(i < a.calls.size());
      a.calls[i]["arguments"] = a.calls[i]["arguments"].get<std::string>() + t["function"].value("arguments", "");
    }
    if (!c["finish_reason"].is_null()) a.finish = c["finish_reason"];
  }
  return a;
}

}  // namespace

TEST_CASE("serve tools: a Hermes call becomes message.tool_calls, streamed as OpenAI streams it", "[serve_tools]") {
  ToolServer s;  // no template: ChatML, whose tool syntax is Hermes
  std::vector<std::string> pieces = {"<tool",          "_call>\n{\"na", "me\": \"get_",   "weather\", \"argu",
                                     "ments\": {\"ci", "ty\": \"Os",    "lo\"}}\n</tool", "_call>"};
  s.script(pieces);
  json r = s.chat(ask_tools({{"tools", kWeatherFunction}, {"tool_choice", "required"}}));
  // tool_choice required: the generator got a grammar that applies from the first token
  REQUIRE(s.gen->request.constraint.automaton);
  CHECK(s.gen->request.constraint.triggers.empty());
  const json& choice = r["choices"][0];
  CHECK(choice["finish_reason"] == "tool_calls");
  CHECK(choice["message"]["content"].is_null());
  REQUIRE(choice["message"]["tool_calls"].size() == 1);
  const json& call = choice["message"]["tool_calls"][0];
  CHECK(call["type"] == "function");
  CHECK(call["id"].get<std::string>().starts_with("call_"));
  CHECK(call["function"]["name"] == "get_weather");
  CHECK(json::parse(call["function"]["arguments"].get<std::string>()) == json{{"city", "Oslo"}});

  Assembled a = assemble(s.stream(ask_tools({{"tools", kWeatherFunction}, {"tool_choice", "required"}})));
  CHECK(a.finish == "tool_calls");
  CHECK(a.content.empty());
  REQUIRE(a.calls.size() == 1);
  CHECK(a.calls[0]["name"] == "get_weather");
  CHECK(a.calls[0]["arguments"] == call["function"]["arguments"]);

  // tool_choice auto: a lazy grammar that starts at <tool_call>, and a text reply stays text
  s.script({"It is ", "sunny."});
  json text = s.chat(ask_tools({{"tools", kWeatherFunction}}));
  CHECK(s.gen->request.constraint.triggers == std::vector<std::string>{"<tool_call>"});
  CHECK(text["choices"][0]["finish_reason"] == "stop");
  CHECK(text["choices"][0]["message"]["content"] == "It is sunny.");
  CHECK_FALSE(text["choices"][0]["message"].contains("tool_calls"));
  // tool_choice none: no grammar, and the markup is text
  s.script(pieces);
  json none = s.chat(ask_tools({{"tools", kWeatherFunction}, {"tool_choice", "none"}}));
  CHECK_FALSE(s.gen->request.constraint.automaton);
  CHECK(none["choices"][0]["finish_reason"] == "stop");
  CHECK(none["choices"][0]["message"]["content"].get<std::string>().starts_with("<tool_call>"));
}

TEST_CASE("serve tools: parallel calls, a call cut by max_tokens is length, content before a call", "[serve_tools]") {
  ToolServer s;
  std::string one = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Oslo\"}}\n</tool_call>";
  std::string two = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Bergen\"}}\n</tool_call>";
  s.script({one.substr(0, 20), one.substr(20), "\n", two});
  json body = ask_tools({{"tools", kWeatherFunction}, {"tool_choice", "required"}, {"parallel_tool_calls", true}});
  json r = s.chat(body);
  REQUIRE(r["choices"][0]["message"]["tool_calls"].size() == 2);
  Assembled a = assemble(s.stream(body));
  REQUIRE(a.calls.size() == 2);
  CHECK(a.calls[0]["id"] != a.calls[1]["id"]);
  CHECK(json::parse(a.calls[1]["arguments"].get<std::string>()) == json{{"city", "Bergen"}});

  s.script({one.substr(0, 40)}, RequestFinish::Length);
  json cut = s.chat(body);
  CHECK(cut["choices"][0]["finish_reason"] == "length");
  CHECK(assemble(s.stream(body)).finish == "length");

  s.script({"Let me check. ", one});
  json both = s.chat(ask_tools({{"tools", kWeatherFunction}}));
  CHECK(both["choices"][0]["message"]["content"] == "Let me check. ");
  CHECK(both["choices"][0]["finish_reason"] == "tool_calls");
}

TEST_CASE("serve tools: reasoning_content on Qwen3's template, kept in content with reasoning_format none",
          "[serve_tools]") {
  ToolServer s("Qwen-Qwen3-0.6B.jinja");
  s.script({"<think>\nThe user", " greets me.\n</th", "ink>\n\nHello", "!"});
  json r = s.chat(ask_tools());
  CHECK(r["choices"][0]["message"]["reasoning_content"] == "The user greets me.");
  CHECK(r["choices"][0]["message"]["content"] == "Hello!");
  Assembled a = assemble(s.stream(ask_tools()));
  CHECK(a.reasoning == "The user greets me.");
  CHECK(a.content == "Hello!");
  json raw = s.chat(ask_tools({{"reasoning_format", "none"}}));
  CHECK(raw["choices"][0]["message"]["content"] == "<think>\nThe user greets me.\n</think>\n\nHello!");
  CHECK_FALSE(raw["choices"][0]["message"].contains("reasoning_content"));
  // chat_template_kwargs reach the template: enable_thinking false renders an empty think block
  s.chat(ask_tools({{"chat_template_kwargs", {{"enable_thinking", false}}}}));
  std::string prompt = s.gen->tokenizer().decode(s.gen->prompt);
  CHECK(prompt.ends_with("<think>\n\n</think>\n\n"));
}

TEST_CASE("serve tools: LFM2's Python calls and Nemotron-3's reasoning and XML calls through the server",
          "[serve_tools]") {
  {
    ToolServer s("LFM2.5-8B-A1B.jinja");
    s.script({"<think>Oslo's", " weather.</think>", "<|tool_call", "_start|>[get_wea", "ther(city='Os",
              "lo')]<|tool_call_end|>"});
    json body = ask_tools({{"tools", kWeatherFunction}});
    json r = s.chat(body);
    CHECK(s.gen->request.constraint.triggers == std::vector<std::string>{"<|tool_call_start|>"});
    const json& m = r["choices"][0]["message"];
    CHECK(r["choices"][0]["finish_reason"] == "tool_calls");
    CHECK(m["reasoning_content"] == "Oslo's weather.");
    REQUIRE(m["tool_calls"].size() == 1);
    CHECK(m["tool_calls"][0]["function"]["name"] == "get_weather");
    CHECK(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()) == json{{"city", "Oslo"}});
    Assembled a = assemble(s.stream(body));
    CHECK(a.reasoning == "Oslo's weather.");
    REQUIRE(a.calls.size() == 1);
    CHECK(json::parse(a.calls[0]["arguments"].get<std::string>()) == json{{"city", "Oslo"}});
    s.chat(ask_tools({{"tools", kWeatherFunction}, {"tool_choice", "required"}}));
    CHECK(s.gen->request.constraint.automaton);
  }
  {
    ToolServer s("NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja");  // the prompt opens <think>
    s.script({"Oslo, so", " a call.\n</think>\n<tool_call>\n<function=get_weather>\n<parameter=city>\nOs",
              "lo\n</parameter>\n</function>\n</tool_call>\n"});
    json r = s.chat(ask_tools({{"tools", kWeatherFunction}}));
    CHECK(s.gen->request.constraint.triggers == std::vector<std::string>{"<tool_call>"});
    const json& m = r["choices"][0]["message"];
    CHECK(m["reasoning_content"] == "Oslo, so a call.");
    REQUIRE(m["tool_calls"].size() == 1);
    CHECK(json::parse(m["tool_calls"][0]["function"]["arguments"].get<std::string>()) == json{{"city", "Oslo"}});
    s.script({"Sunny", " in Oslo."});  // thinking off: an empty block in the prompt, the reply is content
    json quiet = s.chat(ask_tools({{"chat_template_kwargs", {{"enable_thinking", false}}}}));
    CHECK(s.gen->tokenizer().decode(s.gen->prompt).ends_with("<|im_start|>assistant\n<think></think>"));
    CHECK(quiet["choices"][0]["message"]["content"] == "Sunny in Oslo.");
    CHECK_FALSE(quiet["choices"][0]["message"].contains("reasoning_content"));
  }
}

TEST_CASE("serve tools: response_format, grammar and json_schema give the generator a grammar", "[serve_tools]") {
  ToolServer s;
  s.script({"{\"a\": 1}"});
  json schema = {{"type", "object"}, {"properties", {{"a", {{"type", "integer"}}}}}, {"required", {"a"}}};
  for (const json& extra :
       {json{{"response_format", {{"type", "json_object"}}}},
        json{{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}, {"schema", schema}}}}}},
        json{{"json_schema", schema}}, json{{"grammar", "root ::= \"{\\\"a\\\": 1}\""}}}) {
    INFO(extra.dump());
    json r = s.chat(ask_tools(extra));
    REQUIRE(s.gen->request.constraint.automaton);
    CHECK(s.gen->request.constraint.triggers.empty());
    CHECK(r["choices"][0]["message"]["content"] == "{\"a\": 1}");
  }
  serve::HttpReply c = s.post("/v1/completions", {{"prompt", "x"}, {"grammar", "root ::= [a-z]+"}});
  CHECK(c.status == 200);
  CHECK(s.gen->request.constraint.automaton);
  s.chat(ask_tools({{"response_format", {{"type", "text"}}}}));
  CHECK_FALSE(s.gen->request.constraint.automaton);
}

TEST_CASE("serve tools: empty, unsatisfiable, recursive and too large grammars are 400s naming the problem",
          "[serve_tools]") {
  ToolServer s;
  auto error = [&](const json& extra) {
    json e = s.chat(ask_tools(extra), 400)["error"];
    CHECK(e["type"] == "invalid_request_error");
    return e["message"].get<std::string>();
  };
  CHECK(error({{"grammar", ""}}).find("the grammar is empty") != std::string::npos);
  CHECK(error({{"grammar", "root ::= a\na ::= \"x\" a"}}).find("unsatisfiable") != std::string::npos);
  CHECK(error({{"grammar", "root ::= root \"x\" | \"y\""}}).find("left-recursive") != std::string::npos);
  CHECK(error({{"grammar", "root ::= [a"}}).find("line 1") != std::string::npos);
  json node = json::parse(R"({"$defs": {"node": {"type": "object", "properties": {"next": {"$ref": "#/$defs/node"}}}},
                              "$ref": "#/$defs/node"})");
  CHECK(error({{"json_schema", node}}).find("recursive") != std::string::npos);
  CHECK(error({{"response_format", {{"type", "json_schema"}, {"json_schema", {{"name", "x"}}}}}}).find("json_schema") !=
        std::string::npos);
  CHECK(error({{"response_format", {{"type", "yaml"}}}}).find("response_format.type") != std::string::npos);
  CHECK(error({{"json_schema", {{"type", "string"}, {"pattern", "a+"}}}}).find("pattern") != std::string::npos);
  std::string huge = "root ::= \"x\"{10000} \"y\"{10000} \"z\"{10000}";
  for (int i = 0; i < 120; ++i) huge += fmt::format("\nr{} ::= [a-z]{{10000}}", i);
  CHECK(error({{"grammar", huge}}).find("too large") != std::string::npos);
  CHECK(error({{"grammar", "root ::= \"a\""}, {"json_schema", {{"type", "object"}}}}).find("at most one") !=
        std::string::npos);
  CHECK(error({{"tools", kWeatherFunction}, {"tool_choice", {{"type", "function"}, {"function", {{"name", "fly"}}}}}})
            .find("'fly'") != std::string::npos);
  CHECK(error({{"tool_choice", "required"}}).find("no 'tools'") != std::string::npos);
  CHECK(error({{"tools", kWeatherFunction}, {"response_format", {{"type", "json_object"}}}}).find("tool_choice") !=
        std::string::npos);
  CHECK(error({{"tools", kWeatherFunction}, {"tool_choice", "sometimes"}}).find("tool_choice") != std::string::npos);
  CHECK(error({{"reasoning_format", "verbose"}}).find("reasoning_format") != std::string::npos);
  // a grammar the vocabulary cannot continue ends the request with a 400 (the scheduler says why)
  s.gen->script = {{.done = true, .finish = RequestFinish::Error, .error = "the grammar allows no token here"}};
  CHECK(error({{"grammar", "root ::= \"a\""}}).find("allows no token") != std::string::npos);
}

TEST_CASE("serve tools: logprobs and top_logprobs in chat's and completions' shapes", "[serve_tools]") {
  ToolServer s;
  const Tokenizer& tok = s.gen->tokenizer();
  int32_t a = tok.encode("a", false, false)[0], b = tok.encode("b", false, false)[0];
  auto event = [&](const std::string& text, int32_t id, bool done) {
    GenerationEvent e{
        .text = text, .tokens = 1, .done = done, .finish = done ? RequestFinish::Length : RequestFinish::None};
    e.logprobs = {{.token = id, .logprob = -0.25, .top = {{id, -0.25}, {id == a ? b : a, -1.5}}}};
    return e;
  };
  s.gen->script = {event("a", a, false), event("b", b, true)};
  json r = s.chat(ask_tools({{"logprobs", true}, {"top_logprobs", 2}}));
  const json& content = r["choices"][0]["logprobs"]["content"];
  REQUIRE(content.size() == 2);
  CHECK(content[0]["token"] == "a");
  CHECK(content[0]["logprob"] == -0.25);
  CHECK(content[0]["bytes"] == json::array({int('a')}));
  CHECK(content[1]["top_logprobs"][1]["token"] == "a");
  CHECK(content[1]["top_logprobs"][1]["logprob"] == -1.5);
  CHECK(s.gen->request.logprobs);
  CHECK(s.gen->request.top_logprobs == 2);

  test::SseStream st = s.stream(ask_tools({{"logprobs", true}, {"top_logprobs", 2}}));
  json streamed = json::array();
  for (const json& e : st.events)
    if (!e["choices"].empty() && e["choices"][0]["logprobs"].is_object())
      for (const json& t : e["choices"][0]["logprobs"]["content"]) streamed.push_back(t);
  CHECK(streamed == content);

  serve::HttpReply c = s.post("/v1/completions", {{"prompt", "x"}, {"logprobs", 1}});
  REQUIRE(c.status == 200);
  json legacy = json::parse(c.body)["choices"][0]["logprobs"];
  CHECK(legacy["tokens"] == json::array({"a", "b"}));
  CHECK(legacy["token_logprobs"] == json::array({-0.25, -0.25}));
  CHECK(legacy["text_offset"] == json::array({0, 1}));
  CHECK(legacy["top_logprobs"][0]["b"] == -1.5);

  CHECK(s.chat(ask_tools({{"logprobs", true}, {"top_logprobs", 21}}), 400)["error"]["message"].get<std::string>().find(
            "top_logprobs") != std::string::npos);
  CHECK(s.chat(ask_tools({{"top_logprobs", 2}}), 400)["error"]["message"].get<std::string>().find("logprobs") !=
        std::string::npos);
}
