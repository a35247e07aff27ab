// Ollama's API reference held against vkllm serve: every example request in Ollama's docs/api.md
// (github.com/ollama/ollama at fb307609) for a route vkllm serves, sent as written (the model's
// name put in), and every field the reference's example responses show for it, with its JSON
// type. The expectations are written down here from that document. Fields whose example value is
// null carry no type and are not asked for; image inputs are refused by name (vkllm serves text
// models), as are `suffix` and `context` on /api/generate. Driven through serve::Api with a
// scripted generator (tests/scripted_api.h): the routes' own code, no GPU.
#include <fmt/format.h>

#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.h"
#include "scripted_api.h"
#include "serve_process.h"

using namespace vkllm;
using json = nlohmann::json;

namespace {

// A field by its path ("message.tool_calls.0.function.name") and the JSON type the reference
// shows: string, integer, number, boolean, array, object.
struct Field {
  const char* path;
  const char* type;
};

const json* at(const json& j, const std::string& path) {
  const json* cur = &j;
  std::istringstream parts(path);
  for (std::string part; std::getline(parts, part, '.');) {
    if (cur->is_array() && !part.empty() && std::isdigit(uint8_t(part[0])))
      cur = std::stoul(part) < cur->size() ? &(*cur)[std::stoul(part)] : nullptr;
    else
      cur = cur->is_object() && cur->contains(part) ? &(*cur)[part] : nullptr;
    if (!cur) return nullptr;
  }
  return cur;
}

bool of_type(const json& v, std::string_view type) {
  if (type == "string") return v.is_string();
  if (type == "integer") return v.is_number_integer();
  if (type == "number") return v.is_number();
  if (type == "boolean") return v.is_boolean();
  if (type == "array") return v.is_array();
  return v.is_object();
}

void conforms(const json& reply, std::initializer_list<Field> fields) {
  INFO(reply.dump());
  for (const Field& f : fields) {
    INFO(f.path << " should be " << f.type);
    const json* v = at(reply, f.path);
    REQUIRE(v);
    CHECK(of_type(*v, f.type));
  }
}

const std::initializer_list<Field> kDurations = {{"total_duration", "integer"},    {"load_duration", "integer"},
                                                 {"prompt_eval_count", "integer"}, {"prompt_eval_duration", "integer"},
                                                 {"eval_count", "integer"},        {"eval_duration", "integer"}};

// The final object of /api/generate and /api/chat: the reference's fields of the last line.
void final_conforms(const json& reply, bool chat) {
  conforms(reply, {{"model", "string"}, {"created_at", "string"}, {"done", "boolean"}, {"done_reason", "string"}});
  conforms(reply, kDurations);
  if (chat) conforms(reply, {{"message.role", "string"}, {"message.content", "string"}});
  if (!chat) conforms(reply, {{"response", "string"}, {"context", "array"}, {"context.0", "integer"}});
}

struct OllamaServer : test::ScriptedApi {
  std::string prompt_text() const { return gen->tokenizer().decode(gen->prompt); }
  // The reply to one request: the last object of a stream, the one object otherwise; streamed
  // lines are checked on the way.
  json send(const std::string& method, const std::string& path, json body, bool chat) {
    if (body.is_object()) body["model"] = "fixture";
    serve::HttpReply r =
        api->handle({.method = method, .path = path, .body = body.is_null() ? "" : body.dump()}, [] { return true; });
    INFO(method << " " << path << " " << body.dump() << "\n" << r.body);
    REQUIRE(r.status == 200);
    if (!r.stream) return json::parse(r.body);
    std::string text;
    r.stream([&](std::string_view s) { return text += s, true; }, [] { return true; });
    std::vector<json> lines = test::parse_ndjson(text);
    REQUIRE(!lines.empty());
    for (size_t i = 0; i + 1 < lines.size(); ++i) {
      conforms(lines[i], {{"model", "string"}, {"created_at", "string"}, {"done", "boolean"}});
      if (chat) conforms(lines[i], {{"message.role", "string"}, {"message.content", "string"}});
      if (!chat) conforms(lines[i], {{"response", "string"}});
    }
    return lines.back();
  }
};

const char* const kWeatherTool = R"({"type": "function", "function": {"name": "get_weather",
  "description": "Get the weather in a given city", "parameters": {"type": "object", "properties": {
  "city": {"type": "string", "description": "The city to get the weather for"}}, "required": ["city"]}}})";

const char* const kSchema = R"({"type": "object", "properties": {"age": {"type": "integer"},
  "available": {"type": "boolean"}}, "required": ["age", "available"]})";

}  // namespace

