// Anthropic's Messages API through serve::Api with a generator that replays a scripted reply (no
// GPU): a request's blocks as the chat messages the template sees (tool_use, tool_result,
// thinking), the reply as content blocks with stop_reason and usage, the stream as Anthropic's
// event sequence, count_tokens, x-api-key, and errors in Anthropic's shape. Then the real client:
// @anthropic-ai/sdk (tests/anthropic_client.mjs) against `vkllm serve`, skipped without npm.
#include <fmt/format.h>

#include <filesystem>
#include <memory>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "fixture/fixture.h"
#include "gguf/reader.h"
#include "harness.h"
#include "scripted_api.h"
#include "serve/anthropic.h"
#include "serve/api.h"
#include "serve_process.h"
#include "text/chat_template.h"

using namespace vkllm;
using json = nlohmann::json;

namespace {

struct Messages : test::ScriptedApi {
  explicit Messages(const std::string& template_file, const std::string& key = "") : ScriptedApi(template_file, key) {
    cached_tokens = 3;
  }
  json message(const json& body, int status = 200) const {
    serve::HttpReply r = post("/v1/messages", body);
    INFO(r.body);
    REQUIRE(r.status == status);
    REQUIRE_FALSE(r.stream);
    return json::parse(r.body);
  }
  // The stream's events as {"event": name, "data": object}.
  std::vector<json> stream(json body) const {
    body["stream"] = true;
    serve::HttpReply r = post("/v1/messages", body);
    INFO(r.body);
    REQUIRE(r.status == 200);
    REQUIRE(r.stream);
    CHECK(r.content_type == "text/event-stream");
    std::string text;
    r.stream([&](std::string_view s) { return text += s, true; }, [] { return true; });
    std::vector<json> events;
    for (size_t at = 0, end; (end = text.find("\n\n", at)) != std::string::npos; at = end + 2) {
      std::string e = text.substr(at, end - at);
      size_t nl = e.find('\n');
      REQUIRE(e.starts_with("event: "));
      REQUIRE(e.substr(nl + 1).starts_with("data: "));
      json data = json::parse(e.substr(nl + 7));
      CHECK(data["type"] == e.substr(7, nl - 7));
      events.push_back({{"event", e.substr(7, nl - 7)}, {"data", data}});
    }
    return events;
  }
};

const json kWeather = json::parse(R"([{"name": "get_weather", "description": "Weather of a city",
  "input_schema": {"type": "object", "properties": {"city": {"type": "string"}}, "required": ["city"]}}])");

json ask(json extra = json::object()) {
  json body = {{"model", "claude-test"}, {"max_tokens", 64}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  for (auto& [k, v] : extra.items()) body[k] = v;
  return body;
}

std::vector<std::string> names(const std::vector<json>& events) {
  std::vector<std::string> out;
  for (const json& e : events) out.push_back(e["event"]);
  return out;
}

}  // namespace

