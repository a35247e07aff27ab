// Ollama's routes (/api/*): the model list and facts from ApiOptions::facts, and /api/chat and
// /api/generate through the OpenAI completion routes (ollama.h translates both ways): one set of
// checks, one scheduler. Streams are NDJSON, one object per line, as Ollama sends them.
#include <fmt/format.h>
#include <chrono>
#include <ctime>

#include "serve/api.h"
#include "serve/ollama.h"
#include "serve/openai.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace vkllm::serve {

namespace {

using Clock = std::chrono::steady_clock;

int64_t ns_since(Clock::time_point start) {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(Clock::now() - start).count();
}

std::string rfc3339(int64_t unix_seconds) {
  return utc_time(std::chrono::system_clock::time_point(std::chrono::seconds(unix_seconds)), 0);
}

// "135.0M", "7.6B": Ollama's parameter_size.
std::string parameter_size(uint64_t n) {
  if (n >= 1000000000) return fmt::format("{:.1f}B", double(n) / 1e9);
  if (n >= 1000000) return fmt::format("{:.1f}M", double(n) / 1e6);
  return fmt::format("{:.1f}K", double(n) / 1e3);
}

// An identifier of the served file in the digest's form (64 hex digits, from its name, size and
// time; not a hash of its bytes, which would mean reading gigabytes at startup).
std::string digest(const std::string& id, const ModelFacts& f) {
  std::string key = fmt::format("{}|{}|{}", id, f.file_bytes, f.modified);
  std::string out;
  for (uint64_t lane = 0; lane < 4; ++lane) {
    uint64_t h = 1469598103934665603ull ^ lane;
    for (unsigned char c : key) h = (h ^ c) * 1099511628211ull;
    out += fmt::format("{:016x}", h);
  }
  return out;
}

// Reads "data: <payload>\n\n", one server-sent event as the OpenAI stream writes it.
std::string_view sse_payload(std::string_view event) {
  constexpr std::string_view prefix = "data: ";
  if (event.starts_with(prefix)) event.remove_prefix(prefix.size());
  while (!event.empty() && (event.back() == '\n' || event.back() == '\r')) event.remove_suffix(1);
  return event;
}

}  // namespace

json Api::ollama_model_json(bool running) const {
  const ModelFacts& f = options_.facts;
  std::string name = ollama_name(options_.model_id);
  json details = {{"parent_model", ""},
                  {"format", "gguf"},
                  {"family", f.architecture},
                  {"families", json::array({f.architecture})},
                  {"parameter_size", parameter_size(f.parameters)},
                  {"quantization_level", f.quantization}};
  json m = {{"name", name}, {"model", name}};
  if (running) {
    m["size"] = f.memory_bytes;
    m["digest"] = digest(options_.model_id, f);
    m["details"] = details;
    m["expires_at"] = "2318-01-01T00:00:00Z";  // loaded for as long as the server runs
    m["size_vram"] = f.memory_bytes;
    m["context_length"] = gen_.n_ctx();
  } else {
    m["modified_at"] = rfc3339(f.modified);
    m["size"] = f.file_bytes;
    m["digest"] = digest(options_.model_id, f);
    m["details"] = details;
  }
  return m;
}

HttpReply Api::ollama_tags() const { return {.body = dump({{"models", json::array({ollama_model_json(false)})}})}; }

HttpReply Api::ollama_ps() const { return {.body = dump({{"models", json::array({ollama_model_json(true)})}})}; }

HttpReply Api::ollama_version() const {
  return {.body = dump({{"version", kOllamaApiVersion}, {"vkllm_version", VKLLM_VERSION}})};
}