TEST_CASE("ollama api reference: /api/generate's examples", "[serve_ollama_api]") {
  OllamaServer s;
  auto gen = [&](const std::string& body) {
    s.script({"The sky", " is blue."});
    return s.send("POST", "/api/generate", json::parse(body), false);
  };
  final_conforms(gen(R"({"prompt": "Why is the sky blue?"})"), false);
  json whole = gen(R"({"prompt": "Why is the sky blue?", "stream": false})");
  final_conforms(whole, false);
  CHECK(whole["response"] == "The sky is blue.");
  s.script({"{\"age\": 22, \"available\": true}"});
  final_conforms(s.send("POST", "/api/generate",
                        json::parse(fmt::format(R"({{"prompt":
      "Ollama is 22 years old and is busy saving the world. Respond using JSON", "stream": false, "format": {}}})",
                                                kSchema)),
                        false),
                 false);
  CHECK(s.gen->request.constraint.automaton);
  final_conforms(gen(R"({"prompt": "What color is the sky at different times of the day? Respond using JSON",
                         "format": "json", "stream": false})"),
                 false);
  json raw = gen(R"({"prompt": "[INST] why is the sky blue? [/INST]", "raw": true, "stream": false})");
  conforms(raw, {{"model", "string"}, {"created_at", "string"}, {"response", "string"}, {"done", "boolean"}});
  conforms(raw, kDurations);  // raw mode returns no context, as the reference says
  final_conforms(gen(R"({"prompt": "Why is the sky blue?", "options": {"seed": 123}})"), false);
  final_conforms(gen(R"({"prompt": "Why is the sky blue?", "stream": false, "options": {"num_keep": 5, "seed": 42,
      "num_predict": 100, "draft_num_predict": 4, "top_k": 20, "top_p": 0.9, "min_p": 0.0, "typical_p": 0.7,
      "repeat_last_n": 33, "temperature": 0.8, "repeat_penalty": 1.2, "presence_penalty": 1.5,
      "frequency_penalty": 1.0, "penalize_newline": true, "stop": ["\n", "user:"], "numa": false, "num_ctx": 1024,
      "num_batch": 2, "num_gpu": 1, "main_gpu": 0, "use_mmap": true, "num_thread": 8}})"),
                 false);
  CHECK(s.gen->request.max_tokens == 100u);
  for (const char* load : {"{}", R"({"keep_alive": 0})"})  // load (and unload: vkllm keeps its one model)
    conforms(s.send("POST", "/api/generate", json::parse(load), false),
             {{"model", "string"}, {"created_at", "string"}, {"response", "string"}, {"done", "boolean"}});
  // refused, saying why: images on a server without a projector, suffix
  for (const auto& [body, says] : {std::pair{R"({"prompt": "What is in this picture?", "images": ["aGk="]})", "images"},
                                   std::pair{R"({"prompt": "def f(a):", "suffix": "    return a"})", "suffix"}}) {
    json b = json::parse(body);
    b["model"] = "fixture";
    serve::HttpReply r = s.post("/api/generate", b);
    CHECK(r.status == 400);
    CHECK(json::parse(r.body)["error"].get<std::string>().find(says) != std::string::npos);
  }
}

