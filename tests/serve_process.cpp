// Starting, talking to and stopping `vkllm serve` for the server tests.
#include "serve_process.h"

#include <fcntl.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <regex>
#include <sstream>

#include "catch.h"

namespace vkllm::test {

namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> split_args(const std::string& args) {
  std::istringstream in(args);
  std::vector<std::string> out;
  std::string w;
  while (in >> w) out.push_back(w);
  return out;
}

}  // namespace

ServeProcess::ServeProcess(const std::string& args, const std::string& env, bool until_ready) {
  int fds[2];
  REQUIRE(pipe(fds) == 0);
  std::vector<std::string> argv_s = {VKLLM_BIN, "serve", "--port", "0"};
  for (auto& a : split_args(args)) argv_s.push_back(a);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    dup2(fds[1], STDERR_FILENO);
    int null = open("/dev/null", O_RDWR);
    dup2(null, STDIN_FILENO), dup2(null, STDOUT_FILENO);
    close(fds[0]), close(fds[1]);
    for (const std::string& kv : split_args(env)) putenv(strdup(kv.c_str()));
    std::vector<char*> argv;
    for (auto& a : argv_s) argv.push_back(a.data());
    argv.push_back(nullptr);
    execv(VKLLM_BIN, argv.data());
    _exit(127);
  }
  close(fds[1]);
  err_fd_ = fds[0];
  reader_ = std::thread([this] {
    char buf[4096];
    for (ssize_t n; (n = read(err_fd_, buf, sizeof buf)) > 0;) {
      std::lock_guard lock(mutex_);
      log_.append(buf, size_t(n));
    }
  });
  std::regex listening(until_ready ? R"(listening on http://[^:]+:(\d+))" : R"(answering on http://[^:]+:(\d+))");
  auto t0 = Clock::now();
  while (Clock::now() - t0 < std::chrono::seconds(300)) {
    std::smatch m;
    std::string text = log();
    if (std::regex_search(text, m, listening)) {
      port_ = std::stoi(m[1]);
      return;
    }
    int status = 0;
    if (waitpid(pid_, &status, WNOHANG) == pid_) {
      pid_ = -1;
      FAIL("vkllm serve exited before listening: " << log());
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  FAIL("vkllm serve did not start listening: " << log());
}

ServeProcess::~ServeProcess() {
  if (pid_ > 0) {
    kill(pid_, SIGKILL);
    waitpid(pid_, nullptr, 0);
  }
  if (reader_.joinable()) reader_.join();
  if (err_fd_ >= 0) close(err_fd_);
}

httplib::Client ServeProcess::client(int timeout_seconds) const {
  httplib::Client c("127.0.0.1", port_);
  c.set_read_timeout(timeout_seconds, 0);
  c.set_write_timeout(timeout_seconds, 0);
  c.set_connection_timeout(10, 0);
  return c;
}

int ServeProcess::stop(int signal, double timeout, double* seconds) {
  if (pid_ <= 0) return -1;
  auto t0 = Clock::now();
  kill(pid_, signal);
  int status = 0;
  while (waitpid(pid_, &status, WNOHANG) != pid_) {
    if (Clock::now() - t0 > std::chrono::duration<double>(timeout)) {
      kill(pid_, SIGKILL);
      waitpid(pid_, nullptr, 0);
      pid_ = -1;
      return -1;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  if (seconds) *seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  pid_ = -1;
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

std::string ServeProcess::log() const {
  std::lock_guard lock(mutex_);
  return log_;
}

nlohmann::json HttpResult::json() const {
  auto j = nlohmann::json::parse(body, nullptr, false);
  INFO("body: " << body);
  REQUIRE(!j.is_discarded());
  return j;
}

namespace {

httplib::Headers auth(const std::string& key) {
  if (key.empty()) return {};
  return {{"Authorization", "Bearer " + key}};
}

}  // namespace

HttpResult post(const ServeProcess& s, const std::string& path, const std::string& body, const std::string& key) {
  auto r = s.client().Post(path, auth(key), body, "application/json");
  if (!r) return {0, httplib::to_string(r.error())};
  return {r->status, r->body};
}

HttpResult get(const ServeProcess& s, const std::string& path, const std::string& key) {
  auto r = s.client().Get(path, auth(key));
  if (!r) return {0, httplib::to_string(r.error())};
  return {r->status, r->body};
}

std::vector<nlohmann::json> parse_ndjson(const std::string& body) {
  std::vector<nlohmann::json> out;
  std::istringstream in(body);
  for (std::string line; std::getline(in, line);)
    if (!line.empty()) out.push_back(nlohmann::json::parse(line));
  return out;
}

SseStream parse_sse(const std::string& body) {
  SseStream out;
  std::istringstream in(body);
  std::string line;
  while (std::getline(in, line)) {
    if (line.rfind("data: ", 0) != 0) continue;
    std::string data = line.substr(6);
    if (data == "[DONE]") {
      out.done = true;
      continue;
    }
    out.events.push_back(nlohmann::json::parse(data));
  }
  return out;
}

}  // namespace vkllm::test
