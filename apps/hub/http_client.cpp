// libcurl's easy interface, one handle per request.
#include "hub/http_client.h"

#include <curl/curl.h>
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <memory>

#include "error.h"

namespace vkllm::hub {

namespace {

constexpr size_t kMaxApiBody = 64u << 20;

struct CurlGlobal {
  CurlGlobal() { curl_global_init(CURL_GLOBAL_DEFAULT); }
  ~CurlGlobal() { curl_global_cleanup(); }
};

struct Easy {
  CURL* h = nullptr;
  curl_slist* headers = nullptr;
  Easy() {
    static CurlGlobal global;
    h = curl_easy_init();
    ENSURE(h, "libcurl could not start a transfer");
  }
  ~Easy() {
    curl_slist_free_all(headers);
    curl_easy_cleanup(h);
  }
};

// What the callbacks share during one transfer.
struct State {
  const HttpClient::Stream* stream = nullptr;
  HttpResult* result = nullptr;
  bool status_seen = false;
};

std::string lower(std::string s) {
  for (char& c : s) c = char(std::tolower(static_cast<unsigned char>(c)));
  return s;
}

// Header lines of every response in a redirect chain arrive here. They are merged, later ones
// winning: the hub's resolve answer carries X-Linked-Etag and X-Linked-Size, the CDN's the body.
size_t on_header(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<State*>(user);
  std::string line(data, size * n);
  while (!line.empty() && (line.back() == '\n' || line.back() == '\r')) line.pop_back();
  if (size_t colon = line.find(':'); colon != std::string::npos && !line.starts_with("HTTP/")) {
    std::string value = line.substr(colon + 1);
    value.erase(0, value.find_first_not_of(" \t"));
    st->result->headers[lower(line.substr(0, colon))] = value;
  }
  return size * n;
}

size_t on_write(char* data, size_t size, size_t n, void* user) {
  auto* st = static_cast<State*>(user);
  if (!st->status_seen) {
    st->status_seen = true;
    if (st->stream->on_status && !st->stream->on_status(*st->result)) return st->result->aborted = true, 0;
  }
  if (st->stream->on_body && !st->stream->on_body(data, size * n)) return st->result->aborted = true, 0;
  return size * n;
}

int on_progress(void* user, curl_off_t, curl_off_t, curl_off_t, curl_off_t) {
  auto* st = static_cast<State*>(user);
  if (st->stream->on_tick && !st->stream->on_tick()) return st->result->aborted = true, 1;
  return 0;
}

}  // namespace

HttpClient::HttpClient(std::string endpoint, std::string token)
    : endpoint_(std::move(endpoint)), token_(std::move(token)) {}

HttpResult HttpClient::stream(const std::string& url, uint64_t offset, const Stream& s) const {
  Easy e;
  HttpResult result;
  State st{.stream = &s, .result = &result};
  // Response codes are read in on_write: the status of the response whose body is written.
  Stream wrapped = s;
  wrapped.on_status = [&](const HttpResult&) {
    curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &result.status);
    return !s.on_status || s.on_status(result);
  };
  st.stream = &wrapped;
  if (!token_.empty() && (url == endpoint_ || url.starts_with(endpoint_ + "/")))
    e.headers = curl_slist_append(e.headers, ("Authorization: Bearer " + token_).c_str());
  curl_easy_setopt(e.h, CURLOPT_URL, url.c_str());
  curl_easy_setopt(e.h, CURLOPT_HTTPHEADER, e.headers);
  curl_easy_setopt(e.h, CURLOPT_FOLLOWLOCATION, 1L);
  curl_easy_setopt(e.h, CURLOPT_MAXREDIRS, 10L);
  curl_easy_setopt(e.h, CURLOPT_USERAGENT, "vkllm/" VKLLM_VERSION);
  curl_easy_setopt(e.h, CURLOPT_CONNECTTIMEOUT, 30L);
  curl_easy_setopt(e.h, CURLOPT_LOW_SPEED_LIMIT, 1L);  // a transfer stalled for 60 s has failed
  curl_easy_setopt(e.h, CURLOPT_LOW_SPEED_TIME, 60L);
  curl_easy_setopt(e.h, CURLOPT_NOSIGNAL, 1L);
  curl_easy_setopt(e.h, CURLOPT_HEADERFUNCTION, on_header);
  curl_easy_setopt(e.h, CURLOPT_HEADERDATA, &st);
  curl_easy_setopt(e.h, CURLOPT_WRITEFUNCTION, on_write);
  curl_easy_setopt(e.h, CURLOPT_WRITEDATA, &st);
  curl_easy_setopt(e.h, CURLOPT_XFERINFOFUNCTION, on_progress);
  curl_easy_setopt(e.h, CURLOPT_XFERINFODATA, &st);
  curl_easy_setopt(e.h, CURLOPT_NOPROGRESS, 0L);
  std::string range = fmt::format("{}-", offset);
  if (offset > 0) curl_easy_setopt(e.h, CURLOPT_RANGE, range.c_str());
  char message[CURL_ERROR_SIZE] = {};
  curl_easy_setopt(e.h, CURLOPT_ERRORBUFFER, message);
  CURLcode rc = curl_easy_perform(e.h);
  curl_easy_getinfo(e.h, CURLINFO_RESPONSE_CODE, &result.status);
  if (rc == CURLE_OK && !st.status_seen && wrapped.on_status && !wrapped.on_status(result)) result.aborted = true;
  if (rc != CURLE_OK && !result.aborted) result.transport_error = message[0] ? message : curl_easy_strerror(rc);
  return result;
}

HttpResult HttpClient::get(const std::string& url, std::string& body) const {
  body.clear();
  Stream s{.on_body = [&](const char* p, size_t n) {
    if (body.size() + n > kMaxApiBody) return false;
    body.append(p, n);
    return true;
  }};
  HttpResult r = stream(url, 0, s);
  if (r.aborted) r.transport_error = fmt::format("the answer is larger than {} MiB", kMaxApiBody >> 20);
  return r;
}

}  // namespace vkllm::hub
