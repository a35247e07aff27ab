// cpp-httplib wiring: one catch-all handler, chunked streams, client-gone detection.
#include "serve/http_server.h"

#include <arpa/inet.h>
#include <dirent.h>
#include <fmt/format.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <cstdlib>

#include "error.h"
#include "serve/openai.h"

namespace vkllm::serve {

namespace {

struct Endpoint {
  std::string addr;
  int port = -1;
};

Endpoint endpoint(const sockaddr_storage& s) {
  char buf[INET6_ADDRSTRLEN] = {};
  if (s.ss_family == AF_INET) {
    auto* a = reinterpret_cast<const sockaddr_in*>(&s);
    inet_ntop(AF_INET, &a->sin_addr, buf, sizeof buf);
    return {buf, ntohs(a->sin_port)};
  }
  if (s.ss_family == AF_INET6) {
    auto* a = reinterpret_cast<const sockaddr_in6*>(&s);
    inet_ntop(AF_INET6, &a->sin6_addr, buf, sizeof buf);
    return {buf, ntohs(a->sin6_port)};
  }
  return {};
}

// The connected socket of a request: httplib does not hand it to handlers, so it is found among
// this process's descriptors by its two ends. -1 if not found.
int find_socket(const httplib::Request& req) {
  DIR* dir = opendir("/proc/self/fd");
  if (!dir) return -1;
  int found = -1;
  while (dirent* e = readdir(dir)) {
    char* end = nullptr;
    long fd = std::strtol(e->d_name, &end, 10);
    if (*end != '\0' || fd < 0) continue;
    sockaddr_storage peer{}, local{};
    socklen_t pl = sizeof peer, ll = sizeof local;
    if (getpeername(int(fd), reinterpret_cast<sockaddr*>(&peer), &pl) != 0) continue;
    if (getsockname(int(fd), reinterpret_cast<sockaddr*>(&local), &ll) != 0) continue;
    Endpoint p = endpoint(peer), l = endpoint(local);
    if (p.port == req.remote_port && p.addr == req.remote_addr && l.port == req.local_port) {
      found = int(fd);
      break;
    }
  }
  closedir(dir);
  return found;
}

// False once the peer has closed (or reset) the connection.
bool peer_open(int fd) {
  pollfd p{.fd = fd, .events = POLLRDHUP, .revents = 0};
  if (poll(&p, 1, 0) < 0) return true;
  return (p.revents & (POLLRDHUP | POLLHUP | POLLERR | POLLNVAL)) == 0;
}

std::string status_text(int status) {
  switch (status) {
    case 400:
      return "bad request";
    case 404:
      return "not found";
    case 405:
      return "method not allowed";
    case 413:
      return "the request body is too large";
    case 414:
      return "the request URI is too long";
    default:
      return fmt::format("HTTP status {}", status);
  }
}

const char* error_type(int status) {
  switch (status) {
    case 401:
      return "authentication_error";
    case 404:
      return "not_found_error";
    case 503:
      return "unavailable_error";
    default:
      return status >= 500 ? "server_error" : "invalid_request_error";
  }
}

}  // namespace

HttpServer::HttpServer(const Api& api, const ServerOptions& options)
    : api_(api), options_(options), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  size_t threads = options.threads;
  s.new_task_queue = [threads] { return new httplib::ThreadPool(threads); };
  s.set_payload_max_length(options.max_body_bytes);
  s.set_read_timeout(options.timeout_seconds, 0);
  s.set_write_timeout(options.timeout_seconds, 0);
  s.set_keep_alive_timeout(2);  // an idle keep-alive connection holds a thread; shutdown waits for it
  auto handler = [this](const httplib::Request& req, httplib::Response& res) {
    HttpRequest r{req.method, req.path, req.body, req.get_header_value("Authorization")};
    r.x_api_key = req.get_header_value("x-api-key");
    auto fd = std::make_shared<int>(-2);  // looked up when first needed
    ClientAlive alive = [fd, &req] {
      if (*fd == -2) *fd = find_socket(req);
      return *fd < 0 || peer_open(*fd);
    };
    HttpReply reply = api_.handle(r, alive);
    res.status = reply.status;
    for (const auto& [name, value] : reply.headers) res.set_header(name, value);
    if (!reply.stream) return res.set_content(reply.body, reply.content_type.c_str());
    res.set_header("Cache-Control", "no-cache");
    // The fd is found now: inside the provider `req` may be gone (the provider outlives the handler).
    int sock = find_socket(req);
    auto stream = std::move(reply.stream);
    res.set_chunked_content_provider(reply.content_type, [stream, sock](size_t, httplib::DataSink& sink) {
      stream([&](std::string_view s) { return sink.write(s.data(), s.size()); },
             [sock] { return sock < 0 || peer_open(sock); });
      sink.done();
      return true;
    });
  };
  s.Get(".*", handler).Post(".*", handler).Put(".*", handler).Delete(".*", handler).Patch(".*", handler);
  s.Options(".*", handler);
  // Errors httplib answers itself (413, 400 for a malformed request line, ...).
  s.set_error_handler([](const httplib::Request&, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(dump(error_body(res.status, error_type(res.status), status_text(res.status))), "application/json");
  });
  s.set_exception_handler([](const httplib::Request&, httplib::Response& res, std::exception_ptr e) {
    std::string message = "internal error";
    try {
      std::rethrow_exception(e);
    } catch (const std::exception& x) {
      message = x.what();
    } catch (...) {
    }
    res.status = 500;
    res.set_content(dump(error_body(500, "server_error", message)), "application/json");
  });
}

HttpServer::~HttpServer() = default;

int HttpServer::bind() {
  httplib::Server& s = *server_;
  // httplib listens with a backlog of 5, so a burst of clients connecting at once would see
  // connections dropped; the listening socket is remembered here and listens again with more.
  s.set_socket_options([this](int sock) {
    int yes = 1;
    setsockopt(sock, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);  // httplib's default option
    listen_fd_ = sock;
  });
  int port = options_.port;
  if (port == 0)
    port = s.bind_to_any_port(options_.host);
  else if (!s.bind_to_port(options_.host, port))
    port = -1;
  ENSURE(port > 0, fmt::format("cannot listen on {}:{} (in use, or not an address of this machine)", options_.host,
                               options_.port));
  if (listen_fd_ >= 0) listen(listen_fd_, SOMAXCONN);
  return port;
}

void HttpServer::run() { server_->listen_after_bind(); }

void HttpServer::stop() { server_->stop(); }

}  // namespace vkllm::serve
