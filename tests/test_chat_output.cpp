// Reading replies: each family's tool-call syntax on real outputs of those models (tests/data/
// tool_calls/<family>.json: the outputs with their exact special tokens, the family's templates,
// what the reply must give), the format recognised from each real template, and reasoning split
// on Qwen3's, QwQ's and gpt-oss's templates. Streaming: every prefix of an output gives a result
// that the next prefix only extends, ending in the whole reply's.
#include <fmt/format.h>

#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "json_schema_check.h"
#include "text/chat/chat_output.h"
#include "text/chat_template.h"

using namespace vkllm;
using json = nlohmann::ordered_json;

namespace {

std::string data(const std::string& rel) {
  std::string text = test::read_file(std::string(VKLLM_SOURCE_DIR) + "/tests/data/" + rel);
  REQUIRE(!text.empty());
  return text;
}

const char* const kFamilies[] = {"hermes",      "qwen-xml",      "llama3",  "mistral-nemo", "mistral",
                                 "deepseek-r1", "deepseek-v3.1", "gpt-oss", "granite",      "gemma4",
                                 "nemotron-v2", "lfm2",          "generic"};

ChatFormat format_named(const std::string& name) {
  for (ToolCallFormat f :
       {ToolCallFormat::Generic, ToolCallFormat::Hermes, ToolCallFormat::QwenXml, ToolCallFormat::Llama3,
        ToolCallFormat::MistralNemo, ToolCallFormat::Mistral, ToolCallFormat::DeepSeekR1, ToolCallFormat::DeepSeekV31,
        ToolCallFormat::GptOss, ToolCallFormat::Granite, ToolCallFormat::Gemma4, ToolCallFormat::NemotronV2,
        ToolCallFormat::Lfm2})
    if (name == to_string(f))
      return ChatFormat{.tools = f,
                        .reasoning = f == ToolCallFormat::GptOss    ? Reasoning::None
                                     : f == ToolCallFormat::Gemma4  ? Reasoning::Gemma4
                                     : f == ToolCallFormat::Mistral ? Reasoning::MistralThink
                                                                    : Reasoning::Think};
  FAIL("no format " << name);
  return {};
}

// Each partial result only extends the one before it, and the last partial one the whole reply.
void check_extends(const ChatReply& before, const ChatReply& now, const std::string& where) {
  INFO(where);
  CHECK(now.content.starts_with(before.content));
  CHECK(now.reasoning.starts_with(before.reasoning));
  REQUIRE(now.tool_calls.size() >= before.tool_calls.size());
  for (size_t i = 0; i < before.tool_calls.size(); ++i) {
    CHECK(now.tool_calls[i].name == before.tool_calls[i].name);
    CHECK(now.tool_calls[i].arguments.starts_with(before.tool_calls[i].arguments));
  }
}

}  // namespace

TEST_CASE("chat output: each family's real tool-call outputs parse into content, reasoning and calls",
          "[chat_output]") {
  for (const char* family : kFamilies) {
    json spec = json::parse(data(fmt::format("tool_calls/{}.json", family)));
    INFO("family " << family);
    REQUIRE(spec["format"] == family);
    for (const json& t : spec["templates"]) {
      INFO("template " << t);
      ChatFormat detected = ChatFormat::detect(data("templates/" + t.get<std::string>()));
      CHECK(to_string(detected.tools) == spec["format"].get<std::string>());
    }
    ChatFormat format = format_named(family);
    for (const json& c : spec["cases"]) {
      std::string output = c["output"];
      INFO("output " << output);
      ChatReplyOptions o{.format = format,
                         .reasoning_open = prompt_opens_reasoning(format, c.value("prompt_ends", "")),
                         .tool_calls = true,
                         .tools = &spec["tools"]};
      ChatReply r = parse_chat_reply(output, o, false);
      CHECK(r.content == c["content"].get<std::string>());
      CHECK(r.reasoning == c["reasoning"].get<std::string>());
      REQUIRE(r.tool_calls.size() == c["tool_calls"].size());
      for (size_t i = 0; i < r.tool_calls.size(); ++i) {
        const json& want = c["tool_calls"][i];
        CHECK(r.tool_calls[i].name == want["name"].get<std::string>());
        json args = json::parse(r.tool_calls[i].arguments, nullptr, false);
        CHECK(args == want["arguments"]);
        CHECK(r.tool_calls[i].id == want.value("id", ""));
        for (const json& tool : spec["tools"])  // and they validate against the function's schema
          if (tool["function"]["name"] == want["name"])
            CHECK(test::SchemaCheck(tool["function"]["parameters"]).check(args) == "");
      }
      ChatReply before;
      for (size_t n = 0; n <= output.size(); ++n) {
        if (n < output.size() && (uint8_t(output[n]) & 0xC0) == 0x80) continue;  // streams cut at characters
        ChatReply now = parse_chat_reply(std::string_view(output).substr(0, n), o, true);
        check_extends(before, now, fmt::format("prefix of {} bytes", n));
        before = std::move(now);
      }
      check_extends(before, r, "the whole reply");
    }
  }
}

