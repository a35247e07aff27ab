// HTTP GETs through libcurl for the hub: redirects followed, the access token sent only to the
// endpoint's own host (libcurl drops it when a redirect leaves that host), a streamed body with a
// byte range for resuming, and transport failures told apart from HTTP answers.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <string>

#include "error.h"

namespace vkllm::hub {

// An HTTP answer that is not a success (the hub layer words the message).
class HttpStatusError : public Error {
 public:
  HttpStatusError(long status, const std::string& message) : Error(message), status_(status) {}
  long status() const { return status_; }

 private:
  long status_;
};

// Ctrl-C during a transfer; what was downloaded is kept for a resume.
class Interrupted : public Error {
 public:
  using Error::Error;
};

struct HttpResult {
  long status = 0;                             // of the last response (after redirects); 0: none
  std::map<std::string, std::string> headers;  // of every response after redirects, the last winning; lower case
  std::string transport_error;                 // non-empty when the transfer failed (reset, timeout, ...)
  bool aborted = false;                        // a callback asked to stop
};

class HttpClient {
 public:
  // token: "Authorization: Bearer <token>" on requests to URLs under `endpoint` (none if empty).
  HttpClient(std::string endpoint, std::string token);

  // The whole body of a GET (at most 64 MiB; this is for API answers).
  HttpResult get(const std::string& url, std::string& body) const;

  // A GET from byte `offset` on (a Range request when > 0). on_status sees the final status and
  // headers before any body byte; on_body gets the body as it arrives and on_tick is called a few
  // times a second; either returns false to stop (result.aborted).
  struct Stream {
    std::function<bool(const HttpResult&)> on_status;
    std::function<bool(const char*, size_t)> on_body;
    std::function<bool()> on_tick;
  };
  HttpResult stream(const std::string& url, uint64_t offset, const Stream& s) const;

 private:
  std::string endpoint_, token_;
};

}  // namespace vkllm::hub
