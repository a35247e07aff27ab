// GET /metrics in Prometheus's text format 0.0.4. The `vkllm:` names are what a router reads (the
// Gateway API Inference Extension's endpoint picker, llm-d: waiting, running, KV-cache usage,
// prefix-cache hits) and what an operator's dashboards read (the latency histograms); they follow
// vLLM's names, buckets and `model_name` label. The `vkllm_` names of the previous release are
// still written, once, with "Deprecated" in their HELP line (docs/decisions.md "Metrics").
#include <fmt/format.h>

#include <cmath>

#include "serve/api.h"

namespace vkllm::serve {

namespace {

// Python's float repr, as vLLM's exporter writes numbers and `le` bounds ("1.0", "0.005").
std::string number(double v) {
  if (std::isinf(v)) return v > 0 ? "+Inf" : "-Inf";
  if (v == std::floor(v) && std::fabs(v) < 1e15) return fmt::format("{:.1f}", v);
  return fmt::format("{}", v);
}

std::string escaped(std::string_view value) {
  std::string out;
  for (char c : value) {
    if (c == '\\' || c == '"') out += '\\';
    out += c == '\n' ? std::string("\\n") : std::string(1, c);
  }
  return out;
}

class Exposition {
 public:
  explicit Exposition(const std::string& model) : labels_(fmt::format("model_name=\"{}\"", escaped(model))) {}

  void header(std::string_view name, std::string_view type, std::string_view help) {
    text += fmt::format("# HELP {0} {1}\n# TYPE {0} {2}\n", name, help, type);
  }
  void sample(std::string_view name, double value, std::string_view more_labels = "") {
    text += fmt::format("{}{{{}{}{}}} {}\n", name, labels_, more_labels.empty() ? "" : ",", more_labels, number(value));
  }
  void histogram(std::string_view name, std::string_view help, const Histogram& h) {
    header(name, "histogram", help);
    for (size_t i = 0; i <= h.bounds().size(); ++i) {
      double le = i < h.bounds().size() ? h.bounds()[i] : INFINITY;
      sample(fmt::format("{}_bucket", name), double(h.at_most(i)), fmt::format("le=\"{}\"", number(le)));
    }
    sample(fmt::format("{}_sum", name), h.sum());
    sample(fmt::format("{}_count", name), double(h.count()));
  }

  std::string text;

 private:
  std::string labels_;
};

struct Scalar {
  const char* name;        // after "vkllm:"
  const char* deprecated;  // the previous release's name after "vkllm_", or null
  const char* type;
  const char* help;
  double value;
};

}  // namespace

HttpReply Api::metrics() const {
  SchedulerStats s = gen_.stats();
  std::vector<SlotState> slots = gen_.slot_states();
  uint64_t used = 0;
  for (const SlotState& slot : slots)
    if (slot.processing) used += slot.tokens;
  double capacity = double(s.slots) * gen_.n_ctx();
  const Scalar scalars[] = {
      {"num_requests_running", "slots_busy", "gauge", "Requests in a KV-cache slot (reading the prompt or generating).",
       double(s.running)},
      {"num_requests_waiting", "queue_depth", "gauge", "Requests waiting for a slot.", double(s.queued)},
      {"kv_cache_usage_perc", nullptr, "gauge",
       "KV-cache usage, 0 to 1: the running requests' tokens over every slot's (idle slots' cached prefixes are free "
       "to take).",
       capacity > 0 ? double(used) / capacity : 0},
      {"num_slots", "slots_total", "gauge", "KV-cache slots (--parallel).", double(s.slots)},
      {"prefix_cache_queries_total", nullptr, "counter", "Prefix-cache queries: prompt tokens looked up in the slots.",
       double(s.prompt_tokens)},
      {"prefix_cache_hits_total", "prompt_tokens_cached_total", "counter",
       "Prefix-cache hits: prompt tokens reused from a slot.", double(s.cached_tokens)},
      {"requests_total", "requests_total", "counter", "Generation requests accepted.", double(s.requests)},
      {"requests_rejected_total", "requests_rejected_total", "counter",
       "Generation requests refused because the queue was full.", double(s.rejected)},
      {"requests_cancelled_total", "requests_cancelled_total", "counter",
       "Generation requests cancelled (client gone or shutdown).", double(s.cancelled)},
      {"prompt_tokens_total", "prompt_tokens_total", "counter", "Prompt tokens of admitted requests (tokens in).",
       double(s.prompt_tokens)},
      {"generation_tokens_total", "generated_tokens_total", "counter", "Generated tokens (tokens out).",
       double(s.generated_tokens)},
      {"forward_steps_total", "forward_steps_total", "counter", "Forward steps run.", double(s.steps)},
      {"generation_tokens_per_second", "generation_tokens_per_second", "gauge",
       "Generated tokens per second over the last 10 s.", s.generation_tps},
      {"pipelines", "pipelines", "gauge", "GPU pipelines compiled (by the warm-up before listening, and any since).",
       double(s.pipelines)},
  };
  Exposition out(options_.model_id);
  for (const Scalar& m : scalars) {
    std::string name = fmt::format("vkllm:{}", m.name);
    out.header(name, m.type, m.help);
    out.sample(name, m.value);
  }
  // Hybrid models: what each slot's recurrent state and its checkpoint stand for.
  if (!slots.empty() && slots[0].checkpoint_tokens) {
    out.header("vkllm:recurrent_state_tokens", "gauge", "Tokens a slot's live recurrent state covers (hybrid models).");
    for (const SlotState& slot : slots)
      out.sample("vkllm:recurrent_state_tokens", slot.tokens, fmt::format("slot=\"{}\"", slot.id));
    out.header(
        "vkllm:recurrent_checkpoint_tokens", "gauge",
        "Tokens a slot's recurrent checkpoint covers, from which a request sharing them resumes (hybrid models).");
    for (const SlotState& slot : slots)
      out.sample("vkllm:recurrent_checkpoint_tokens", *slot.checkpoint_tokens, fmt::format("slot=\"{}\"", slot.id));
  }
  const RequestHistograms& h = s.histograms;
  out.histogram("vkllm:time_to_first_token_seconds", "Time to first token in seconds (submission to the first token).",
                h.time_to_first_token);
  out.histogram("vkllm:time_per_output_token_seconds", "Time per output token in seconds (between a request's tokens).",
                h.time_per_output_token);
  out.histogram("vkllm:e2e_request_latency_seconds", "End-to-end request latency in seconds.", h.e2e_latency);
  out.histogram("vkllm:request_queue_time_seconds", "Time a request waited for a slot in seconds.", h.queue_time);
  out.histogram("vkllm:request_prompt_tokens", "Prompt tokens per finished request.", h.prompt_tokens);
  out.histogram("vkllm:request_generation_tokens", "Generated tokens per finished request.", h.generation_tokens);
  out.histogram("vkllm:iteration_tokens_total", "Tokens per forward step.", h.iteration_tokens);
  // The previous release's names, unlabelled as they were.
  for (const Scalar& m : scalars) {
    if (!m.deprecated) continue;
    out.text += fmt::format("# HELP vkllm_{0} Deprecated: read vkllm:{1}; this name goes in the next release. {2}\n",
                            m.deprecated, m.name, m.help);
    out.text += fmt::format("# TYPE vkllm_{0} {1}\nvkllm_{0} {2}\n", m.deprecated, m.type, m.value);
  }
  return {.content_type = "text/plain; version=0.0.4", .body = out.text};
}

}  // namespace vkllm::serve
