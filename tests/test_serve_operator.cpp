// What the operator of `vkllm serve` sees and controls: one log line per request (text or JSON, to
// stderr or a file, prompts only with --log-prompts), GET /slots and /v1/models/{id}, CORS headers
// for the --cors-origin origins (the browser side: cors_browser.py), and the threads under 300
// clients waiting on 4 slots: bounded, and every request answered or refused with 503.
#include <fmt/format.h>

#include <signal.h>

#include <atomic>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <thread>

#include "catch.h"
#include "cli.h"
#include "serve_process.h"

using namespace vkllm::test;
using json = nlohmann::json;

namespace {

std::vector<std::string> lines_of(const std::string& text) {
  std::vector<std::string> out;
  std::istringstream in(text);
  for (std::string line; std::getline(in, line);) out.push_back(line);
  return out;
}

// The server process's thread count (/proc/PID/status).
int threads_of(pid_t pid) {
  std::ifstream f(fmt::format("/proc/{}/status", pid));
  for (std::string line; std::getline(f, line);)
    if (line.starts_with("Threads:")) return std::stoi(line.substr(8));
  return -1;
}

const std::string kOperatorChat = R"({"messages": [{"role": "user", "content": "Who begat Enos?"}], "max_tokens": 3,
                              "temperature": 0})";

}  // namespace

TEST_CASE("vkllm serve logs one line per request, as text or JSON, prompts only when asked", "[serve][logs]") {
  TempFile file("serve_log.jsonl");
  {
    ServeProcess s("--parallel 1 --log-format json --log-file " + file.path);
    CHECK(post(s, "/v1/chat/completions", kOperatorChat).status == 200);
    CHECK(get(s, "/health").status == 200);
    CHECK(post(s, "/v1/completions", "{").status == 400);
    s.stop(SIGTERM, 10);
  }
  std::vector<std::string> lines = lines_of(read_file(file.path));
  INFO(read_file(file.path));
  REQUIRE(lines.size() == 3);
  json chat = json::parse(lines[0]);
  CHECK(chat["method"] == "POST");
  CHECK(chat["path"] == "/v1/chat/completions");
  CHECK(chat["status"] == 200);
  CHECK(chat["client"].get<std::string>().starts_with("127.0.0.1:"));
  CHECK(chat["prompt_tokens"].get<int>() > 5);
  CHECK(chat["cached_tokens"] == 0);
  CHECK(chat["generated_tokens"] == 3);
  CHECK(chat["ttft_ms"].get<double>() > 0);
  CHECK(chat["total_ms"].get<double>() >= chat["ttft_ms"].get<double>());
  CHECK(chat["tokens_per_second"].get<double>() > 0);
  CHECK(!chat.contains("prompt"));  // not without --log-prompts
  CHECK(json::parse(lines[1])["path"] == "/health");
  CHECK(!json::parse(lines[1]).contains("generated_tokens"));
  CHECK(json::parse(lines[2])["status"] == 400);

  ServeProcess s("--parallel 1 --log-prompts");  // text, to stderr, with the prompt
  HttpResult r = post(s, "/v1/chat/completions", kOperatorChat);
  CHECK(r.status == 200);
  CHECK(json::parse(r.body)["timings"]["predicted_n"] == 3);
  // The line is written before the reply; the test reads the server's stderr on a thread of its own.
  for (int i = 0; i < 250 && s.log().find("tok/s") == std::string::npos; ++i)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::string log = s.log();
  INFO(log);
  CHECK(log.find("POST /v1/chat/completions 200") != std::string::npos);
  CHECK(log.find("generated=3") != std::string::npos);
  CHECK(log.find("tok/s") != std::string::npos);
  CHECK(log.find("Who begat Enos?") != std::string::npos);

  CliResult bad = run_vkllm("serve --log-file /nonexistent/dir/x.log");
  CHECK(bad.exit_code != 0);
  CHECK(bad.err.find("--log-file /nonexistent/dir/x.log") != std::string::npos);
  CHECK(run_vkllm("serve --log-format yaml").exit_code != 0);
}

