// Scheduler: runs many generation requests on one Engine by continuous batching. A thread of its
// own owns the GPU; each forward step takes the decode token of every running sequence plus
// prefill chunks of new ones, up to the engine's batch size, and each sequence lives in a
// KV-cache slot of its own. Requests wait in a bounded queue for a free slot; a new request
// reuses the idle slot whose cached tokens share the longest prefix with its prompt (chat
// clients resend the whole conversation every turn). docs/decisions.md "vkllm serve".
#pragma once
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <future>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "engine/batch.h"
#include "engine/engine.h"
#include "engine/sequence.h"

namespace vkllm {

class VisionEncoder;

struct SchedulerOptions {
  uint32_t max_queue = 64;  // requests waiting for a slot; beyond it submit() throws QueueFull
  // Called once, on the scheduler's thread, when the device is lost (after every request it
  // held has been failed): the server stops and exits non-zero.
  std::function<void(const std::string&)> on_device_lost;
  // The model's projector on the GPU, for requests with images (null: a request with one fails).
  VisionEncoder* encoder = nullptr;
};

// A test-only hook: VKLLM_INJECT_FAULT=admit:N | step:N | device_lost:N makes the scheduler throw
// at its Nth admission or forward step (device_lost: as a lost GPU would), so the tests can hold
// what the server does with engine faults.
struct InjectedFault {
  enum Where { None, Admit, Step, DeviceLost } where = None;
  uint64_t at = 0, count = 0;
  static InjectedFault from_env();
  void hit(Where w);  // throws at the chosen call
};

class Scheduler : public Generator {
 public:
  Scheduler(Engine& engine, const SchedulerOptions& options = {});
  ~Scheduler() override;  // cancels what is left and joins the thread

  std::shared_ptr<GenerationHandle> submit(GenerationRequest request) override;
  const Tokenizer& tokenizer() const override { return engine_.tokenizer(); }
  uint32_t n_ctx() const override { return engine_.n_ctx(); }
  SchedulerStats stats() const override;
  std::string fault() const override;
  std::vector<SlotState> slot_states() const override;  // as of the last step
  const ModelConfig& config() const override { return engine_.config(); }
  // Runs on the scheduler's thread before admitting new requests, in the least recently used idle
  // slot (whose cached tokens are then forgotten); waits while every slot is running.
  std::vector<float> attention(std::vector<int32_t> tokens, uint32_t layer, std::vector<PromptImage> images) override;
  // Likewise before admitting new requests, in every idle slot at once; running sequences wait
  // while a job's inputs run.
  std::vector<std::vector<float>> embed(std::vector<std::vector<int32_t>> inputs, Pooling pooling) override;
  // Refuses new requests (QueueFull), lets the running and queued ones go on for up to `grace`,
  // then cancels the rest and stops the thread.
  void shutdown(std::chrono::milliseconds grace);

 private:
  struct Slot {
    std::unique_ptr<Sequence> seq;  // running, or null when idle
    std::vector<int32_t> cached;    // tokens whose keys and values the slot holds (when idle)
    uint64_t last_used = 0;
    // The running request's submission and its latest token (the latency histograms).
    std::chrono::steady_clock::time_point submitted, last_token;
  };
  struct Waiting {
    GenerationRequest request;
    std::shared_ptr<GenerationHandle> handle;
  };
  struct AttentionJob {
    std::vector<int32_t> tokens;
    uint32_t layer = 0;
    std::vector<PromptImage> images;
    std::promise<std::vector<float>> result;
  };
  struct EmbedJob {
    std::vector<std::vector<int32_t>> inputs;
    Pooling pooling = Pooling::Last;
    std::promise<std::vector<std::vector<float>>> result;
  };
  void loop();
  void admit();  // queued requests into idle slots (mutex held)
  void start(uint32_t slot, uint32_t reuse, GenerationRequest request, std::shared_ptr<GenerationHandle> handle);
  void run_attention();  // queued attention captures, each in an idle slot
  std::vector<float> capture(const AttentionJob& job, uint32_t slot);
  void run_embed();  // queued embedding jobs, each over every idle slot
  uint32_t pick_slot(const GenerationRequest& request, uint32_t& reuse) const;
  // completed: it ended by itself (not cancelled or failed), and counts in the histograms.
  void release(uint32_t slot, bool completed = false);
  void observe_token(uint32_t slot, bool first);  // a token was sampled: TTFT or time per token
  void drop_cancelled();
  void step();
  void run_images();  // the images whose tokens are next in their sequences, each in steps of its own
  void round();       // one pass of the loop: captures, embeddings, admissions and a forward step
  void fail_running(const std::string& why);
  void lose_device(const std::string& why);  // fails everything and stops for good
  // Ends the queued requests with `last` and the waiting captures with `job_error` (mutex held).
  void fail_waiting(const GenerationEvent& last, std::exception_ptr job_error);
  void record_tokens(uint64_t n);
  void publish_slots();  // slot_states_ from slots_ (mutex held)

  Engine& engine_;
  SchedulerOptions options_;
  std::vector<Slot> slots_;
  std::vector<uint32_t> order_;  // running slots in admission order (prefill is first come, first served)
  Batch batch_;
  uint64_t clock_ = 0;

  mutable std::mutex mutex_;  // guards queue_, attention_, embed_, accepting_, stopping_ and stats_
  std::condition_variable wake_;
  std::deque<Waiting> queue_;
  std::deque<std::shared_ptr<AttentionJob>> attention_;  // attention captures waiting for an idle slot
  std::deque<std::shared_ptr<EmbedJob>> embed_;          // embedding jobs waiting for idle slots
  bool accepting_ = true, stopping_ = false;
  SchedulerStats stats_;
  std::string fault_;  // why the device was lost; "" while it is not
  InjectedFault inject_ = InjectedFault::from_env();
  std::vector<SlotState> slot_states_;
  std::deque<std::pair<std::chrono::steady_clock::time_point, uint64_t>> recent_;  // for generation_tps
  std::thread thread_;
};

}  // namespace vkllm
