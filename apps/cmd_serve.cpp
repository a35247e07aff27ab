// `vkllm serve [-m MODEL] [--host 127.0.0.1] [--port 8080] [--parallel N] [--ctx N] [--api-key KEY]
// [--max-queue N] [--timeout S]`: the OpenAI-compatible HTTP server (apps/serve/) over the
// continuous-batching scheduler (model/engine/scheduler.h). SIGINT/SIGTERM stop it: no new
// connections, running requests get a short grace period, then are cancelled.
#include <fmt/format.h>
#include <pthread.h>
#include <signal.h>
#include <unistd.h>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <filesystem>
#include <thread>

#include "commands.h"
#include "context.h"
#include "engine/scheduler.h"
#include "error.h"
#include "model_options.h"
#include "serve/api.h"
#include "serve/http_server.h"
#include "text/chat_template.h"

namespace vkllm::cli {

namespace {

constexpr auto kShutdownGrace = std::chrono::milliseconds(2000);

struct ServeOptions {
  ModelOptions model;
  std::string host = "127.0.0.1";
  int port = 8080;
  uint32_t parallel = 4;
  std::string api_key;
  uint32_t max_queue = 64;
  int timeout = 600;
};

std::string model_id(const ModelOptions& m) {
  if (m.path.empty()) return "default";
  return std::filesystem::path(m.path).stem().string();
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

void serve(const ServeOptions& o) {
  ENSURE(o.parallel >= 1 && o.parallel <= 256, "--parallel must be 1 to 256");
  ENSURE(o.model.batch >= o.parallel, "--batch must be at least --parallel (every running sequence decodes each step)");
  // Signals are taken by one thread with sigwait: block them before any other thread exists, so
  // that every thread inherits the mask. A write to a client that left must not kill the server.
  sigset_t stop_signals;
  sigemptyset(&stop_signals);
  sigaddset(&stop_signals, SIGINT);
  sigaddset(&stop_signals, SIGTERM);
  pthread_sigmask(SIG_BLOCK, &stop_signals, nullptr);
  std::signal(SIGPIPE, SIG_IGN);

  LoadedModel m = load_model(o.model, false, o.parallel);
  std::shared_ptr<const ChatTemplate> chat;
  try {
    chat = std::make_shared<ChatTemplate>(ChatTemplate::from_gguf(*m.file));
    if (chat->is_fallback())
      std::fprintf(stderr, "vkllm serve: %s has no chat template: using ChatML\n", m.file->name().c_str());
  } catch (const Error& e) {  // completions still work
    std::fprintf(stderr, "vkllm serve: warning: %s; /v1/chat/completions is unavailable\n", e.what());
  }
  Scheduler scheduler(*m.engine, {.max_queue = o.max_queue});
  serve::Api api(scheduler, {.model_id = model_id(o.model),
                             .api_key = o.api_key,
                             .chat_template = chat,
                             .device = m.ctx->caps().name,
                             .kv_type = m.engine->kv_cache().type()});
  serve::HttpServer server(
      api, {.host = o.host, .port = o.port, .timeout_seconds = o.timeout, .threads = o.parallel + o.max_queue + 8});
  int port = server.bind();
  print_startup(m);
  std::fprintf(stderr, "vkllm serve: listening on http://%s:%d\n", o.host.c_str(), port);
  std::fflush(stderr);

  std::thread stopper([&] {
    int sig = 0;
    sigwait(&stop_signals, &sig);
    server.stop();
    scheduler.shutdown(kShutdownGrace);
  });
  server.run();
  kill(getpid(), SIGTERM);  // if run() ended on its own, the stopper is still waiting
  stopper.join();
  std::fprintf(stderr, "vkllm serve: stopped\n");
}

}  // namespace

void add_serve_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("serve", "OpenAI-compatible HTTP server with continuous batching");
  auto o = std::make_shared<ServeOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("--host", o->host, "Address to listen on (default 127.0.0.1: this machine only)");
  cmd->add_option("--port", o->port, "Port to listen on (0: any free port, printed)")->check(CLI::Range(0, 65535));
  cmd->add_option("--parallel", o->parallel, "Sequences served at once, each in a KV-cache slot of --ctx tokens")
      ->check(CLI::Range(1u, 256u));
  cmd->add_option("--api-key", o->api_key, "Require 'Authorization: Bearer KEY' on every route but /health");
  cmd->add_option("--max-queue", o->max_queue, "Requests that may wait for a slot; more get 503")
      ->check(CLI::Range(0u, 100000u));
  cmd->add_option("--timeout", o->timeout, "Seconds a client connection may stall a read or write")
      ->check(CLI::Range(1, 86400));
  cmd->callback([o] { serve(*o); });
}

}  // namespace vkllm::cli