TEST_CASE("vkllm serve shows its slots and its model by id, and sends CORS headers only to allowed origins",
          "[serve][cors]") {
  ServeProcess s("--parallel 2 --cors-origin http://app.example:3000 --cors-origin http://other.example");
  json slots = get(s, "/slots").json();
  REQUIRE(slots.size() == 2);
  CHECK(slots[1]["id"] == 1);
  CHECK(slots[0]["is_processing"] == false);
  REQUIRE(post(s, "/v1/chat/completions", kOperatorChat).status == 200);
  slots = get(s, "/slots").json();
  CHECK(slots[0]["n_tokens"].get<int>() + slots[1]["n_tokens"].get<int>() > 5);  // kept for prefix reuse
  CHECK(get(s, "/v1/models/default").json()["id"] == "default");
  CHECK(get(s, "/v1/models/llama3").status == 404);

  httplib::Client c = s.client();
  auto preflight =
      c.Options("/v1/chat/completions", {{"Origin", "http://app.example:3000"},
                                         {"Access-Control-Request-Method", "POST"},
                                         {"Access-Control-Request-Headers", "authorization,content-type"}});
  REQUIRE(preflight);
  CHECK(preflight->status == 204);
  CHECK(preflight->get_header_value("Access-Control-Allow-Origin") == "http://app.example:3000");
  CHECK(preflight->get_header_value("Access-Control-Allow-Methods").find("POST") != std::string::npos);
  CHECK(preflight->get_header_value("Access-Control-Allow-Headers") == "authorization,content-type");
  auto allowed = c.Get("/v1/models", {{"Origin", "http://other.example"}});
  REQUIRE(allowed);
  CHECK(allowed->status == 200);
  CHECK(allowed->get_header_value("Access-Control-Allow-Origin") == "http://other.example");
  auto refused = c.Get("/v1/models", {{"Origin", "http://evil.example"}});
  REQUIRE(refused);
  CHECK(refused->status == 403);
  CHECK(!refused->has_header("Access-Control-Allow-Origin"));
  auto same = c.Get("/v1/models", {{"Origin", fmt::format("http://127.0.0.1:{}", s.port())}});
  REQUIRE(same);
  CHECK(same->status == 200);  // the demo page's own origin
  CHECK(!same->has_header("Access-Control-Allow-Origin"));

  ServeProcess closed("--parallel 1");  // no --cors-origin: same origin only
  auto cross = closed.client().Get("/v1/models", {{"Origin", "http://app.example:3000"}});
  REQUIRE(cross);
  CHECK(cross->status == 403);
}

namespace {

// 300 clients at once on a server of 4 slots; returns the number of replies by status, and
// prints them with the server's thread count before and at most during.
std::map<int, int> crowd(const std::string& args) {
  ServeProcess s(args);
  REQUIRE(get(s, "/health").status == 200);
  int idle = threads_of(s.pid());
  constexpr int kClients = 300;
  std::vector<int> status(kClients, -1);
  std::atomic<int> most{idle};
  std::atomic<bool> running{true};
  std::thread watcher([&] {
    while (running) {
      most = std::max(most.load(), threads_of(s.pid()));
      std::this_thread::sleep_for(std::chrono::milliseconds(5));
    }
  });
  std::vector<std::thread> clients;
  for (int i = 0; i < kClients; ++i)
    clients.emplace_back([&, i] { status[i] = post(s, "/v1/chat/completions", kOperatorChat).status; });
  for (auto& t : clients) t.join();
  running = false;
  watcher.join();
  std::map<int, int> by_status;
  for (int st : status) ++by_status[st];
  std::string summary;
  for (auto [st, n] : by_status) summary += fmt::format(" {}: {}", st, n);
  std::printf("%d clients, serve %s:%s; server threads %d idle, %d at most\n", kClients, args.c_str(), summary.c_str(),
              idle, most.load());
  INFO("statuses" << summary << "; threads idle " << idle << ", at most " << most.load());
  CHECK(most.load() <= idle + 2);  // connection threads are made at start; nothing grows with clients
  CHECK(get(s, "/health").status == 200);
  return by_status;
}

}  // namespace

TEST_CASE("vkllm serve keeps its threads bounded with 300 clients on 4 slots and answers each or says 503",
          "[serve][threads]") {
  std::map<int, int> all = crowd("--parallel 4 --max-queue 1000");  // everyone waits, without a thread
  CHECK(all[200] == 300);
  std::map<int, int> some = crowd("--parallel 4 --max-queue 64");  // beyond 64 waiting: 503 at once
  CHECK(some[200] + some[503] == 300);
  CHECK(some[200] >= 64);
  CHECK(some[503] > 0);
}
