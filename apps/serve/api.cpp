// The routes of vkllm serve: authentication, dispatch, and every handler but generation
// (api_completions.cpp).
#include "serve/api.h"

#include <fmt/format.h>
#include <chrono>
#include <nlohmann/json.hpp>

#include "check.h"
#include "error.h"
#include "serve/anthropic.h"
#include "serve/ollama.h"
#include "serve/openai.h"
#include "serve/reply_plan.h"
#include "serve/web_assets.h"
#include "text/chat_template.h"

namespace vkllm::serve {

namespace {

HttpReply json_reply(const json& j, int status = 200) { return {.status = status, .body = dump(j)}; }

// Compares without an early exit, so the time taken does not tell how much of a guess was right.
bool same_secret(std::string_view a, std::string_view b) {
  unsigned char diff = a.size() == b.size() ? 0 : 1;
  for (size_t i = 0; i < a.size(); ++i) diff |= uint8_t(a[i]) ^ uint8_t(i < b.size() ? b[i] : 0);
  return diff == 0;
}

}  // namespace

Api::Api(Generator& generator, ApiOptions options)
    : gen_(generator),
      options_(std::move(options)),
      format_(ChatFormat::detect(options_.chat_template ? options_.chat_template->source() : "")),
      grammars_(std::make_unique<GrammarCache>(generator.tokenizer())),
      started_(std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch())
                   .count()) {}

Api::~Api() = default;

HttpReply Api::error(int status, const std::string& type, const std::string& message) {
  return json_reply(error_body(status, type, message), status);
}

bool Api::authorized(const HttpRequest& r) const {
  if (options_.api_key.empty()) return true;
  if (!r.x_api_key.empty() && same_secret(r.x_api_key, options_.api_key)) return true;
  std::string_view auth = r.authorization;
  constexpr std::string_view bearer = "Bearer ";
  return auth.substr(0, bearer.size()) == bearer && same_secret(auth.substr(bearer.size()), options_.api_key);
}

HttpReply Api::handle(const HttpRequest& request, const ClientAlive& alive) const {
  HttpReply reply = dispatch(request, alive);
  if (reply.status < 400) return reply;
  // Anthropic's and Ollama's clients read errors in their own shapes (Anthropic's SDK picks its
  // exception by the type).
  if (is_messages_path(request.path)) return anthropic_error_reply(std::move(reply));
  if (is_ollama_path(request.path)) return ollama_error_reply(std::move(reply));
  return reply;
}

HttpReply Api::dispatch(const HttpRequest& request, const ClientAlive& alive) const {
  try {
    return route(request, alive);
  } catch (const ApiError& e) {
    return error(e.status, e.type, e.what());
  } catch (const QueueFull& e) {
    return error(503, "unavailable_error", e.what());
  } catch (const VulkanError& e) {  // the engine's fault, not the request's (e.g. /v1/attention)
    return error(500, "server_error", e.what());
  } catch (const Error& e) {  // a template or tokenizer refused the request's content
    return error(400, "invalid_request_error", e.what());
  } catch (const std::exception& e) {
    return error(500, "server_error", e.what());
  }
}

HttpReply Api::route(const HttpRequest& r, const ClientAlive& alive) const {
  struct Route {
    const char* method;
    const char* path;
    std::function<HttpReply()> run;
  };
  const Route routes[] = {
      {"GET", "/health", [&] { return health(); }},
      {"GET", "/v1/models", [&] { return models(); }},
      {"GET", "/metrics", [&] { return metrics(); }},
      {"POST", "/v1/completions", [&] { return completions(r, false, alive); }},
      {"POST", "/v1/chat/completions", [&] { return completions(r, true, alive); }},
      {"POST", "/v1/messages", [&] { return messages(r, alive); }},
      {"POST", "/v1/messages/count_tokens", [&] { return count_tokens(r); }},
      {"POST", "/tokenize", [&] { return tokenize(r); }},
      {"POST", "/detokenize", [&] { return detokenize(r); }},
      {"POST", "/v1/attention", [&] { return attention(r); }},
      {"GET", "/v1/info", [&] { return info(); }},
      {"GET", "/slots", [&] { return slots(); }},
      {"GET", "/api/tags", [&] { return ollama_tags(); }},
      {"GET", "/api/version", [&] { return ollama_version(); }},
      {"GET", "/api/ps", [&] { return ollama_ps(); }},
      {"POST", "/api/show", [&] { return ollama_show(r); }},
      {"POST", "/api/chat", [&] { return ollama_generate(r, true, alive); }},
      {"POST", "/api/generate", [&] { return ollama_generate(r, false, alive); }},
      {"POST", "/api/pull", [&] { return ollama_unsupported(r); }},
      {"POST", "/api/push", [&] { return ollama_unsupported(r); }},
      {"POST", "/api/create", [&] { return ollama_unsupported(r); }},
      {"POST", "/api/copy", [&] { return ollama_unsupported(r); }},
      {"DELETE", "/api/delete", [&] { return ollama_unsupported(r); }},
      {"POST", "/v1/embeddings", [&] { return embeddings(r); }},
      {"POST", "/api/embed", [&] { return ollama_embed(r); }},
  };
  constexpr std::string_view model_prefix = "/v1/models/";
  if (r.path.starts_with(model_prefix) && r.path.size() > model_prefix.size()) {
    if (r.method != "GET")
      return error(405, "invalid_request_error", fmt::format("{} does not accept {}", r.path, r.method));
    if (!authorized(r)) return unauthorized();
    return model(r.path.substr(model_prefix.size()));
  }
  bool path_known = false;
  for (const Route& route : routes) {
    if (r.path != route.path) continue;
    path_known = true;
    if (r.method != route.method) continue;
    if (r.path != "/health" && !authorized(r)) return unauthorized();
    if (draining_ && r.path != "/health" && r.path != "/metrics") {
      HttpReply refused = error(503, "unavailable_error", "the server is stopping: it takes no new requests");
      refused.headers.emplace_back("Retry-After", std::to_string(kRetryAfterSeconds));
      return refused;
    }
    // Too many connections wait for a thread: work that needs the model is refused at once.
    if (r.overloaded && r.method == "POST") throw QueueFull();
    return route.run();
  }
  if (!path_known && (r.method == "GET" || r.method == "HEAD") && find_web_asset(r.path)) return page_file(r);
  if (path_known) return error(405, "invalid_request_error", fmt::format("{} does not accept {}", r.path, r.method));
  return error(404, "not_found_error", fmt::format("no route {} {}", r.method, r.path));
}

