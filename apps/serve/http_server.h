// HttpServer: cpp-httplib in front of Api. Every method and path goes to Api::handle; streamed
// replies are written as chunked server-sent events; a client that goes away is noticed (a write
// fails, or its socket reports the peer closed while nothing is written) and its request is
// cancelled. Errors httplib raises itself (a body over the size limit, a malformed request) are
// OpenAI-shaped JSON too. Connections run on a ConnectionPool (connection_pool.h); cross-origin
// browsers are let in only from the --cors-origin origins; every request gets a log line. It
// listens before the model is loaded: until serve() hands it the Api, every request gets 503 with
// Retry-After, and /health says what is being loaded.
#pragma once
#include <atomic>
#include <cstddef>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "serve/api.h"

namespace httplib {
class Server;
struct Request;
struct Response;
}  // namespace httplib

namespace vkllm::serve {

class RequestLog;
struct LoggedRequest;

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0: any free port (see bind())
  int timeout_seconds = 600;           // a read or write that waits longer drops the connection
  size_t threads = 16;                 // connections served at once
  size_t max_waiting = 64;             // connections that may wait for a thread; more are refused
  size_t max_body_bytes = 8ull << 20;  // larger bodies get 413
  // Origins whose pages may call the API from a browser ("*": any). Empty: same origin only.
  std::vector<std::string> cors_origins;
  RequestLog* log = nullptr;  // one line per request, when set
};

class HttpServer {
 public:
  explicit HttpServer(const ServerOptions& options);
  ~HttpServer();
  // Binds the listening socket; returns the port (the chosen one when options.port is 0).
  int bind();
  // Serves until stop() (from another thread); in-flight requests are finished first.
  void run();
  void stop();  // waits until run() has started listening, so that it cannot miss the stop
  // While there is no Api yet: what /health says is happening ("loading the model ...").
  void loading(std::string what);
  // From now on requests go to `api` (which outlives the server's run()).
  void serve(const Api& api) { api_ = &api; }

 private:
  void serve(const httplib::Request& req, httplib::Response& res) const;
  HttpReply not_ready(const HttpRequest& r) const;  // before serve(const Api&)
  bool origin_allowed(const std::string& origin, const std::string& host) const;
  static LoggedRequest logged(const httplib::Request& req, int status);  // who asked what
  void log(const httplib::Request& req, int status, double ms, const RequestRecord* record) const;

  std::atomic<const Api*> api_{nullptr};
  std::atomic<bool> run_called_{false}, run_done_{false};
  mutable std::mutex loading_mutex_;
  std::string loading_ = "starting";
  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int listen_fd_ = -1;  // the listening socket (httplib's), to raise its backlog
  int port_ = -1;
};

}  // namespace vkllm::serve
