// `vkllm serve [-m MODEL | -hf USER/REPO[:QUANT]] [--host 127.0.0.1] [--port 8080] [--parallel N]
// [--ctx N] [--api-key KEY] [--max-queue N] [--timeout S] [--cors-origin ORIGIN]...
// [--log-format text|json] [--log-file FILE] [--log-prompts] [--drain-timeout S]`: the HTTP server
// (apps/serve/: OpenAI's and Ollama's APIs, the demo page) over the continuous-batching scheduler
// (model/engine/scheduler.h). The host, the port, the context and the log file are checked before
// the model loads; it answers (503, /health says why) while the model loads and its kernels
// compile. SIGTERM or SIGINT drains it: new requests get 503 with Retry-After, the running and
// queued ones finish within --drain-timeout (a second signal cuts that short), the rest are
// cancelled, and it exits 0.
#include <arpa/inet.h>
#include <fmt/format.h>
#include <netdb.h>
#include <pthread.h>
#include <signal.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <unistd.h>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <thread>

#include "arch/file_type.h"
#include "commands.h"
#include "context.h"
#include "engine/embedding.h"
#include "engine/scheduler.h"
#include "error.h"
#include "gguf_listing.h"
#include "graph/vision_encoder.h"
#include "hub/http_client.h"
#include "model_options.h"
#include "projector_info.h"
#include "serve/api.h"
#include "serve/http_server.h"
#include "serve/request_log.h"
#include "text/chat/chat_format.h"
#include "text/chat_template.h"

