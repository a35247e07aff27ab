// What a cluster router and an operator read from `vkllm serve`: /metrics under vLLM's names and
// buckets in the vkllm: namespace (the previous vkllm_ names marked deprecated), the recurrent
// state of a hybrid model's slots, /health's 503 while the model loads, and the drain on SIGTERM.
// Prometheus itself scraping it: test_serve_prometheus.cpp.
#include <fmt/format.h>
#include <signal.h>

#include <nlohmann/json.hpp>
#include <thread>

#include "catch.h"
#include "cli.h"
#include "engine_fixtures.h"
#include "fixture/fixture.h"
#include "serve_process.h"

using namespace vkllm;
using namespace vkllm::test;
using json = nlohmann::json;

namespace {

// The value of `name{model_name="default"<more>}` in /metrics; -1 when it is absent.
double sample(const std::string& metrics, const std::string& name, const std::string& more = "") {
  std::string key = fmt::format("\n{}{{model_name=\"default\"{}}} ", name, more);
  size_t at = metrics.find(key);
  return at == std::string::npos ? -1 : std::atof(metrics.c_str() + at + key.size());
}

std::string stream_body(int tokens) {
  return json({{"prompt", "And God said"}, {"max_tokens", tokens}, {"ignore_eos", true}, {"stream", true}}).dump();
}

// Polls /metrics until `ok` holds for it (10 s at most).
bool metrics_reach(const ServeProcess& s, const std::function<bool(const std::string&)>& ok) {
  for (int i = 0; i < 500; ++i) {
    if (ok(get(s, "/metrics").body)) return true;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return false;
}

}  // namespace

TEST_CASE(
    "vkllm serve's /metrics has vLLM's names and buckets in the vkllm namespace and marks the old names deprecated",
    "[serve][metrics]") {
  ServeProcess s("--parallel 2");
  std::string m = get(s, "/metrics").body;
  CHECK(sample(m, "vkllm:num_requests_running") == 0);
  CHECK(sample(m, "vkllm:num_requests_waiting") == 0);
  CHECK(sample(m, "vkllm:kv_cache_usage_perc") == 0);
  CHECK(m.find("vkllm:recurrent_state_tokens") == std::string::npos);  // not a hybrid

  std::thread client([&] { CHECK(post(s, "/v1/completions", stream_body(120)).status == 200); });
  // While it runs its slot's tokens count; one slot of two, each of 256 tokens.
  double usage = 0;
  CHECK(metrics_reach(s, [&](const std::string& t) {
    usage = sample(t, "vkllm:kv_cache_usage_perc");
    return sample(t, "vkllm:num_requests_running") == 1 && usage > 0;
  }));
  CHECK(usage <= 0.5);
  client.join();
  // The client may hear the last token before the scheduler has counted it: wait for the count.
  CHECK(metrics_reach(s, [&](const std::string& t) {
    m = t;
    return sample(t, "vkllm:e2e_request_latency_seconds_count") == 1 &&
           sample(t, "vkllm:kv_cache_usage_perc") == 0;  // the idle slot's prefix is free to take
  }));
  INFO(m);
  CHECK(sample(m, "vkllm:prefix_cache_queries_total") == 4);  // BOS and "And God said"
  CHECK(sample(m, "vkllm:generation_tokens_total") == 120);
  // vLLM's buckets: 22 bounds and +Inf for the time to first token, 1-2-5 up to the context for tokens.
  CHECK(sample(m, "vkllm:time_to_first_token_seconds_bucket", ",le=\"+Inf\"") == 1);
  CHECK(sample(m, "vkllm:time_to_first_token_seconds_bucket", ",le=\"2560.0\"") == 1);
  CHECK(sample(m, "vkllm:time_per_output_token_seconds_count") == 119);
  CHECK(sample(m, "vkllm:request_generation_tokens_bucket", ",le=\"100.0\"") == 0);
  CHECK(sample(m, "vkllm:request_generation_tokens_bucket", ",le=\"200.0\"") == 1);
  CHECK(m.find("le=\"500.0\"") == std::string::npos);  // past the 256-token context
  CHECK(sample(m, "vkllm:request_prompt_tokens_sum") == 4);
  CHECK(sample(m, "vkllm:e2e_request_latency_seconds_count") == 1);
  CHECK(sample(m, "vkllm:request_queue_time_seconds_count") == 1);
  CHECK(sample(m, "vkllm:iteration_tokens_total_count") == sample(m, "vkllm:forward_steps_total"));
  CHECK(m.find("# TYPE vkllm:time_to_first_token_seconds histogram\n") != std::string::npos);
  CHECK(m.find("# HELP vkllm_queue_depth Deprecated: read vkllm:num_requests_waiting") != std::string::npos);
  CHECK(m.find("\nvkllm_generated_tokens_total 120\n") != std::string::npos);
}

TEST_CASE("vkllm serve's /metrics shows a hybrid model's recurrent state and checkpoint per slot",
          "[serve][metrics][hybrid]") {
  TempFile model("metrics_hybrid.gguf");
  model.write(make_fixture_model(family_fixture("qwen35", DType::F16).spec));
  ServeProcess s("-m " + model.path + " --parallel 2 --ctx 128");
  json body = {{"prompt", {1, 2, 3, 4, 5}}, {"max_tokens", 4}, {"ignore_eos", true}, {"temperature", 0}};
  HttpResult r = post(s, "/v1/completions", body.dump());
  REQUIRE(r.status == 200);
  int prompt = r.json()["usage"]["prompt_tokens"].get<int>();
  std::string m, id = std::filesystem::path(model.path).stem().string();
  auto slot = [&](const char* name, int i) {
    std::string key = fmt::format("\n{}{{model_name=\"{}\",slot=\"{}\"}} ", name, id, i);
    size_t at = m.find(key);
    return at == std::string::npos ? -1 : std::atof(m.c_str() + at + key.size());
  };
  auto sum = [&](const char* name) { return slot(name, 0) + slot(name, 1); };
  // The reply is sent before the scheduler's step that releases the slot ends: on a loaded
  // machine /metrics may be read in between, so it is read until the slot is settled (5 s at most).
  for (int i = 0; i < 100; ++i) {
    m = get(s, "/metrics").body;
    if (m.find(fmt::format("\nvkllm:num_requests_running{{model_name=\"{}\"}} 0.0\n", id)) != std::string::npos) break;
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
  }
  INFO(m);
  // One slot read the prompt (its checkpoint) and sampled 4 tokens, the last not yet evaluated.
  CHECK(sum("vkllm:recurrent_checkpoint_tokens") == prompt);
  CHECK(sum("vkllm:recurrent_state_tokens") == prompt + 3);
}

TEST_CASE("vkllm serve answers /health with 503 while the model loads and 200 once it serves", "[serve][health]") {
  ServeProcess s("--parallel 1", "", false);
  HttpResult loading = get(s, "/health");  // the warm-up compiles kernels for a second or more on lavapipe
  CHECK(loading.status == 503);
  CHECK(loading.json()["status"] == "loading");
  CHECK(loading.json()["error"]["message"].get<std::string>().find("not ready") != std::string::npos);
  CHECK(post(s, "/v1/completions", stream_body(1)).status == 503);
  HttpResult ready;
  for (int i = 0; i < 1500 && ready.status != 200; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    ready = get(s, "/health");
  }
  CHECK(ready.status == 200);
  CHECK(ready.json()["status"] == "ok");
}

TEST_CASE("vkllm serve drains on SIGTERM: streams in flight finish, new requests get 503, and it exits 0",
          "[serve][drain]") {
  ServeProcess s("--parallel 2 --drain-timeout 120");
  std::vector<HttpResult> streams(2);
  std::vector<std::thread> clients;
  for (HttpResult& r : streams) clients.emplace_back([&] { r = post(s, "/v1/completions", stream_body(200)); });
  REQUIRE(metrics_reach(s, [](const std::string& t) { return sample(t, "vkllm:num_requests_running") == 2; }));
  kill(s.pid(), SIGTERM);
  HttpResult health;
  for (int i = 0; i < 500 && health.status != 503; ++i) health = get(s, "/health");
  CHECK(health.json()["status"] == "draining");
  httplib::Result refused = s.client().Post("/v1/completions", stream_body(1), "application/json");
  REQUIRE(refused);
  CHECK(refused->status == 503);
  CHECK(refused->get_header_value("Retry-After") == "5");
  CHECK(s.stop(0, 120) == 0);
  for (auto& c : clients) c.join();
  INFO(s.log());
  for (const HttpResult& r : streams) {
    CHECK(r.status == 200);
    SseStream events = parse_sse(r.body);
    CHECK(events.done);
    REQUIRE(!events.events.empty());
    CHECK(events.events.back()["choices"][0]["finish_reason"] == "length");
  }
}
