// `vkllm serve` as the server tests run it: started on a free port (--port 0, the port read from
// its startup line), driven over HTTP with cpp-httplib's client, stopped with a signal.
#pragma once
#include <httplib.h>
#include <sys/types.h>

#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

namespace vkllm::test {

class ServeProcess {
 public:
  // Starts `vkllm serve --port 0 <args>` (with `env`'s NAME=VALUE words set) and waits until it
  // listens (fails the test otherwise); with `until_ready` false, only until it answers (503
  // while the model loads).
  explicit ServeProcess(const std::string& args, const std::string& env = "", bool until_ready = true);
  ~ServeProcess();  // SIGKILL if still running
  ServeProcess(const ServeProcess&) = delete;

  int port() const { return port_; }
  pid_t pid() const { return pid_; }
  httplib::Client client(int timeout_seconds = 120) const;
  // Sends the signal (0: none, only waits) and waits up to `timeout` seconds; the exit status
  // (-1: still running, killed).
  int stop(int signal, double timeout, double* seconds = nullptr);
  std::string log() const;  // what it printed on stderr so far

 private:
  pid_t pid_ = -1;
  int port_ = 0;
  int err_fd_ = -1;
  std::thread reader_;
  mutable std::mutex mutex_;
  std::string log_;
};

struct HttpResult {
  int status = 0;
  std::string body;
  nlohmann::json json() const;  // the body parsed (fails the test if it is not JSON)
};

// One request; status 0 when the connection failed (the body then says why).
HttpResult post(const ServeProcess& s, const std::string& path, const std::string& body,
                const std::string& api_key = "");
HttpResult get(const ServeProcess& s, const std::string& path, const std::string& api_key = "");

// The JSON objects of a server-sent event stream, and whether it ended with "data: [DONE]".
struct SseStream {
  std::vector<nlohmann::json> events;
  bool done = false;
};
SseStream parse_sse(const std::string& body);
// The objects of an NDJSON body (Ollama's streams), one a line.
std::vector<nlohmann::json> parse_ndjson(const std::string& body);

}  // namespace vkllm::test
