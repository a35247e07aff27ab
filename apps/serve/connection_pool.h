// ConnectionPool: the threads that serve vkllm serve's connections, sized by what runs rather than
// by what waits. cpp-httplib accepts a connection and hands it to its task queue; this queue runs
// it on one of `workers` threads. Connections that find every worker busy wait in the queue,
// holding no thread, up to `max_waiting`; beyond that a connection goes to one of two refusing
// threads, which serve it at once with HttpRequest::overloaded set (generation routes then answer
// 503, the rest as usual). So 300 clients on 4 slots cost workers + 2 threads, not 300.
//
// It also knows each connection's socket: httplib 0.11 does not hand it to handlers, and the
// server needs it to notice a client that left while nothing is written. When a connection is
// queued (on the listening thread, just after accept) its socket is found among the connected
// sockets of the listening port that no queued or running connection owns, and the thread that
// later runs the connection sees it as current_socket().
#pragma once
#include <httplib.h>
#include <condition_variable>
#include <cstddef>
#include <deque>
#include <functional>
#include <map>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace vkllm::serve {

class ConnectionPool : public httplib::TaskQueue {
 public:
  ConnectionPool(size_t workers, size_t max_waiting, int listen_port);
  ~ConnectionPool() override;

  void enqueue(std::function<void()> fn) override;
  void shutdown() override;

  // On a thread running a connection: its socket (-1 when not found), and whether it is refused.
  static int current_socket();
  static bool refusing();

  size_t threads() const { return workers_.size() + refusers_.size(); }
  size_t waiting() const;

 private:
  struct Job {
    std::function<void()> run;
    int fd = -1;
    std::string peer;  // the socket's peer address and port, which identify the connection
  };
  struct Lane {  // a queue and the threads that take from it
    std::deque<Job> jobs;
    std::condition_variable ready;
  };
  void work(Lane& lane, bool refuse);
  Job identify(std::function<void()> fn);  // finds the socket just accepted (mutex held)
  void release(const Job& job);

  int listen_port_;
  size_t max_waiting_;
  mutable std::mutex mutex_;
  Lane run_, refuse_;
  bool stopping_ = false;
  size_t idle_ = 0;                   // workers waiting for a connection
  int highest_;                       // the highest socket a connection had (at first a guess)
  std::map<int, std::string> owned_;  // sockets of queued and running connections, by fd: their peer
  std::vector<std::thread> workers_, refusers_;
};

}  // namespace vkllm::serve
