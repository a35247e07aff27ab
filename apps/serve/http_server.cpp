// cpp-httplib wiring: one catch-all handler, chunked streams, client-gone detection.
#include "serve/http_server.h"

#include <fmt/format.h>
#include <httplib.h>
#include <poll.h>
#include <sys/socket.h>
#include <algorithm>
#include <chrono>
#include <thread>

#include "error.h"
#include "serve/connection_pool.h"
#include "serve/openai.h"
#include "serve/request_log.h"

namespace vkllm::serve {

namespace {

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

HttpServer::HttpServer(const ServerOptions& options) : options_(options), server_(std::make_unique<httplib::Server>()) {
  httplib::Server& s = *server_;
  s.new_task_queue = [this] { return new ConnectionPool(options_.threads, options_.max_waiting, port_); };
  s.set_payload_max_length(options.max_body_bytes);
  s.set_read_timeout(options.timeout_seconds, 0);
  s.set_write_timeout(options.timeout_seconds, 0);
  s.set_keep_alive_timeout(2);  // an idle keep-alive connection holds a thread; shutdown waits for it
  auto handler = [this](const httplib::Request& req, httplib::Response& res) { serve(req, res); };
  s.Get(".*", handler).Post(".*", handler).Put(".*", handler).Delete(".*", handler).Patch(".*", handler);
  s.Options(".*", handler);
  // Errors httplib answers itself (413, 400 for a malformed request line, ...).
  s.set_error_handler([this](const httplib::Request& req, httplib::Response& res) {
    if (!res.body.empty()) return;
    res.set_content(dump(error_body(res.status, error_type(res.status), status_text(res.status))), "application/json");
    log(req, res.status, 0, nullptr);
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

void HttpServer::serve(const httplib::Request& req, httplib::Response& res) const {
  auto start = std::chrono::steady_clock::now();
  auto elapsed_ms = [start] {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
  };
  std::string origin = req.get_header_value("Origin");
  if (!origin.empty() && !origin_allowed(origin, req.get_header_value("Host"))) {
    res.status = 403;
    res.set_content(
        dump(error_body(403, "invalid_request_error",
                        fmt::format("pages from {} may not call this server (vkllm serve --cors-origin)", origin))),
        "application/json");
    return log(req, res.status, elapsed_ms(), nullptr);
  }
  bool any = std::ranges::find(options_.cors_origins, "*") != options_.cors_origins.end();
  if (!origin.empty() && (any || std::ranges::find(options_.cors_origins, origin) != options_.cors_origins.end())) {
    res.set_header("Access-Control-Allow-Origin", any ? "*" : origin);
    res.set_header("Vary", "Origin");
    if (req.method == "OPTIONS" && req.has_header("Access-Control-Request-Method")) {  // a preflight
      std::string headers = req.get_header_value("Access-Control-Request-Headers");
      res.set_header("Access-Control-Allow-Methods", "GET, POST, OPTIONS");
      res.set_header("Access-Control-Allow-Headers", headers.empty() ? "Authorization, Content-Type" : headers);
      res.set_header("Access-Control-Max-Age", "600");
      res.status = 204;
      return log(req, res.status, elapsed_ms(), nullptr);
    }
  }
  HttpRequest r{req.method, req.path, req.body, req.get_header_value("Authorization")};
  r.x_api_key = req.get_header_value("x-api-key");
  r.overloaded = ConnectionPool::refusing();
  int sock = ConnectionPool::current_socket();
  const Api* api = api_.load();
  HttpReply reply = api ? api->handle(r, [sock] { return sock < 0 || peer_open(sock); }) : not_ready(r);
  res.status = reply.status;
  for (const auto& [name, value] : reply.headers) res.set_header(name, value);
  if (r.overloaded) res.set_header("Connection", "close");
  if (!reply.stream) {
    res.set_content(reply.body, reply.content_type.c_str());
    return log(req, res.status, elapsed_ms(), reply.record.get());
  }
  res.set_header("Cache-Control", "no-cache");
  // The provider runs after this handler returns (req is gone by then): it keeps what it needs.
  auto stream = std::move(reply.stream);
  auto record = reply.record;
  LoggedRequest entry = logged(req, reply.status);
  res.set_chunked_content_provider(
      reply.content_type, [this, stream, sock, record, entry, start](size_t, httplib::DataSink& sink) mutable {
        stream([&](std::string_view s) { return sink.write(s.data(), s.size()); },
               [sock] { return sock < 0 || peer_open(sock); });
        sink.done();
        entry.total_ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count();
        entry.record = record.get();
        if (options_.log) options_.log->write(entry);
        return true;
      });
}

void HttpServer::loading(std::string what) {
  std::lock_guard lock(loading_mutex_);
  loading_ = std::move(what);
}

// llama-server's answer while it loads (503, unavailable_error), saying what it is doing.
HttpReply HttpServer::not_ready(const HttpRequest& r) const {
  std::string what;
  {
    std::lock_guard lock(loading_mutex_);
    what = loading_;
  }
  json body = r.path == "/health" ? json{{"status", "loading"}} : json::object();
  body.update(error_body(503, "unavailable_error", fmt::format("the server is not ready: {}", what)));
  return {.status = 503, .body = dump(body), .headers = {{"Retry-After", std::to_string(kRetryAfterSeconds)}}};
}

// Same origin (the page the server itself serves) or one --cors-origin lets in.
bool HttpServer::origin_allowed(const std::string& origin, const std::string& host) const {
  for (const std::string& o : options_.cors_origins)
    if (o == "*" || o == origin) return true;
  size_t scheme = origin.find("://");
  return scheme != std::string::npos && origin.substr(scheme + 3) == host;
}

LoggedRequest HttpServer::logged(const httplib::Request& req, int status) {
  return {.client = fmt::format("{}:{}", req.remote_addr, req.remote_port),
          .method = req.method,
          .path = req.path,
          .status = status};
}

void HttpServer::log(const httplib::Request& req, int status, double ms, const RequestRecord* record) const {
  if (!options_.log) return;
  LoggedRequest entry = logged(req, status);
  entry.total_ms = ms, entry.record = record;
  options_.log->write(entry);
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
  return port_ = port;
}

void HttpServer::run() {
  run_called_ = true;
  server_->listen_after_bind();
  run_done_ = true;
}

void HttpServer::stop() {
  for (int i = 0; i < 5000 && run_called_ && !run_done_ && !server_->is_running(); ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  server_->stop();
}

}  // namespace vkllm::serve