HttpReply Api::ollama_show(const HttpRequest& r) const {
  json body = parse_body(r.body);
  check_ollama_model(body, options_.model_id);
  const ModelFacts& f = options_.facts;
  const ModelConfig& c = gen_.config();
  json capabilities = json::array({"completion"});
  std::string source = options_.chat_template ? options_.chat_template->source() : "";
  if (source.find("tools") != std::string::npos && format_.tools != ToolCallFormat::Unknown)
    capabilities.push_back("tools");
  if (format_.reasons()) capabilities.push_back("thinking");
  const json* verbose = body.contains("verbose") ? &body["verbose"] : nullptr;
  if (verbose && !verbose->is_boolean() && !verbose->is_null()) throw bad_request("'verbose' must be true or false");
  json info = f.model_info ? f.model_info(verbose && verbose->is_boolean() && verbose->get<bool>()) : json::object();
  info["general.architecture"] = f.architecture;
  info["general.parameter_count"] = f.parameters;  // counted from the tensors, which every file has
  // The keys Ollama's reference shows, from the loaded model where the file's metadata lacks them.
  const Tokenizer& tok = gen_.tokenizer();
  json known = {{f.architecture + ".attention.head_count", c.n_heads},
                {f.architecture + ".attention.head_count_kv", c.n_kv_heads},
                {f.architecture + ".attention.layer_norm_rms_epsilon", c.norm_eps},
                {f.architecture + ".block_count", c.n_layers},
                {f.architecture + ".context_length", c.seq_len},
                {f.architecture + ".embedding_length", c.dim},
                {f.architecture + ".feed_forward_length", c.hidden_dim.empty() ? 0u : c.hidden_dim[0]},
                {f.architecture + ".rope.dimension_count", c.rope.dim},
                {f.architecture + ".rope.freq_base", c.rope.theta},
                {f.architecture + ".vocab_size", tok.vocab_size()},
                {"tokenizer.ggml.bos_token_id", tok.bos()},
                {"tokenizer.ggml.eos_token_id", tok.eos()},
                {"tokenizer.ggml.merges", json::array()},
                {"tokenizer.ggml.token_type", json::array()},
                {"tokenizer.ggml.tokens", json::array()}};
  for (const auto& [key, value] : known.items())
    if (!info.contains(key)) info[key] = value;
  json m = ollama_model_json(false);
  return {.body = dump(
              {{"modelfile", fmt::format("# vkllm serves this model as it was loaded\nFROM {}\n", options_.model_id)},
               {"parameters", ""},
               {"template", source},
               {"details", m["details"]},
               {"model_info", info},
               {"capabilities", capabilities},
               {"modified_at", m["modified_at"]}})};
}

HttpReply Api::ollama_unsupported(const HttpRequest& r) const {
  std::string what = r.path.substr(std::string_view("/api/").size());
  throw ApiError(501, "not_implemented_error",
                 fmt::format("this is vkllm, not Ollama: it serves the one model it was started with and cannot {} "
                             "models (use `vkllm pull` and restart `vkllm serve -m`)",
                             what));
}

// /api/chat (chat_route) and /api/generate.
HttpReply Api::ollama_generate(const HttpRequest& r, bool chat_route, const ClientAlive& alive) const {
  auto start = Clock::now();
  json body = parse_body(r.body);
  check_ollama_model(body, options_.model_id);
  bool chat = true;
  json openai = chat_route ? ollama_chat_to_openai(body) : ollama_generate_to_openai(body, chat);
  std::string name = ollama_name(options_.model_id);
  bool no_prompt = chat_route ? openai["messages"].empty() : body.value("prompt", json("")) == "";
  if (no_prompt)  // how Ollama clients load a model: it is loaded
    return {.body = dump({{"model", name},
                          {"created_at", ollama_time()},
                          {chat_route ? "message" : "response",
                           chat_route ? json{{"role", "assistant"}, {"content", ""}} : json("")},
                          {"done", true},
                          {"done_reason", "load"}})};
  HttpRequest inner = r;
  inner.body = dump(openai);
  HttpReply reply = completions(inner, chat, alive);
  auto out = std::make_shared<OllamaReply>(name, chat_route, chat);
  // /api/generate's `context`: the conversation's tokens, the reply's as the vocabulary encodes it
  // (not in raw mode, as Ollama).
  const Tokenizer& tok = gen_.tokenizer();
  auto context = [&tok, record = reply.record, with = !chat_route && chat](const OllamaReply& o) {
    std::optional<std::vector<int32_t>> ids;
    if (!with) return ids;
    ids = record->prompt_tokens;
    for (int32_t id : tok.encode(o.text(), false, false)) ids->push_back(id);
    return ids;
  };
  if (!reply.stream) {
    out->response(json::parse(reply.body));
    std::optional<std::vector<int32_t>> ids = context(*out);
    reply.body = dump(out->final(reply.record->usage, ns_since(start), true, ids ? &*ids : nullptr));
    return reply;
  }
  reply.content_type = "application/x-ndjson";
  reply.stream = [openai_stream = std::move(reply.stream), out, record = reply.record, start, context](
                     const BodyWriter& write, const ClientAlive& a) {
    bool open = true, failed = false;
    openai_stream(
        [&](std::string_view event) {
          json c = json::parse(sse_payload(event), nullptr, false);
          if (c.is_discarded()) return true;  // [DONE]
          if (c.contains("error")) {
            failed = true;
            return open = write(dump(ollama_error(c["error"].value("message", "generation failed"))) + "\n");
          }
          std::string line = out->chunk(c);
          return line.empty() || (open = write(line));
        },
        a);
    if (!open || failed) return;
    std::string calls = out->pending_tool_calls();
    if (!calls.empty() && !write(calls)) return;
    std::optional<std::vector<int32_t>> ids = context(*out);
    write(dump(out->final(record->usage, ns_since(start), false, ids ? &*ids : nullptr)) + "\n");
  };
  return reply;
}

}  // namespace vkllm::serve
