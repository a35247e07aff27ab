// HttpServer: cpp-httplib in front of Api. Every method and path goes to Api::handle; streamed
// replies are written as chunked server-sent events; a client that goes away is noticed (a write
// fails, or its socket reports the peer closed while nothing is written) and its request is
// cancelled. Errors httplib raises itself (a body over the size limit, a malformed request) are
// OpenAI-shaped JSON too.
#pragma once
#include <cstddef>
#include <memory>
#include <string>

#include "serve/api.h"

namespace httplib {
class Server;
}

namespace vkllm::serve {

struct ServerOptions {
  std::string host = "127.0.0.1";
  int port = 8080;                     // 0: any free port (see bind())
  int timeout_seconds = 600;           // a read or write that waits longer drops the connection
  size_t threads = 16;                 // connections served at once; more wait to be accepted
  size_t max_body_bytes = 8ull << 20;  // larger bodies get 413
};

class HttpServer {
 public:
  HttpServer(const Api& api, const ServerOptions& options);
  ~HttpServer();
  // Binds the listening socket; returns the port (the chosen one when options.port is 0).
  int bind();
  // Serves until stop() (from another thread); in-flight requests are finished first.
  void run();
  void stop();

 private:
  const Api& api_;
  ServerOptions options_;
  std::unique_ptr<httplib::Server> server_;
  int listen_fd_ = -1;  // the listening socket (httplib's), to raise its backlog
};

}  // namespace vkllm::serve