TEST_CASE("anthropic: blocks become the chat messages a template understands", "[serve_anthropic]") {
  json body = ask({{"system", {{{"type", "text"}, {"text", "Be brief."}}, {{"type", "text"}, {"text", "Be kind."}}}},
                   {"messages", json::parse(R"([
    {"role": "user", "content": [{"type": "text", "text": "Weather in Oslo?"}]},
    {"role": "assistant", "content": [{"type": "thinking", "thinking": "Use the tool.", "signature": ""},
      {"type": "text", "text": "Checking."},
      {"type": "tool_use", "id": "toolu_1", "name": "get_weather", "input": {"city": "Oslo"}}]},
    {"role": "user", "content": [{"type": "tool_result", "tool_use_id": "toolu_1",
      "content": [{"type": "text", "text": "sunny"}]}, {"type": "text", "text": "And Bergen?"}]}])")},
                   {"tools", kWeather},
                   {"tool_choice", {{"type", "tool"}, {"name", "get_weather"}}},
                   {"stop_sequences", {"END"}},
                   {"thinking", {{"type", "disabled"}}},
                   {"metadata", {{"user_id", "u"}}}});
  json oai = serve::anthropic_to_openai(body, false);
  const json& m = oai["messages"];
  REQUIRE(m.size() == 5);
  CHECK(m[0] == json{{"role", "system"}, {"content", "Be brief.\nBe kind."}});
  CHECK(m[2]["content"] == "Checking.");
  CHECK(m[2]["reasoning_content"] == "Use the tool.");
  CHECK(m[2]["tool_calls"][0]["function"]["arguments"] == json{{"city", "Oslo"}});
  CHECK(m[3] == json{{"role", "tool"}, {"tool_call_id", "toolu_1"}, {"content", "sunny"}});
  CHECK(m[4] == json{{"role", "user"}, {"content", "And Bergen?"}});
  CHECK(oai["tools"][0]["function"]["parameters"] == kWeather[0]["input_schema"]);
  CHECK(oai["tool_choice"]["function"]["name"] == "get_weather");
  CHECK(oai["stop"] == json{"END"});
  CHECK(oai["chat_template_kwargs"]["enable_thinking"] == false);
  // Claude Code's per-request billing stamp is made constant, so the prompt's prefix can be reused.
  json stamped = ask({{"system", "x-anthropic-billing-header: cc_version=2.1; cch=a5145; You are Claude Code."}});
  CHECK(serve::anthropic_to_openai(stamped, false)["messages"][0]["content"] ==
        "x-anthropic-billing-header: cc_version=2.1; cch=00000; You are Claude Code.");
  // The chat route accepts the translation as it accepts any chat request.
  serve::CompletionParams p = serve::parse_completion(oai, true, 512);
  CHECK(p.tool_choice.kind == ToolChoice::Named);
  CHECK(p.max_tokens == 64u);

  auto refused = [](const json& b, const std::string& words) {
    try {
      serve::anthropic_to_openai(b, false);
      FAIL("accepted " << b.dump());
    } catch (const serve::ApiError& e) {
      CHECK(e.status == 400);
      INFO(e.what());
      CHECK(std::string(e.what()).find(words) != std::string::npos);
    }
  };
  // Image blocks become image_url parts in their place (base64 as a data: URL, a url as it is).
  json image = ask({{"messages", json::parse(R"([{"role": "user", "content": [{"type": "text", "text": "Look:"},
    {"type": "image", "source": {"type": "base64", "media_type": "image/png", "data": "AA=="}},
    {"type": "image", "source": {"type": "url", "url": "https://example.com/a.png"}}]}])")}});
  CHECK(serve::anthropic_to_openai(image, false)["messages"][0]["content"] ==
        serve::json::parse(R"([{"type": "text", "text": "Look:"},
          {"type": "image_url", "image_url": {"url": "data:image/png;base64,AA=="}},
          {"type": "image_url", "image_url": {"url": "https://example.com/a.png"}}])"));
  refused(ask({{"messages",
                json::parse(R"([{"role": "user", "content": [{"type": "image", "source": {"type": "file"}}]}])")}}),
          ".source must be");
  refused(ask({{"messages", json::parse(R"([{"role": "user", "content": [{"type": "document", "source": {}}]}])")}}),
          "document blocks are not supported");
  json no_max = ask();
  no_max.erase("max_tokens");
  refused(no_max, "'max_tokens' is required");
  refused(ask({{"messages", {{{"role", "system"}, {"content", "x"}}}}}), "role must be user or assistant");
  refused(ask({{"tools", {{{"type", "web_search_20250305"}, {"name", "web_search"}}}}}), "server tools");
  refused(ask({{"tool_choice", {{"type", "tool"}}}}), "tool_choice");
}

