// Faults in the engine under `vkllm serve`, injected with the test-only hook VKLLM_INJECT_FAULT
// (model/engine/scheduler.h): an exception where the scheduler admits a request, or in a forward
// step, fails the requests it touches with 500 and the server goes on; a lost device (or a fence
// that never signals) fails every request, /health answers 503, and the server exits non-zero
// once the replies are out.
#include <signal.h>

#include <chrono>
#include <nlohmann/json.hpp>
#include <thread>

#include "catch.h"
#include "serve_process.h"

using namespace vkllm::test;
using json = nlohmann::json;

namespace {

const std::string kChat = R"({"messages": [{"role": "user", "content": "Who begat Enos?"}], "max_tokens": 4,
                              "temperature": 0})";
const std::string kStream = R"({"prompt": "And God said", "max_tokens": 40, "ignore_eos": true, "stream": true})";

void check_server_error(const HttpResult& r, const std::string& says) {
  INFO("body: " << r.body);
  CHECK(r.status == 500);
  json j = r.json();
  CHECK(j["error"]["type"] == "server_error");
  CHECK(j["error"]["message"].get<std::string>().find(says) != std::string::npos);
}

}  // namespace

TEST_CASE("vkllm serve answers 500 for an engine fault and goes on serving", "[serve][faults]") {
  ServeProcess s("--parallel 1", "VKLLM_INJECT_FAULT=admit:2");
  CHECK(post(s, "/v1/chat/completions", kChat).status == 200);
  check_server_error(post(s, "/v1/chat/completions", kChat), "injected fault");
  CHECK(post(s, "/v1/chat/completions", kChat).status == 200);
  CHECK(get(s, "/health").status == 200);
  INFO(s.log());
  CHECK(s.log().find("injected fault") != std::string::npos);

  ServeProcess t("--parallel 1", "VKLLM_INJECT_FAULT=step:3");  // mid-stream: an error event
  SseStream st = parse_sse(post(t, "/v1/completions", kStream).body);
  REQUIRE(!st.events.empty());
  CHECK(st.events.back().contains("error"));
  CHECK(st.events.back()["error"]["code"] == 500);
  CHECK(!st.done);
  CHECK(post(t, "/v1/chat/completions", kChat).status == 200);
  CHECK(get(t, "/health").status == 200);
}

TEST_CASE("vkllm serve on a lost device fails its requests, says 503 on /health and exits non-zero",
          "[serve][faults]") {
  ServeProcess s("--parallel 2", "VKLLM_INJECT_FAULT=device_lost:3");
  std::thread other([&] {  // a request that is waiting or running when the device goes
    HttpResult r = post(s, "/v1/chat/completions", kChat);
    CHECK((r.status == 500 || r.status == 503 || r.status == 0));
  });
  SseStream st = parse_sse(post(s, "/v1/completions", kStream).body);
  other.join();
  REQUIRE(!st.events.empty());
  CHECK(st.events.back()["error"]["code"] == 500);
  CHECK(st.events.back()["error"]["message"].get<std::string>().find("lost") != std::string::npos);
  HttpResult health = get(s, "/health");  // the server keeps answering for a moment before it exits
  CHECK(health.status == 503);
  double took = 0;
  int status = s.stop(0, 20, &took);  // signal 0: only wait for it to exit on its own
  INFO(s.log());
  CHECK(status == 1);
  CHECK(s.log().find("device lost") != std::string::npos);
}