TEST_CASE("chat output: replies without tools offered, or reasoning_format none, stay text", "[chat_output]") {
  std::string output = "<tool_call>\n{\"name\": \"f\", \"arguments\": {}}\n</tool_call>";
  ChatReply r = parse_chat_reply(output, {.format = format_named("hermes")}, false);
  CHECK(r.content == output);
  CHECK(r.tool_calls.empty());
  // A call cut short, or one that is not the syntax after all, leaves the whole reply as content.
  ChatReplyOptions tools{.format = format_named("hermes"), .tool_calls = true};
  std::string cut = "Let me see.<tool_call>\n{\"name\": \"f\", \"argu";
  CHECK(parse_chat_reply(cut, tools, false).content == cut);
  CHECK(parse_chat_reply("a <tool_call> b", tools, false).content == "a <tool_call> b");
  ChatReply think =
      parse_chat_reply("<think>hm</think>\n\nok", {.format = format_named("hermes"), .split_reasoning = false}, false);
  CHECK(think.content == "<think>hm</think>\n\nok");
  CHECK(think.reasoning.empty());
}

TEST_CASE("chat output: reasoning is split on Qwen3's, QwQ's, Nemotron's and gpt-oss's templates", "[chat_output]") {
  json messages = json::array({{{"role", "user"}, {"content", "What is the capital of France?"}}});
  {  // Qwen3: the model opens <think> itself; enable_thinking false renders an empty block
    ChatTemplate t = ChatTemplate::parse(data("templates/Qwen-Qwen3-0.6B.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    CHECK(f.reasoning == Reasoning::Think);
    std::string prompt = t.render(messages, {.eos_token = "<|im_end|>"});
    CHECK(prompt_opens_reasoning(f, prompt).empty());
    ChatReply r = parse_chat_reply(
        "<think>\nThe user asks for the capital of France. It is Paris.\n</think>\n\n"
        "The capital of France is Paris.",
        {.format = f}, false);
    CHECK(r.reasoning == "The user asks for the capital of France. It is Paris.");
    CHECK(r.content == "The capital of France is Paris.");
    std::string quiet = t.render(messages, {.eos_token = "<|im_end|>", .extra = {{"enable_thinking", false}}});
    CHECK(quiet.ends_with("<think>\n\n</think>\n\n"));
    CHECK(prompt_opens_reasoning(f, quiet).empty());
    CHECK(parse_chat_reply("Paris.", {.format = f}, false).content == "Paris.");
  }
  {  // QwQ: the prompt opens <think>, so the reply starts inside the reasoning
    ChatTemplate t = ChatTemplate::parse(data("templates/Qwen-QwQ-32B.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    std::string prompt = t.render(messages, {.eos_token = "<|im_end|>", .extra = {{"enable_thinking", true}}});
    REQUIRE(prompt_opens_reasoning(f, prompt) == "<think>\n");
    ChatReply r = parse_chat_reply("Okay, France's capital is Paris.\n</think>\n\nParis.",
                                   {.format = f, .reasoning_open = "<think>\n"}, false);
    CHECK(r.reasoning == "Okay, France's capital is Paris.");
    CHECK(r.content == "Paris.");
    ChatReply streaming =
        parse_chat_reply("Okay, France's capital", {.format = f, .reasoning_open = "<think>\n"}, true);
    CHECK(streaming.reasoning == "Okay, France's capital");
    CHECK(streaming.content.empty());
  }
  {  // Nemotron-3: enable_thinking (default on) opens <think> in the prompt; off closes an empty block
    ChatTemplate t = ChatTemplate::parse(data("templates/NVIDIA-Nemotron-3-Nano-30B-A3B-BF16.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    CHECK(f.tools == ToolCallFormat::QwenXml);
    CHECK(f.reasoning == Reasoning::Think);
    std::string opened = prompt_opens_reasoning(f, t.render(messages, {}));
    REQUIRE(opened == "<think>\n");
    CHECK(prompt_opens_reasoning(f, t.render(messages, {.extra = {{"enable_thinking", true}}})) == opened);
    std::string reply = "I'm\nthinking\n</think>\nHello, world!\nWhat's up?";
    ChatReply r = parse_chat_reply(reply, {.format = f, .reasoning_open = opened}, false);
    CHECK(r.reasoning == "I'm\nthinking");
    CHECK(r.content == "Hello, world!\nWhat's up?");
    ChatReply none = parse_chat_reply(reply, {.format = f, .split_reasoning = false, .reasoning_open = opened}, false);
    CHECK(none.content == "<think>\n" + reply);  // reasoning_format none, as llama.cpp gives it
    std::string quiet = t.render(messages, {.extra = {{"enable_thinking", false}}});
    CHECK(quiet.ends_with("<|im_start|>assistant\n<think></think>"));
    CHECK(prompt_opens_reasoning(f, quiet).empty());
    CHECK(prompt_closes_reasoning(f, quiet));
    CHECK(parse_chat_reply("Hello, world!\nWhat's up?", {.format = f}, false).content == "Hello, world!\nWhat's up?");
  }
  {  // Nemotron-H v2: /no_think in the system message turns it off
    ChatTemplate t = ChatTemplate::parse(data("templates/NVIDIA-Nemotron-Nano-v2.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    CHECK(f.tools == ToolCallFormat::NemotronV2);
    CHECK(f.reasoning == Reasoning::Think);
    CHECK(prompt_opens_reasoning(f, t.render(messages, {})) == "<think>\n");
    json quiet = json::array({{{"role", "system"}, {"content", "/no_think"}}, messages[0]});
    CHECK(prompt_closes_reasoning(f, t.render(quiet, {})));
  }
  {  // gpt-oss: the analysis channel is reasoning, the final channel content
    ChatTemplate t = ChatTemplate::parse(data("templates/openai-gpt-oss-120b.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    REQUIRE(f.harmony());
    CHECK(t.render(messages, {}).ends_with("<|start|>assistant"));
    std::string reply =
        "<|channel|>analysis<|message|>User asks capital of France. Answer: Paris.<|end|>"
        "<|start|>assistant<|channel|>final<|message|>The capital of France is Paris.";
    ChatReply r = parse_chat_reply(reply, {.format = f}, false);
    CHECK(r.reasoning == "User asks capital of France. Answer: Paris.");
    CHECK(r.content == "The capital of France is Paris.");
    ChatReply none = parse_chat_reply(reply, {.format = f, .split_reasoning = false}, false);
    CHECK(none.reasoning.empty());
    CHECK(none.content ==
          "<|channel|>analysis<|message|>User asks capital of France. Answer: Paris.<|end|>The capital of France is "
          "Paris.");
  }
}

TEST_CASE("chat output: hold_back keeps what may start a marker", "[chat_output]") {
  CHECK(hold_back("Hello <tool_c", {"<tool_call>"}) == "Hello ");
  CHECK(hold_back("Hello <", {"<tool_call>", "<think>"}) == "Hello ");
  CHECK(hold_back("Hello", {"<tool_call>"}) == "Hello");
  CHECK(hold_back("a <tool_call>", {"<tool_call>"}) == "a <tool_call>");  // whole markers are the parser's
}

// The faults that llama.cpp's own expectations (tests/test-chat.cpp) found in these readers, as
// replies written here from the formats.
TEST_CASE("chat output: the replies where vkllm and llama.cpp's readers differed", "[chat_output]") {
  json tools = json::parse(R"([{"type": "function", "function": {"name": "get_weather",
    "parameters": {"type": "object", "properties": {"location": {"type": "string"}}, "required": ["location"]}}}])");
  auto stream_extends = [](const std::string& output, const ChatReplyOptions& o) {
    ChatReply before;
    for (size_t n = 0; n <= output.size(); ++n) {
      ChatReply now = parse_chat_reply(std::string_view(output).substr(0, n), o, true);
      check_extends(before, now, fmt::format("prefix of {} bytes", n));
      before = std::move(now);
    }
    check_extends(before, parse_chat_reply(output, o, false), "the whole reply");
  };
  {  // Qwen3.5: the prompt opened <think>, the model calls from inside it without closing it
    ChatTemplate t = ChatTemplate::parse(data("templates/Qwen3.5-4B.jinja"));
    ChatFormat f = ChatFormat::detect(t.source());
    std::string opened = prompt_opens_reasoning(f, t.render(json::array({{{"role", "user"}, {"content", "Hi"}}}), {}));
    REQUIRE(opened == "<think>\n");
    std::string reply =
        "I'm\nthinking\n<tool_call>\n<function=get_weather>\n<parameter=location>\nParis\n</parameter>\n</function>\n"
        "</tool_call>";
    ChatReplyOptions o{.format = f, .reasoning_open = opened, .tool_calls = true, .tools = &tools};
    ChatReply r = parse_chat_reply(reply, o, false);
    CHECK(r.reasoning == "I'm\nthinking");
    CHECK(r.content.empty());
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(json::parse(r.tool_calls[0].arguments) == json{{"location", "Paris"}});
    stream_extends(reply, o);
    // Without tools offered it stays reasoning. With them the first of </think> and <tool_call>
    // ends it (as llama.cpp reads Qwen3.5), so a longer reply never undoes a shorter one's reading.
    CHECK(parse_chat_reply(reply, {.format = f, .reasoning_open = opened}, false).reasoning == reply);
    ChatReply closed = parse_chat_reply("Paris, I think.\n</think>\n\nIt is sunny. <tool_call>", o, false);
    CHECK(closed.reasoning == "Paris, I think.");
    CHECK(closed.content == "It is sunny. <tool_call>");
    CHECK(closed.tool_calls.empty());
    ChatReply early = parse_chat_reply("I could use <tool_call> here.\n</think>\n\nParis is sunny.", o, false);
    CHECK(early.reasoning == "I could use");
    CHECK(early.tool_calls.empty());
    // reasoning_format none: the content gives the opened tag back, so the pair matches
    ChatReply none = parse_chat_reply("I'm\nthinking\n</think>\n\nHello, world!\nWhat's up?",
                                      {.format = f, .split_reasoning = false, .reasoning_open = opened}, false);
    CHECK(none.content == "<think>\nI'm\nthinking\n</think>\n\nHello, world!\nWhat's up?");
    CHECK(none.reasoning.empty());
  }
  ChatFormat harmony = ChatFormat::detect(data("templates/openai-gpt-oss-120b.jinja"));
  REQUIRE(harmony.harmony());
  for (const char* builtin :  // calls to tools the client never offered are not the answer
       {"<|channel|>analysis<|message|>I will execute python to say hello<|end|><|start|>assistant "
        "to=container.exec<|channel|>commentary<|message|>python3 -c 'print(\"hello\")'",
        "<|channel|>analysis<|message|>I will execute python to say "
        "hello<|end|><|start|>assistant<|channel|>commentary "
        "to=python <|constrain|>code<|message|>print(\"hello\")"}) {
    INFO(builtin);
    for (bool offered : {false, true}) {
      ChatReplyOptions o{.format = harmony, .tool_calls = offered, .tools = &tools};
      ChatReply r = parse_chat_reply(builtin, o, false);
      CHECK(r.reasoning == "I will execute python to say hello");
      CHECK(r.content.empty());
      CHECK(r.tool_calls.empty());
      CHECK(parse_chat_reply(builtin, o, true).content.empty());
    }
  }
  for (const char* twice :  // two channels in one header: the last one is the message's
       {"<|channel|>commentary "
        "to=assistant<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>"
        "final<|message|>Hello, world!\nWhat's up?",
        "<|channel|>analysis<|message|>I'm\nthinking<|end|><|start|>assistant<|channel|>commentary "
        "to=assistant<|channel|>final<|message|>Hello, world!\nWhat's up?"}) {
    INFO(twice);
    ChatReply r = parse_chat_reply(twice, {.format = harmony}, false);
    CHECK(r.reasoning == "I'm\nthinking");
    CHECK(r.content == "Hello, world!\nWhat's up?");
  }
  // the recipient in the role header, and in the channel header, with tools offered
  for (const char* call : {" to=functions.get_weather<|channel|>analysis<|message|>{\"location\": \"Oslo\"}",
                           "<|channel|>analysis to=functions.get_weather<|message|>{\"location\": \"Oslo\"}"}) {
    ChatReply r = parse_chat_reply(call, {.format = harmony, .tool_calls = true, .tools = &tools}, false);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.tool_calls[0].name == "get_weather");
    CHECK(r.content.empty());
  }
}

TEST_CASE("chat output: templates whose tool syntax vkllm does not read are named, never guessed", "[chat_output]") {
  const std::pair<const char*, const char*> cases[] = {
      {"GLM-4.6.jinja", "GLM-4"},
      {"GLM-4.7-Flash.jinja", "GLM-4"},
      {"MiniMax-M2.jinja", "MiniMax-M2"},
      {"inclusionai-ling-3.0-flash.jinja", "Ling"},
      {"openbmb-MiniCPM5-1B.jinja", "MiniCPM"},
      {"Apriel-1.6-15b-Thinker-fixed.jinja", "Apriel"},
      {"ByteDance-Seed-OSS.jinja", "Seed-OSS"},
      {"meetkai-functionary-medium-v3.1.jinja", "Functionary v3.1"},
      {"moonshotai-Kimi-K2.jinja", "Kimi K2"},
      {"CohereForAI-c4ai-command-r7b-12-2024-tool_use.jinja", "Command R"},
  };
  for (const auto& [file, family] : cases) {
    INFO(file);
    ChatFormat f = ChatFormat::detect(data(std::string("templates/") + file));
    CHECK(f.tools == ToolCallFormat::Unknown);
    CHECK(f.unknown == family);
    // what such a model writes stays text: nothing is read as a call in a syntax it never wrote
    std::string reply = "<tool_call>get_weather<arg_key>location</arg_key><arg_value>Paris</arg_value></tool_call>";
    ChatReply r = parse_chat_reply(reply, {.format = f, .tool_calls = true}, false);
    CHECK(r.tool_calls.empty());
    CHECK(r.content.find("get_weather") != std::string::npos);
  }
  // a template that renders no calls keeps llama.cpp's generic JSON form; vkllm's ChatML, Hermes
  CHECK(ChatFormat::detect(data("templates/google-gemma-2-2b-it.jinja")).tools == ToolCallFormat::Generic);
  CHECK(ChatFormat::detect("{{ '<|im_start|>' }}").tools == ToolCallFormat::Hermes);
}

TEST_CASE("chat output: LFM2's Python calls become JSON arguments, anything else stays text", "[chat_output]") {
  ChatReplyOptions o{.format = ChatFormat::detect(data("templates/LFM2.5-8B-A1B.jinja")), .tool_calls = true};
  REQUIRE(o.format.tools == ToolCallFormat::Lfm2);
  auto args_of = [&](const std::string& call) {
    ChatReply r = parse_chat_reply("<|tool_call_start|>[f(" + call + ")]<|tool_call_end|>", o, false);
    INFO(call);
    REQUIRE(r.tool_calls.size() == 1);
    CHECK(r.content.empty());
    return json::parse(r.tool_calls[0].arguments);
  };
  CHECK(args_of("a=(1, 2.5, -3e2), b=[], c={}, d=False, e=null,") ==
        json::parse(R"({"a": [1, 2.5, -300.0], "b": [], "c": {}, "d": false, "e": null})"));
  CHECK(args_of("s='a\\tb\\\\c\\'d\"e\\q', t = \"\\u00e9\\x41\"") == json{{"s", "a\tb\\c'd\"e\\q"}, {"t", "éA"}});
  CHECK(args_of("my-key={'x': [True, None]}") == json{{"my-key", {{"x", {true, nullptr}}}}});
  for (const char* text :
       {"<|tool_call_start|>[f(1)]<|tool_call_end|>", "<|tool_call_start|>[f(a=01)]<|tool_call_end|>",
        "<|tool_call_start|>[f(a=x)]<|tool_call_end|>", "<|tool_call_start|>[f(a=1)]",
        "<|tool_call_start|>[f(a='x)]<|tool_call_end|>", "<|tool_call_start|>f(a=1)<|tool_call_end|>"}) {
    INFO(text);
    ChatReply r = parse_chat_reply(text, o, false);
    CHECK(r.tool_calls.empty());
    CHECK(r.content == text);
  }
  // two blocks, and content around them
  ChatReply two = parse_chat_reply(
      "Sure. <|tool_call_start|>[f(a=1)]<|tool_call_end|>\n<|tool_call_start|>[g()]<|tool_call_end|> Done.", o, false);
  REQUIRE(two.tool_calls.size() == 2);
  CHECK(two.tool_calls[1].name == "g");
  CHECK(two.tool_calls[1].arguments == "{}");
  CHECK(two.content == "Sure. Done.");
}
