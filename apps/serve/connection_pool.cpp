// The worker and refusing threads of vkllm serve, and the socket of each connection.
#include "serve/connection_pool.h"

#include <arpa/inet.h>
#include <fmt/format.h>
#include <sys/socket.h>
#include <sys/stat.h>

#include <algorithm>

namespace vkllm::serve {

namespace {

thread_local int t_socket = -1;
thread_local bool t_refusing = false;

constexpr size_t kRefusers = 2;
// How far above the highest connection socket seen (at first: kFirstProbe) a new one is looked
// for: accept() takes the lowest free descriptor, so it is found long before.
constexpr int kFirstProbe = 256, kProbeSlack = 64;

// "addr:port" of one end of a socket, or "" when it is not a connected IP socket.
std::string end_of(int fd, bool peer, int* port = nullptr) {
  sockaddr_storage s{};
  socklen_t len = sizeof s;
  auto* a = reinterpret_cast<sockaddr*>(&s);
  if ((peer ? getpeername(fd, a, &len) : getsockname(fd, a, &len)) != 0) return "";
  char buf[INET6_ADDRSTRLEN] = {};
  int p = -1;
  if (s.ss_family == AF_INET) {
    auto* in = reinterpret_cast<sockaddr_in*>(&s);
    inet_ntop(AF_INET, &in->sin_addr, buf, sizeof buf);
    p = ntohs(in->sin_port);
  } else if (s.ss_family == AF_INET6) {
    auto* in = reinterpret_cast<sockaddr_in6*>(&s);
    inet_ntop(AF_INET6, &in->sin6_addr, buf, sizeof buf);
    p = ntohs(in->sin6_port);
  } else {
    return "";
  }
  if (port) *port = p;
  return fmt::format("{}:{}", buf, p);
}

}  // namespace

ConnectionPool::ConnectionPool(size_t workers, size_t max_waiting, int listen_port)
    : listen_port_(listen_port), max_waiting_(max_waiting), highest_(kFirstProbe) {
  for (size_t i = 0; i < workers; ++i) workers_.emplace_back([this] { work(run_, false); });
  for (size_t i = 0; i < kRefusers; ++i) refusers_.emplace_back([this] { work(refuse_, true); });
}

ConnectionPool::~ConnectionPool() { shutdown(); }

int ConnectionPool::current_socket() { return t_socket; }
bool ConnectionPool::refusing() { return t_refusing; }

size_t ConnectionPool::waiting() const {
  std::lock_guard lock(mutex_);
  return run_.jobs.size();
}

void ConnectionPool::enqueue(std::function<void()> fn) {
  {
    std::lock_guard lock(mutex_);
    Job job = identify(std::move(fn));
    // Idle workers take queued connections at once; beyond them, max_waiting may wait.
    Lane& lane = run_.jobs.size() < idle_ + max_waiting_ ? run_ : refuse_;
    lane.jobs.push_back(std::move(job));
  }
  run_.ready.notify_one();
  refuse_.ready.notify_one();
}

ConnectionPool::Job ConnectionPool::identify(std::function<void()> fn) {
  Job job{.run = std::move(fn)};
  for (int fd = 3; fd <= highest_ + kProbeSlack; ++fd) {
    struct stat st {};
    if (fstat(fd, &st) != 0 || !S_ISSOCK(st.st_mode)) continue;
    int local_port = -1;
    if (end_of(fd, false, &local_port).empty() || local_port != listen_port_) continue;
    std::string peer = end_of(fd, true);
    if (peer.empty()) continue;  // the listening socket itself
    auto it = owned_.find(fd);
    if (it != owned_.end() && it->second == peer) continue;  // a connection already queued or running
    // Not owned, or owned by a connection that has closed it and not yet returned: this one is new.
    owned_[fd] = peer;
    highest_ = std::max(highest_, fd);
    job.fd = fd, job.peer = std::move(peer);
    break;
  }
  return job;
}

void ConnectionPool::release(const Job& job) {
  std::lock_guard lock(mutex_);
  auto it = owned_.find(job.fd);
  if (it != owned_.end() && it->second == job.peer) owned_.erase(it);
}

void ConnectionPool::work(Lane& lane, bool refuse) {
  t_refusing = refuse;
  for (;;) {
    Job job;
    {
      std::unique_lock lock(mutex_);
      if (!refuse) ++idle_;
      lane.ready.wait(lock, [&] { return !lane.jobs.empty() || stopping_; });
      if (!refuse) --idle_;
      if (lane.jobs.empty()) return;  // stopping, and nothing left
      job = std::move(lane.jobs.front());
      lane.jobs.pop_front();
    }
    t_socket = job.fd;
    job.run();  // serves the connection and closes its socket
    t_socket = -1;
    release(job);
  }
}

void ConnectionPool::shutdown() {
  {
    std::lock_guard lock(mutex_);
    if (stopping_) return;
    stopping_ = true;
  }
  run_.ready.notify_all();
  refuse_.ready.notify_all();
  for (auto* threads : {&workers_, &refusers_})
    for (std::thread& t : *threads) t.join();
}

}  // namespace vkllm::serve
