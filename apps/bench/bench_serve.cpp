// vkllm-bench serve: a load generator for a running `vkllm serve` (or any OpenAI-compatible
// server). For each client count, that many clients stream a completion at the same time (each
// its own prompt, ignore_eos so every one generates max_tokens); reported per count: aggregate
// generated tokens/s (all tokens over the wall time from the first request to the last token) and
// time to first token (median and worst over the clients). Each count runs once untimed first, so
// graph recording and pipeline compilation for its batch shapes are not measured.
// scripts/bench_serve runs it against the default model and a smol-shaped fixture.
#include <fmt/format.h>
#include <httplib.h>

#include <algorithm>
#include <chrono>
#include <nlohmann/json.hpp>
#include <regex>
#include <thread>

#include "bench.h"
#include "error.h"

namespace vkllm::bench {

namespace {

using Clock = std::chrono::steady_clock;

struct ServeBenchOptions {
  std::string url = "http://127.0.0.1:8080";
  std::vector<uint32_t> clients = {1, 4, 8, 16};
  uint32_t max_tokens = 64;
  std::string api_key;
  bool json = false;
};

struct ClientResult {
  double ttft = 0;      // seconds from sending to the first text
  double finished = 0;  // seconds from the round's start to the last event
  uint32_t tokens = 0;  // completion tokens (usage)
  std::string error;
};

ClientResult run_client(const ServeBenchOptions& o, const std::string& host, int port, uint32_t i,
                        Clock::time_point t0) {
  ClientResult r;
  httplib::Client cli(host, port);
  cli.set_read_timeout(600, 0);
  nlohmann::json body = {{"prompt", fmt::format("Request {}: And it came to pass", i)},
                         {"max_tokens", o.max_tokens},
                         {"temperature", 0.8},
                         {"seed", i},
                         {"ignore_eos", true},
                         {"stream", true},
                         {"stream_options", {{"include_usage", true}}}};
  httplib::Request req;
  req.method = "POST", req.path = "/v1/completions", req.body = body.dump();
  req.set_header("Content-Type", "application/json");
  if (!o.api_key.empty()) req.set_header("Authorization", "Bearer " + o.api_key);
  std::string buffer;
  auto sent = Clock::now();
  req.content_receiver = [&](const char* data, size_t n, uint64_t, uint64_t) {
    buffer.append(data, n);
    for (size_t end; (end = buffer.find("\n\n")) != std::string::npos; buffer.erase(0, end + 2)) {
      std::string line = buffer.substr(0, end);
      if (line.rfind("data: ", 0) != 0 || line == "data: [DONE]") continue;
      auto j = nlohmann::json::parse(line.substr(6), nullptr, false);
      if (j.is_discarded()) continue;
      if (j.contains("usage") && j["usage"].is_object()) r.tokens = j["usage"]["completion_tokens"].get<uint32_t>();
      if (r.ttft == 0 && !j["choices"].empty() && !j["choices"][0].value("text", "").empty())
        r.ttft = std::chrono::duration<double>(Clock::now() - sent).count();
      if (j.contains("error")) r.error = j["error"].dump();
    }
    return true;
  };
  auto res = cli.send(req);
  if (!res)
    r.error = "connection failed";
  else if (res->status != 200)
    r.error = fmt::format("HTTP {}", res->status);
  r.finished = std::chrono::duration<double>(Clock::now() - t0).count();
  return r;
}

struct Round {
  uint32_t clients = 0, tokens = 0;
  double seconds = 0, tps = 0, ttft_median = 0, ttft_max = 0;
};

Round run_round(const ServeBenchOptions& o, const std::string& host, int port, uint32_t n) {
  std::vector<ClientResult> results(n);
  std::vector<std::thread> threads;
  auto t0 = Clock::now();
  for (uint32_t i = 0; i < n; ++i) threads.emplace_back([&, i] { results[i] = run_client(o, host, port, i, t0); });
  for (auto& t : threads) t.join();
  Round r{.clients = n};
  std::vector<double> ttft;
  for (const ClientResult& c : results) {
    ENSURE(c.error.empty(), "a client failed: " + c.error);
    r.tokens += c.tokens, r.seconds = std::max(r.seconds, c.finished);
    ttft.push_back(c.ttft);
  }
  std::sort(ttft.begin(), ttft.end());
  r.tps = r.tokens / r.seconds, r.ttft_median = ttft[ttft.size() / 2], r.ttft_max = ttft.back();
  return r;
}

void bench_serve(const ServeBenchOptions& o) {
  std::smatch m;
  std::regex url(R"(http://([^:/]+):(\d+)/?)");
  ENSURE(std::regex_match(o.url, m, url), "--url must look like http://HOST:PORT");
  std::string host = m[1];
  int port = std::stoi(m[2]);
  std::vector<Round> rounds;
  for (uint32_t n : o.clients) {
    run_round(o, host, port, n);  // warm-up: records this count's graphs
    rounds.push_back(run_round(o, host, port, n));
  }
  nlohmann::json j = {{"url", o.url}, {"max_tokens", o.max_tokens}, {"rounds", nlohmann::json::array()}};
  for (const Round& r : rounds)
    j["rounds"].push_back({{"clients", r.clients},
                           {"tokens", r.tokens},
                           {"seconds", r.seconds},
                           {"tokens_per_second", r.tps},
                           {"ttft_median_s", r.ttft_median},
                           {"ttft_max_s", r.ttft_max},
                           {"speedup", r.tps / rounds.front().tps}});
  if (o.json) return fmt::print("{}\n", j.dump(2));
  fmt::print("{:>8} {:>8} {:>12} {:>9} {:>12} {:>12}\n", "clients", "tokens", "tokens/s", "x 1st", "ttft med s",
             "ttft max s");
  for (const Round& r : rounds)
    fmt::print("{:>8} {:>8} {:>12.1f} {:>9.2f} {:>12.3f} {:>12.3f}\n", r.clients, r.tokens, r.tps,
               r.tps / rounds.front().tps, r.ttft_median, r.ttft_max);
}

}  // namespace

void add_serve_bench(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "Streaming clients against a running vkllm serve: tokens/s, first token");
  auto o = std::make_shared<ServeBenchOptions>();
  cmd->add_option("--url", o->url, "The server (default http://127.0.0.1:8080)");
  cmd->add_option("--clients", o->clients, "Concurrent client counts, one round each")->delimiter(',');
  cmd->add_option("--max-tokens", o->max_tokens, "Tokens each client generates")->check(CLI::Range(1u, 100000u));
  cmd->add_option("--api-key", o->api_key, "Sent as Authorization: Bearer KEY");
  cmd->add_flag("--json", o->json, "Print one JSON object");
  cmd->callback([o] { bench_serve(*o); });
}

}  // namespace vkllm::bench