TEST_CASE("ollama api reference: /api/chat's examples", "[serve_ollama_api]") {
  OllamaServer s;
  auto chat = [&](const std::string& body, std::vector<std::string> reply = {"Hello!", " How are you today?"}) {
    s.script(reply);
    return s.send("POST", "/api/chat", json::parse(body), true);
  };
  const char* question = R"([{"role": "user", "content": "why is the sky blue?"}])";
  final_conforms(chat(fmt::format(R"({{"messages": {}}})", question)), true);
  final_conforms(chat(fmt::format(R"({{"messages": {}, "stream": false}})", question)), true);
  std::string call = "<tool_call>\n{\"name\": \"get_weather\", \"arguments\": {\"city\": \"Tokyo\"}}\n</tool_call>";
  for (const char* stream : {"true", "false"}) {
    json r = chat(fmt::format(R"({{"messages": [{{"role": "user", "content": "what is the weather in tokyo?"}}],
                                   "tools": [{}], "stream": {}}})",
                              kWeatherTool, stream),
                  {call});
    final_conforms(r, true);
    if (std::string(stream) == "false")
      conforms(r, {{"message.tool_calls", "array"},
                   {"message.tool_calls.0.function.name", "string"},
                   {"message.tool_calls.0.function.arguments", "object"}});
  }
  s.script({"{\"age\": 22, \"available\": false}"});
  final_conforms(s.send("POST", "/api/chat",
                        json::parse(fmt::format(R"({{"messages": [{{"role": "user", "content":
      "Ollama is 22 years old and busy saving the world. Return a JSON object with the age and availability."}}],
      "stream": false, "format": {}, "options": {{"temperature": 0}}}})",
                                                kSchema)),
                        true),
                 true);
  final_conforms(chat(R"({"messages": [{"role": "user", "content": "why is the sky blue?"},
      {"role": "assistant", "content": "due to rayleigh scattering."},
      {"role": "user", "content": "how is that different than mie scattering?"}]})"),
                 true);
  final_conforms(chat(fmt::format(R"({{"messages": [{{"role": "user", "content": "what is the weather in Toronto?"}},
      {{"role": "assistant", "content": "", "tool_calls": [{{"function": {{"name": "get_weather", "arguments":
      {{"city": "Toronto"}}}}}}]}}, {{"role": "tool", "content": "11 degrees celsius", "tool_name": "get_weather"}}],
      "stream": false, "tools": [{}]}})",
                                  kWeatherTool)),
                 true);
  CHECK(s.prompt_text().find("11 degrees celsius") != std::string::npos);
  final_conforms(
      chat(R"({"messages": [{"role": "user", "content": "Hello!"}], "options": {"seed": 101, "temperature": 0}})"),
      true);
  for (const char* load : {R"({"messages": []})", R"({"messages": [], "keep_alive": 0})"})
    conforms(s.send("POST", "/api/chat", json::parse(load), true), {{"model", "string"},
                                                                    {"created_at", "string"},
                                                                    {"message.role", "string"},
                                                                    {"message.content", "string"},
                                                                    {"done_reason", "string"},
                                                                    {"done", "boolean"}});
  json images = json::parse(R"({"model": "fixture", "messages": [{"role": "user", "content": "what is in this image?",
                                "images": ["aGk="]}]})");
  serve::HttpReply r = s.post("/api/chat", images);
  CHECK(r.status == 400);
  CHECK(json::parse(r.body)["error"].get<std::string>().find("images") != std::string::npos);
}

TEST_CASE("ollama api reference: /api/tags, /api/show, /api/ps, /api/embed, /api/version", "[serve_ollama_api]") {
  OllamaServer s;
  const std::initializer_list<Field> details = {
      {"details.parent_model", "string"},   {"details.format", "string"},
      {"details.family", "string"},         {"details.families", "array"},
      {"details.parameter_size", "string"}, {"details.quantization_level", "string"}};
  json tags = s.send("GET", "/api/tags", nullptr, false);
  REQUIRE(tags["models"].size() == 1);
  conforms(
      tags["models"][0],
      {{"name", "string"}, {"model", "string"}, {"modified_at", "string"}, {"size", "integer"}, {"digest", "string"}});
  conforms(tags["models"][0], details);
  json show = s.send("POST", "/api/show", json::object(), false);
  conforms(show, {{"modelfile", "string"},
                  {"parameters", "string"},
                  {"template", "string"},
                  {"model_info", "object"},
                  {"capabilities", "array"}});
  conforms(show, details);
  std::string arch = show["model_info"]["general.architecture"];
  for (std::string key : {"attention.head_count", "attention.head_count_kv", "block_count", "context_length",
                          "embedding_length", "feed_forward_length", "rope.dimension_count", "vocab_size"})
    CHECK(show["model_info"][arch + "." + key].is_number_integer());
  for (std::string key : {"attention.layer_norm_rms_epsilon", "rope.freq_base"})
    CHECK(show["model_info"][arch + "." + key].is_number());
  CHECK(show["model_info"]["general.parameter_count"].is_number_integer());
  CHECK(show["model_info"]["tokenizer.ggml.bos_token_id"].is_number_integer());
  CHECK(show["model_info"]["tokenizer.ggml.eos_token_id"].is_number_integer());
  for (const char* key : {"tokenizer.ggml.merges", "tokenizer.ggml.token_type", "tokenizer.ggml.tokens"})
    CHECK(show["model_info"][key].is_array());  // full only when verbose, as Ollama
  json ps = s.send("GET", "/api/ps", nullptr, false);
  conforms(ps["models"][0], {{"name", "string"},
                             {"model", "string"},
                             {"size", "integer"},
                             {"digest", "string"},
                             {"expires_at", "string"},
                             {"size_vram", "integer"}});
  conforms(ps["models"][0], details);
  json one = s.send("POST", "/api/embed", json{{"input", "Why is the sky blue?"}}, false);
  conforms(one, {{"model", "string"},
                 {"embeddings", "array"},
                 {"embeddings.0", "array"},
                 {"embeddings.0.0", "number"},
                 {"total_duration", "integer"},
                 {"load_duration", "integer"},
                 {"prompt_eval_count", "integer"}});
  json two = s.send("POST", "/api/embed", json{{"input", {"Why is the sky blue?", "Why is the grass green?"}}}, false);
  CHECK(two["embeddings"].size() == 2);
  conforms(s.send("GET", "/api/version", nullptr, false), {{"version", "string"}});
}