namespace vkllm::cli {

namespace {

constexpr auto kDeviceLostGrace = std::chrono::milliseconds(2000);
// Connection threads beyond --parallel: quick routes (health, models, metrics) and requests
// waiting for a slot. More connections wait in the pool's queue without a thread.
constexpr size_t kSpareThreads = 8;

struct ServeOptions {
  ModelOptions model;
  std::string host = "127.0.0.1";
  int port = 8080;
  uint32_t parallel = 4;
  std::string api_key;
  uint32_t max_queue = 64;
  int timeout = 600;
  std::vector<std::string> cors_origins;
  std::string log_format = "text";
  serve::RequestLogOptions log;
  std::string pooling;  // --pooling; "": the file's pooling_type, else last
  bool no_warmup = false;
  bool allow_image_urls = false;  // --allow-image-urls: http(s) image URLs are fetched
  int drain_timeout = 30;         // seconds
};

// --allow-image-urls: an image URL's bytes through libcurl, as pull fetches (64 MiB at most).
std::string fetch_image_url(const std::string& url) {
  hub::HttpClient http("", "");
  std::string body;
  hub::HttpResult r = http.get(url, body);
  ENSURE(r.transport_error.empty(), fmt::format("could not fetch {}: {}", url, r.transport_error));
  ENSURE(r.status == 200, fmt::format("fetching {} answered HTTP {}", url, r.status));
  return body;
}

// What Ollama clients are told about the model (/api/tags, /api/show, /api/ps).
serve::ModelFacts model_facts(const LoadedModel& m) {
  const GgufFile& f = *m.file;
  serve::ModelFacts facts{.architecture = m.engine->config().arch_name, .file_bytes = f.file_bytes()};
  for (const GgufTensor& t : f.tensors()) facts.parameters += t.n_elements();
  if (std::optional<uint32_t> id = read_file_type(f)) facts.quantization = file_type_name(*id);
  MemoryReport mem = m.engine->memory();
  facts.memory_bytes = mem.weights + mem.kv_cache + mem.recurrent + mem.activations;
  struct stat st {};
  if (stat(f.name().c_str(), &st) == 0) facts.modified = st.st_mtime;  // the embedded model has none
  facts.model_info = [&f](bool verbose) { return metadata_json(f, verbose ? SIZE_MAX : 64); };
  return facts;
}

// The model's id in /v1/models: "default", the file's stem, or a downloaded model's name.
std::string model_id(const ModelOptions& m, const GgufFile& f) {
  if (m.path.empty() && m.hf_repo.empty()) return "default";
  if (!m.hf_repo.empty()) return m.hf_repo;
  std::error_code ec;
  return std::filesystem::exists(m.path, ec) ? std::filesystem::path(f.name()).stem().string() : m.path;
}

void print_startup(const LoadedModel& m) {
  const Engine& e = *m.engine;
  MemoryReport mem = e.memory();
  auto mib = [](double b) { return b / 1048576.0; };
  std::fprintf(stderr,
               "vkllm serve: %s on %s: %u slots x %u tokens, KV cache %.1f MiB (%.2f MiB per slot), weights %.1f "
               "MiB, activations %.1f MiB\n",
               m.file->name().c_str(), m.ctx->caps().name.c_str(), e.slots(), e.n_ctx(), mib(double(mem.kv_cache)),
               mib(double(mem.kv_cache) / e.slots()), mib(double(mem.weights)), mib(double(mem.activations)));
}

// --host: a name, or an address that parses (999.1.1.1 is neither an IPv4 address nor a name).
const CLI::Validator host_check(
    [](std::string& h) -> std::string {
      in6_addr a6{};
      in_addr a4{};
      if (h.empty()) return "an empty host";
      bool numeric = h.find_first_not_of("0123456789.") == std::string::npos;
      if (numeric) return inet_pton(AF_INET, h.c_str(), &a4) == 1 ? "" : fmt::format("'{}' is not an IPv4 address", h);
      if (h.find(':') != std::string::npos)
        return inet_pton(AF_INET6, h.c_str(), &a6) == 1 ? "" : fmt::format("'{}' is not an IPv6 address", h);
      return "";
    },
    "");

// Binds --host:--port once and lets go, so that an address in use or not of this machine is
// said before the model loads (port 0 picks any free port: nothing to try).
void check_address(const ServeOptions& o) {
  addrinfo hints{.ai_flags = AI_PASSIVE | AI_NUMERICSERV, .ai_family = AF_UNSPEC, .ai_socktype = SOCK_STREAM};
  addrinfo* res = nullptr;
  int rc = getaddrinfo(o.host.c_str(), std::to_string(o.port).c_str(), &hints, &res);
  ENSURE(rc == 0, fmt::format("--host {}: {}", o.host, gai_strerror(rc)));
  int err = 0;
  if (o.port != 0) {
    int fd = socket(res->ai_family, res->ai_socktype | SOCK_CLOEXEC, res->ai_protocol);
    int yes = 1;
    setsockopt(fd, SOL_SOCKET, SO_REUSEADDR, &yes, sizeof yes);
    if (fd < 0 || ::bind(fd, res->ai_addr, res->ai_addrlen) != 0) err = errno;
    if (fd >= 0) close(fd);
  }
  freeaddrinfo(res);
  ENSURE(err != EADDRINUSE, fmt::format("--port {}: {}:{} is in use", o.port, o.host, o.port));
  ENSURE(err == 0, fmt::format("--host {}: cannot listen there: {}", o.host, std::strerror(err)));
}

// Waits until the running and queued requests have finished, `timeout` has passed, or a second
// stop signal came.
void drain(const Scheduler& scheduler, std::chrono::seconds timeout, const sigset_t& signals) {
  auto idle = [&] {
    SchedulerStats s = scheduler.stats();
    return s.running == 0 && s.queued == 0;
  };
  if (idle()) return;
  std::fprintf(stderr, "vkllm serve: draining: new requests get 503; the running ones have %d s to finish\n",
               int(timeout.count()));
  auto end = std::chrono::steady_clock::now() + timeout;
  timespec poll{.tv_sec = 0, .tv_nsec = 50'000'000};
  while (!idle()) {
    if (std::chrono::steady_clock::now() >= end) {
      std::fprintf(stderr, "vkllm serve: --drain-timeout passed: cancelling the requests still running\n");
      return;
    }
    if (sigtimedwait(&signals, nullptr, &poll) > 0) {
      std::fprintf(stderr, "vkllm serve: a second signal: cancelling the requests still running\n");
      return;
    }
  }
}

void serve(const ServeOptions& o) {
  ENSURE(o.model.batch >= o.parallel, "--batch must be at least --parallel (every running sequence decodes each step)");
  check_address(o);
  ModelPlan plan = plan_model(o.model);
  check_context_fits(plan, fmt::format("--ctx {}", plan.n_ctx));
  ProjectorFile proj = open_projector(o.model, plan.config.dim);
  Pooling pooling =
      embedding_pooling(plan.config, o.pooling.empty() ? Pooling::Unspecified : *pooling_named(o.pooling));
  // Signals are taken by one thread with sigwait: block them before any other thread exists, so
  // that every thread inherits the mask. A write to a client that left must not kill the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  serve::RequestLog log({.json = o.log_format == "json",
                         .file = o.log.file,
                         .prompts = o.log.prompts});  // opens --log-file now: a bad path fails before the model loads
  std::string id = model_id(o.model, *plan.file);
  // Listening before the model loads: /health says 503 (loading) until the server can serve.
  serve::HttpServer server({.host = o.host,
                            .port = o.port,
                            .timeout_seconds = o.timeout,
                            .threads = o.parallel + kSpareThreads,
                            .max_waiting = o.max_queue,
                            .cors_origins = o.cors_origins,
                            .log = &log});
  int port = server.bind();
  server.loading("loading " + plan.file->name());
  std::thread listener([&] { server.run(); });
  struct StopOnThrow {  // a model that fails to load: the listener stops before the error is said
    serve::HttpServer& server;
    std::thread& listener;
    ~StopOnThrow() {
      if (!listener.joinable()) return;
      server.stop();
      listener.join();
    }
  } stop_on_throw{server, listener};
  std::fprintf(stderr, "vkllm serve: answering on http://%s:%d while the model loads (503 until it is ready)\n",
               o.host.c_str(), port);
  std::fflush(stderr);
  LoadedModel m = load_model(std::move(plan), o.model, false, o.parallel);
  std::unique_ptr<VisionEncoder> encoder;
  if (proj.file) encoder = std::make_unique<VisionEncoder>(*m.ctx, *proj.file, *proj.config);
  std::shared_ptr<const ChatTemplate> chat;
  try {
    chat = std::make_shared<ChatTemplate>(ChatTemplate::from_gguf(*m.file));
    if (chat->is_fallback())
      std::fprintf(stderr, "vkllm serve: %s has no chat template: using ChatML\n", m.file->name().c_str());
    if (ChatFormat f = ChatFormat::detect(chat->source()); f.tools == ToolCallFormat::Unknown)
      std::fprintf(stderr,
                   "vkllm serve: the chat template (%s) writes tool calls in a syntax vkllm does not read: it is "
                   "served without tools, and requests that offer tools get 400\n",
                   f.unknown.c_str());
  } catch (const Error& e) {  // completions still work
    std::fprintf(stderr, "vkllm serve: warning: %s; /v1/chat/completions is unavailable\n", e.what());
  }
  // Pipelines compile on first use: run the step shapes once now, so the first request does not
  // wait for them (before the scheduler's thread exists: one thread drives a Context).
  if (!o.no_warmup) {
    server.loading("compiling kernels for this device");
    auto t0 = std::chrono::steady_clock::now();
    size_t compiled = m.engine->warm_up();
    std::fprintf(stderr, "vkllm serve: warmed up: %zu pipelines compiled in %.2f s\n", compiled,
                 std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count());
  }
  // A lost device fails every request (the scheduler does that); the server answers /health with
  // 503 for a moment, so that a load balancer sees it, then stops and exits non-zero.
  std::atomic<bool> lost{false};
  Scheduler scheduler(*m.engine, {.max_queue = o.max_queue,
                                  .on_device_lost =
                                      [&lost](const std::string&) {
                                        lost = true;
                                        std::this_thread::sleep_for(kDeviceLostGrace);
                                        kill(getpid(), SIGTERM);
                                      },
                                  .encoder = encoder.get()});
  serve::Api api(scheduler,
                 {.model_id = id,
                  .api_key = o.api_key,
                  .chat_template = chat,
                  .device = m.ctx->caps().name,
                  .kv_type = m.engine->kv_cache().type(),
                  .log_prompts = o.log.prompts,
                  .facts = model_facts(m),
                  .pooling = pooling,
                  .projector = proj.config,
                  .fetch_image = o.allow_image_urls ? fetch_image_url : nullptr,
                  .projector_info = proj.file ? serve::json::parse(projector_json(proj.file->name(), *proj.config,
                                                                                  m.engine->config().kv_bytes_per_token(
                                                                                      m.engine->kv_cache().type()),
                                                                                  m.engine->config().dim)
                                                                       .dump())
                                              : serve::json()});
  server.serve(api);
  print_startup(m);
  std::fprintf(stderr, "vkllm serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stderr);

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    api.drain();
    drain(scheduler, std::chrono::seconds(o.drain_timeout), stop_signals);
    scheduler.shutdown(std::chrono::milliseconds(0));  // cancels what is left
    server.stop();
  });
  listener.join();
  kill(getpid(), SIGTERM);  // if run() ended on its own, the stopper is still waiting
  stopper.join();
  ENSURE(!lost, "vkllm serve: stopped because the GPU was lost: " + scheduler.fault());
  std::fprintf(stderr, "vkllm serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server with continuous batching");
  auto o = std::make_shared<ServeOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("--host", o->host, "Address to listen on (127.0.0.1: this machine only)")
      ->type_name("HOST")
      ->check(host_check);
  cmd->add_option("--port", o->port, "Port to listen on (0: any free port, printed)")
      ->type_name("PORT")
      ->check(int_range(0, 65535));
  cmd->add_option("--parallel", o->parallel,
                  "Sequences served at once (also -np), each in a KV-cache slot of --ctx tokens")
      ->type_name("N")
      ->check(int_range(1, 256));
  cmd->add_option("--api-key", o->api_key,
                  "Require 'Authorization: Bearer KEY' (or 'x-api-key: KEY') on every route but /health")
      ->type_name("KEY");
  cmd->add_option("--max-queue", o->max_queue, "Requests that may wait for a slot; more get 503")
      ->type_name("N")
      ->check(int_range(0, 100000));
  cmd->add_option("--timeout", o->timeout, "Seconds a client connection may stall a read or write")
      ->type_name("S")
      ->check(int_range(1, 86400));
  cmd->add_option("--cors-origin", o->cors_origins,
                  "Let pages from ORIGIN (scheme://host:port, or * for any) call the API from a browser; repeatable")
      ->type_name("ORIGIN")
      ->allow_extra_args(false);
  cmd->add_option("--log-format", o->log_format, "Request log lines as text or json")
      ->type_name("FORMAT")
      ->check(one_of({"text", "json"}));
  cmd->add_option("--log-file", o->log.file, "Append the request log to FILE instead of stderr")->type_name("FILE");
  cmd->add_flag("--log-prompts", o->log.prompts,
                "Write each prompt's text in the request log (off: prompts are private)");
  cmd->add_flag("--no-warmup", o->no_warmup,
                "Skip the warm-up step that compiles pipelines before listening (the first request then waits "
                "for them)");
  add_mmproj_options(cmd, o->model);
  cmd->add_flag("--allow-image-urls", o->allow_image_urls,
                "Fetch http(s) image URLs that requests send (off: only images inside the request, as data: URLs or "
                "base64)");
  cmd->add_option("--drain-timeout", o->drain_timeout,
                  "On SIGTERM: seconds the running requests have to finish while new ones get 503; then they are "
                  "cancelled")
      ->type_name("S")
      ->check(int_range(0, 86400));
  add_pooling_option(cmd, o->pooling);
  add_jinja_flag(cmd);
  cmd->callback([o] { serve(*o); });
}

}  // namespace vkllm::cli
