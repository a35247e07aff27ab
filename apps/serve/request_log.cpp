// The request log's two formats and its file.
#include "serve/request_log.h"

#include <fmt/format.h>
#include <chrono>
#include <cstring>
#include <ctime>

#include "error.h"
#include "serve/openai.h"

namespace vkllm::serve {

namespace {

double rate(uint32_t n, double ms) { return ms > 0 ? n * 1000.0 / ms : 0.0; }

}  // namespace

RequestLog::RequestLog(const RequestLogOptions& options) : options_(options) {
  if (options.file.empty() || options.file == "-") return;
  out_ = std::fopen(options.file.c_str(), "a");
  ENSURE(out_, fmt::format("--log-file {}: cannot open it for appending: {}", options.file, std::strerror(errno)));
}

RequestLog::~RequestLog() {
  if (out_ != stderr) std::fclose(out_);
}

std::string RequestLog::format(const LoggedRequest& r, const std::string& time) const {
  const RequestRecord* g = r.record;
  if (options_.json) {
    json j = {{"time", time},   {"client", r.client}, {"method", r.method},
              {"path", r.path}, {"status", r.status}, {"total_ms", r.total_ms}};
    if (g) {
      const Usage& u = g->usage;
      j["prompt_tokens"] = u.prompt_tokens;
      j["cached_tokens"] = u.cached_tokens;
      j["generated_tokens"] = u.completion_tokens;
      j["ttft_ms"] = u.queue_ms + u.prompt_ms;
      j["tokens_per_second"] = rate(u.completion_tokens, u.generation_ms);
      if (options_.prompts) j["prompt"] = g->prompt;
    }
    return dump(j);
  }
  std::string line = fmt::format("{} {} {} {} {} {:.1f} ms", time, r.client, r.method, r.path, r.status, r.total_ms);
  if (g) {
    const Usage& u = g->usage;
    line +=
        fmt::format(" prompt={} cached={} generated={} ttft={:.1f} ms {:.1f} tok/s", u.prompt_tokens, u.cached_tokens,
                    u.completion_tokens, u.queue_ms + u.prompt_ms, rate(u.completion_tokens, u.generation_ms));
    if (options_.prompts) line += " prompt_text=" + dump(json(g->prompt));
  }
  return line;
}

void RequestLog::write(const LoggedRequest& r) {
  std::string line = format(r, utc_time(std::chrono::system_clock::now(), 3)) + "\n";
  std::lock_guard lock(mutex_);
  std::fwrite(line.data(), 1, line.size(), out_);
  std::fflush(out_);
}

}  // namespace vkllm::serve
