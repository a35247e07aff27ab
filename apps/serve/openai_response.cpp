// Response objects of the OpenAI routes: the fields every object and chunk share, usage, errors,
// and the wire format (JSON that survives invalid UTF-8, server-sent events).
#include <fmt/format.h>
#include <algorithm>
#include <chrono>
#include <ctime>
#include <mutex>
#include <random>

#include "serve/openai.h"

namespace vkllm::serve {

json error_body(int status, const std::string& type, const std::string& message) {
  return {{"error", {{"message", message}, {"type", type}, {"code", status}}}};
}

ResponseHeader new_response_header(bool chat, const std::string& model) {
  static std::mt19937_64 rng(std::random_device{}());
  static std::mutex mutex;
  uint64_t r;
  {
    std::lock_guard lock(mutex);
    r = rng();
  }
  int64_t now =
      std::chrono::duration_cast<std::chrono::seconds>(std::chrono::system_clock::now().time_since_epoch()).count();
  return {fmt::format("{}-{:016x}", chat ? "chatcmpl" : "cmpl", r), model, now, chat};
}

json usage_json(const Usage& u) {
  return {{"prompt_tokens", u.prompt_tokens},
          {"completion_tokens", u.completion_tokens},
          {"total_tokens", u.prompt_tokens + u.completion_tokens},
          {"prompt_tokens_details", {{"cached_tokens", u.cached_tokens}}}};
}

json timings_json(const Usage& u) {
  uint32_t evaluated = u.prompt_tokens - u.cached_tokens;
  auto per_second = [](uint32_t n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; };
  return {{"cache_n", u.cached_tokens},
          {"prompt_n", evaluated},
          {"prompt_ms", u.prompt_ms},
          {"prompt_per_second", per_second(evaluated, u.prompt_ms)},
          {"predicted_n", u.completion_tokens},
          {"predicted_ms", u.generation_ms},
          {"predicted_per_second", per_second(u.completion_tokens, u.generation_ms)}};
}

json header_json(const ResponseHeader& h, bool chunk) {
  const char* object = h.chat ? (chunk ? "chat.completion.chunk" : "chat.completion") : "text_completion";
  return {
      {"id", h.id}, {"object", object}, {"created", h.created}, {"model", h.model}, {"system_fingerprint", "vkllm"}};
}

json usage_chunk_json(const ResponseHeader& h, const Usage& u) {
  json j = header_json(h, true);
  j["choices"] = json::array();
  j["usage"] = usage_json(u);
  j["timings"] = timings_json(u);
  return j;
}

std::string utc_time(std::chrono::system_clock::time_point t, int fraction_digits) {
  std::time_t seconds = std::chrono::system_clock::to_time_t(t);
  std::tm tm{};
  gmtime_r(&seconds, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%S", &tm);
  if (fraction_digits <= 0) return std::string(buf) + "Z";
  int64_t ns = std::chrono::duration_cast<std::chrono::nanoseconds>(t.time_since_epoch()).count() % 1000000000;
  std::string fraction = fmt::format("{:09}", ns).substr(0, size_t(std::min(fraction_digits, 9)));
  return fmt::format("{}.{}Z", buf, fraction);
}

std::string dump(const json& j) { return j.dump(-1, ' ', false, json::error_handler_t::replace); }

std::string sse(const json& j) { return "data: " + dump(j) + "\n\n"; }

}  // namespace vkllm::serve
