// RequestLog: one line per request for the operator of vkllm serve: when, which client, the route
// and status, and for generation the prompt, cached and generated tokens, the time to first
// token, the total time and the generation rate. As text or as one JSON object per line, to
// stderr or appended to a file. A prompt's text only with --log-prompts: prompts are the users'.
#pragma once
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>

#include "serve/api.h"

namespace vkllm::serve {

struct RequestLogOptions {
  bool json = false;     // --log-format json
  std::string file;      // --log-file ("" or "-": stderr)
  bool prompts = false;  // --log-prompts
};

struct LoggedRequest {
  std::string client, method, path;
  int status = 0;
  double total_ms = 0;
  const RequestRecord* record = nullptr;  // generation routes
};

class RequestLog {
 public:
  // Opens the file (throws Error naming it when it cannot).
  explicit RequestLog(const RequestLogOptions& options);
  ~RequestLog();
  void write(const LoggedRequest& r);
  // The line as written (no newline).
  std::string format(const LoggedRequest& r, const std::string& time) const;

 private:
  RequestLogOptions options_;
  FILE* out_ = stderr;
  std::mutex mutex_;
};

}  // namespace vkllm::serve