TEST_CASE("anthropic: a reply as content blocks, streamed as Anthropic's events", "[serve_anthropic]") {
  Messages s("Qwen-Qwen3-0.6B.jinja");
  s.script({"<think>\nThe user", " greets me.\n</th", "ink>\n\nHello", "!"});
  json r = s.message(ask());
  CHECK(r["type"] == "message");
  CHECK(r["role"] == "assistant");
  CHECK(r["id"].get<std::string>().starts_with("msg_"));
  CHECK(r["content"] == json::parse(R"([{"type": "thinking", "thinking": "The user greets me.", "signature": ""},
                                         {"type": "text", "text": "Hello!"}])"));
  CHECK(r["stop_reason"] == "end_turn");
  CHECK(r["stop_sequence"].is_null());
  uint32_t prompt = uint32_t(s.gen->prompt.size());
  CHECK(r["usage"]["input_tokens"] == prompt - 3);
  CHECK(r["usage"]["cache_read_input_tokens"] == 3);
  CHECK(r["usage"]["output_tokens"] == 4);

  std::vector<json> e = s.stream(ask());
  CHECK(names(e) == std::vector<std::string>{"message_start", "ping", "content_block_start", "content_block_delta",
                                             "content_block_delta", "content_block_stop", "content_block_start",
                                             "content_block_delta", "content_block_delta", "content_block_stop",
                                             "message_delta", "message_stop"});
  CHECK(e[0]["data"]["message"]["content"] == json::array());
  CHECK(e[2]["data"]["content_block"]["type"] == "thinking");
  CHECK(e[6]["data"]["index"] == 1);
  CHECK(e[6]["data"]["content_block"] == json{{"type", "text"}, {"text", ""}});
  CHECK(e[7]["data"]["delta"] == json{{"type", "text_delta"}, {"text", "Hello"}});
  CHECK(e[10]["data"]["delta"] == json{{"stop_reason", "end_turn"}, {"stop_sequence", nullptr}});
  CHECK(e[10]["data"]["usage"]["output_tokens"] == 4);
  CHECK(e[10]["data"]["usage"]["input_tokens"] == prompt - 3);

  // A stop sequence is named; max_tokens says so.
  s.script({"Hello"}, RequestFinish::Stop, "END");
  json stopped = s.message(ask({{"stop_sequences", {"END"}}}));
  CHECK(stopped["stop_reason"] == "stop_sequence");
  CHECK(stopped["stop_sequence"] == "END");
  CHECK(s.gen->request.stop == std::vector<std::string>{"END"});
  std::vector<json> stopped_stream = s.stream(ask({{"stop_sequences", {"END"}}}));
  CHECK(stopped_stream.at(stopped_stream.size() - 2)["data"]["delta"]["stop_sequence"] == "END");
  s.script({"Hello"}, RequestFinish::Length);
  CHECK(s.message(ask())["stop_reason"] == "max_tokens");
}

TEST_CASE("anthropic: a tool call is a tool_use block, streamed as input_json_delta", "[serve_anthropic]") {
  Messages s("");
  s.script({"<tool_call>\n{\"name\": \"get_weather\", \"arg", "uments\": {\"city\": \"Oslo\"}}\n</tool_call>"});
  json body = ask({{"tools", kWeather}, {"tool_choice", {{"type", "any"}}}});
  json r = s.message(body);
  REQUIRE(s.gen->request.constraint.automaton);  // any: a call is forced from the first token
  CHECK(r["stop_reason"] == "tool_use");
  REQUIRE(r["content"].size() == 1);
  CHECK(r["content"][0]["type"] == "tool_use");
  CHECK(r["content"][0]["name"] == "get_weather");
  CHECK(r["content"][0]["input"] == json{{"city", "Oslo"}});

  std::vector<json> e = s.stream(body);
  REQUIRE(e.size() > 5);
  CHECK(e[2]["data"]["content_block"]["type"] == "tool_use");
  CHECK(e[2]["data"]["content_block"]["input"] == json::object());
  std::string partial;
  for (const json& x : e)
    if (x["event"] == "content_block_delta") partial += x["data"]["delta"]["partial_json"].get<std::string>();
  CHECK(json::parse(partial) == json{{"city", "Oslo"}});
  CHECK(e[e.size() - 2]["data"]["delta"]["stop_reason"] == "tool_use");
}

