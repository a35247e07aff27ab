// Debian's Prometheus server scrapes a running `vkllm serve` on loopback while clients stream,
// and PromQL through its HTTP API sees what a router and a dashboard would: waiting and running
// requests rise and fall, the KV-cache usage moves, and the 90th percentile of the time to first
// token is a number. Skipped, saying so, where the prometheus package is not installed.
#include <fmt/format.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <thread>

#include "catch.h"
#include "cli.h"
#include "harness.h"
#include "serve_process.h"

using namespace vkllm::test;
using json = nlohmann::json;

namespace {

constexpr const char* kPrometheus = "/usr/bin/prometheus";

int free_port() {
  int fd = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in a{.sin_family = AF_INET, .sin_port = 0, .sin_addr = {htonl(INADDR_LOOPBACK)}};
  socklen_t n = sizeof a;
  bind(fd, reinterpret_cast<sockaddr*>(&a), n);
  getsockname(fd, reinterpret_cast<sockaddr*>(&a), &n);
  close(fd);
  return ntohs(a.sin_port);
}

// A Prometheus server scraping one target every 100 ms, its data in a folder of its own.
class Prometheus {
 public:
  explicit Prometheus(int target)
      : dir_(std::filesystem::temp_directory_path() / fmt::format("vkllm_prom_{}", getpid())) {
    std::filesystem::create_directories(dir_);
    std::ofstream(dir_ / "prometheus.yml") << fmt::format(
        "global: {{scrape_interval: 100ms, scrape_timeout: 100ms}}\n"
        "scrape_configs:\n  - job_name: vkllm\n    static_configs: [{{targets: ['127.0.0.1:{}']}}]\n",
        target);
    port_ = free_port();
    pid_ = fork();
    REQUIRE(pid_ >= 0);
    if (pid_ == 0) {
      std::string config = "--config.file=" + (dir_ / "prometheus.yml").string();
      std::string data = "--storage.tsdb.path=" + (dir_ / "data").string();
      std::string listen = fmt::format("--web.listen-address=127.0.0.1:{}", port_);
      freopen((dir_ / "log").c_str(), "w", stderr);
      execl(kPrometheus, kPrometheus, config.c_str(), data.c_str(), listen.c_str(), nullptr);
      _exit(127);
    }
  }
  ~Prometheus() {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
    std::filesystem::remove_all(dir_);
  }
  std::string log() const { return read_file((dir_ / "log").string()); }
  // An instant PromQL query's one value; NaN when the result is empty.
  double query(const std::string& promql) const {
    httplib::Client c("127.0.0.1", port_);
    auto r = c.Get("/api/v1/query", httplib::Params{{"query", promql}}, httplib::Headers{});
    if (!r || r->status != 200) return NAN;
    json result = json::parse(r->body)["data"]["result"];
    return result.empty() ? NAN : std::stod(result[0]["value"][1].get<std::string>());
  }

 private:
  std::filesystem::path dir_;
  int port_ = 0;
  pid_t pid_ = -1;
};

// Waits up to 20 s for a query to satisfy `ok`.
bool eventually(const Prometheus& p, const std::string& promql, const std::function<bool(double)>& ok) {
  for (int i = 0; i < 200; ++i) {
    if (ok(p.query(promql))) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
  }
  return false;
}

}  // namespace

TEST_CASE("Prometheus scrapes vkllm serve while clients stream and PromQL reads its gauges and histograms",
          "[serve][metrics][prometheus]") {
  if (access(kPrometheus, X_OK) != 0)
    return skip("Debian's prometheus package is not installed (scripts/setup installs it)");
  ServeProcess s("--parallel 2 --max-queue 8");
  Prometheus p(s.port());
  INFO(p.log());
  REQUIRE(eventually(p, "up{job=\"vkllm\"}", [](double v) { return v == 1; }));
  // Five streams on two slots: two run, three wait, for a few seconds of 100 ms scrapes.
  std::vector<std::thread> clients;
  for (int i = 0; i < 5; ++i)
    clients.emplace_back([&] {
      json body = {{"prompt", "And God said"}, {"max_tokens", 100}, {"ignore_eos", true}, {"stream", true}};
      CHECK(post(s, "/v1/completions", body.dump()).status == 200);
    });
  for (auto& c : clients) c.join();
  CHECK(eventually(p, "vkllm:num_requests_running", [](double v) { return v == 0; }));
  CHECK(p.query("max_over_time(vkllm:num_requests_running[1m])") == 2);
  CHECK(p.query("max_over_time(vkllm:num_requests_waiting[1m])") >= 1);
  CHECK(p.query("vkllm:num_requests_waiting") == 0);
  double kv_max = p.query("max_over_time(vkllm:kv_cache_usage_perc[1m])");
  CHECK(kv_max > 0);
  CHECK(kv_max <= 1);
  CHECK(eventually(p, "vkllm:kv_cache_usage_perc", [](double v) { return v == 0; }));
  double p90 = p.query("histogram_quantile(0.9, sum by (le) (increase(vkllm:time_to_first_token_seconds_bucket[1m])))");
  CHECK(std::isfinite(p90));
  CHECK(p90 > 0);
}