// The page loads only its own files and talks only to this server (the CSP says so to the
// browser; data: images are the ones the user picks, read in the page, never fetched); no-cache makes a browser ask
// again after the binary, and with it the page, changed.
HttpReply Api::page_file(const HttpRequest& r) {
  const WebAsset& a = *find_web_asset(r.path);
  return {
      .content_type = std::string(a.content_type),
      .body = std::string(a.body),
      .headers = {
          {"Cache-Control", "no-cache"},
          {"X-Content-Type-Options", "nosniff"},
          {"Content-Security-Policy",
           "default-src 'self'; img-src 'self' data:; object-src 'none'; base-uri 'none'; frame-ancestors 'none'"}}};
}

// 200 only while requests will be served; 503 once the generator cannot run anything (a lost
// device) or the server drains: load balancers and readiness probes take it out.
HttpReply Api::health() const {
  std::string fault = gen_.fault();
  if (fault.empty() && !draining_) return json_reply({{"status", "ok"}});
  json body = {{"status", fault.empty() ? "draining" : "error"}};
  body.update(fault.empty()
                  ? error_body(503, "unavailable_error",
                               "the server is stopping: it finishes its running requests and takes no new ones")
                  : error_body(503, "server_error", fault));
  HttpReply reply = json_reply(body, 503);
  reply.headers.emplace_back("Retry-After", std::to_string(kRetryAfterSeconds));
  return reply;
}

HttpReply Api::unauthorized() {
  return error(401, "authentication_error",
               "invalid or missing API key (Authorization: Bearer <key>, or x-api-key: <key>)");
}

json Api::model_json() const {
  return {{"id", options_.model_id},
          {"object", "model"},
          {"created", started_},
          {"owned_by", "vkllm"},
          {"meta", {{"n_ctx", gen_.n_ctx()}, {"n_vocab", gen_.tokenizer().vocab_size()}}}};
}

HttpReply Api::models() const { return json_reply({{"object", "list"}, {"data", json::array({model_json()})}}); }

// GET /v1/models/{id}: the served model by its id (an id with '/' arrives as more path segments).
HttpReply Api::model(const std::string& id) const {
  if (id != options_.model_id)
    return error(404, "not_found_error",
                 fmt::format("the model '{}' does not exist: this server runs '{}'", id, options_.model_id));
  return json_reply(model_json());
}

// GET /slots: llama-server's field names where they mean the same.
HttpReply Api::slots() const {
  json out = json::array();
  for (const SlotState& s : gen_.slot_states())
    out.push_back({{"id", s.id},
                   {"n_ctx", gen_.n_ctx()},
                   {"is_processing", s.processing},
                   {"n_tokens", s.tokens},
                   {"n_prompt_tokens", s.prompt_tokens},
                   {"n_prompt_tokens_cache", s.cached_tokens},
                   {"n_decoded", s.generated_tokens}});
  return json_reply(out);
}

HttpReply Api::tokenize(const HttpRequest& r) const {
  json body = parse_body(r.body);
  if (!body.contains("content") || !body["content"].is_string()) throw bad_request("'content' must be a string");
  auto flag = [&](const char* key, bool fallback) {
    if (!body.contains(key) || body[key].is_null()) return fallback;
    if (!body[key].is_boolean()) throw bad_request(fmt::format("'{}' must be true or false", key));
    return body[key].get<bool>();
  };
  bool add_special = flag("add_special", false), parse_special = flag("parse_special", true);
  bool pieces = flag("with_pieces", false);
  const Tokenizer& tok = gen_.tokenizer();
  std::vector<int32_t> ids = tok.encode(body["content"].get<std::string>(), add_special, parse_special);
  json tokens = json::array();
  for (int32_t id : ids) {
    if (pieces)
      tokens.push_back({{"id", id}, {"piece", tok.piece(id)}});
    else
      tokens.push_back(id);
  }
  return json_reply({{"tokens", tokens}});
}

HttpReply Api::detokenize(const HttpRequest& r) const {
  json body = parse_body(r.body);
  const Tokenizer& tok = gen_.tokenizer();
  if (!body.contains("tokens") || !body["tokens"].is_array()) throw bad_request("'tokens' must be an array");
  std::vector<int32_t> ids;
  for (const json& t : body["tokens"]) {
    if (!t.is_number_integer() || t.get<int64_t>() < 0 || t.get<int64_t>() >= int64_t(tok.vocab_size()))
      throw bad_request(fmt::format("'tokens' must hold token ids in 0..{}", tok.vocab_size() - 1));
    ids.push_back(int32_t(t.get<int64_t>()));
  }
  return json_reply({{"content", tok.decode(ids)}});
}

}  // namespace vkllm::serve