TEST_CASE("anthropic: count_tokens, x-api-key, and errors in Anthropic's shape", "[serve_anthropic]") {
  Messages s("Qwen-Qwen3-0.6B.jinja", "sekret");
  json count_body = {{"model", "m"}, {"messages", {{{"role", "user"}, {"content", "Hi"}}}}};
  serve::HttpReply c = s.post("/v1/messages/count_tokens", count_body, "sekret");
  REQUIRE(c.status == 200);
  size_t plain = json::parse(c.body)["input_tokens"];
  REQUIRE(s.post("/v1/messages", ask(), "sekret").status == 200);  // the prompt it ran is the one counted
  CHECK(plain == s.gen->prompt.size());
  count_body["tools"] = kWeather;
  size_t with_tools = json::parse(s.post("/v1/messages/count_tokens", count_body, "sekret").body)["input_tokens"];
  CHECK(with_tools > plain);

  auto error_of = [](const serve::HttpReply& r) {
    json j = json::parse(r.body);
    CHECK(j["type"] == "error");
    return j["error"];
  };
  serve::HttpReply denied = s.post("/v1/messages", ask(), "wrong");
  CHECK(denied.status == 401);
  CHECK(error_of(denied)["type"] == "authentication_error");
  serve::HttpReply bad = s.post("/v1/messages", ask({{"max_tokens", 0}}), "sekret");
  CHECK(bad.status == 400);
  CHECK(error_of(bad)["type"] == "invalid_request_error");
  CHECK(error_of(bad)["message"] == "'max_tokens' must be an integer >= 1");
  serve::HttpReply temp = s.post("/v1/messages", ask({{"temperature", "hot"}}), "sekret");  // the chat route's check
  CHECK(temp.status == 400);
  CHECK(error_of(temp)["message"] == "'temperature' must be a number");
  serve::HttpReply missing = s.post("/v1/messages/batches", json::object(), "sekret");
  CHECK(missing.status == 404);
  CHECK(error_of(missing)["type"] == "not_found_error");
  CHECK(error_of(serve::anthropic_error_reply({.status = 503, .body = "{}"}))["type"] == "overloaded_error");
  // A failure mid-stream is an error event.
  serve::AnthropicStream stream("msg_1", "m");
  std::string out = stream.feed("data: {\"error\": {\"message\": \"no\", \"type\": \"x\", \"code\": 400}}\n\n");
  CHECK(
      out ==
      "event: error\ndata: {\"type\":\"error\",\"error\":{\"type\":\"invalid_request_error\",\"message\":\"no\"}}\n\n");
  CHECK(stream.finish().empty());
}

TEST_CASE("anthropic: @anthropic-ai/sdk sends, streams, counts, calls a tool, and gets typed errors",
          "[serve][serve_anthropic]") {
  std::string npm = VKLLM_BUILD_DIR "/npm";
  if (!std::filesystem::exists(npm + "/node_modules/@anthropic-ai/sdk") ||
      std::system("command -v node >/dev/null") != 0) {
    test::skip("no @anthropic-ai/sdk npm package in build/npm (scripts/test installs it where npm is present)");
    return;
  }
  test::ServeProcess s("--parallel 2 --ctx 2048 --api-key sekret");
  std::string out = VKLLM_BUILD_DIR "/anthropic_client.out";
  int rc = std::system(
      fmt::format("node {}/tests/anthropic_client.mjs {} {} >{} 2>&1", VKLLM_SOURCE_DIR, npm, s.port(), out).c_str());
  std::string text = test::read_file(out);
  INFO(text << "\nserver log:\n" << s.log());
  REQUIRE(rc == 0);
  json r = json::parse(text.substr(text.rfind("\n{") + 1));
  CHECK(r["create"]["type"] == "message");
  CHECK(r["create"]["stop_reason"] == "max_tokens");  // a Bible model does not end its verse in 8 tokens
  CHECK(r["create"]["usage"]["output_tokens"] == 8);
  CHECK(r["create"]["usage"]["input_tokens"].get<int>() > 0);
  CHECK_FALSE(r["create"]["text"].get<std::string>().empty());
  CHECK(r["stream"]["text"] == r["stream"]["final_text"]);
  CHECK(r["stream"]["text"] == r["create"]["text"]);  // greedy: the same words either way
  CHECK(r["stream"]["output_tokens"] == 8);
  CHECK(r["count"].get<int>() > 5);
  CHECK(r["tool"]["stop_reason"] == "tool_use");
  CHECK(r["tool"]["name"] == "get_weather");
  CHECK(r["tool"]["input"].is_object());
  CHECK(r["tool"]["streamed_input"] == r["tool"]["input"]);
  CHECK(r["tool"]["answer_stop"].is_string());
  CHECK(r["errors"]["bad_request"] == "BadRequestError 400 invalid_request_error");
  CHECK(r["errors"]["auth"] == "AuthenticationError 401 authentication_error");
}
