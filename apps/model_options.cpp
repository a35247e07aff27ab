// Opening, checking and loading models for the subcommands.
#include "model_options.h"

#include <fmt/format.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <sstream>

#include "default_model.h"
#include "error.h"
#include "graph/weights.h"
#include "hub/hub.h"
#include "interrupt.h"
#include "output.h"
#include "spirv.h"
#include "text/chat_template.h"
#include "text/tokenizer.h"

namespace vkllm::cli {

namespace {

// -hf: from the cache, or downloaded into it (with the repository's projector unless --no-mmproj).
// Ctrl-C stops the download (kept for a resume).
hub::PulledModel hub_model(const ModelOptions& o) {
  hub::HubSettings settings = hub::HubSettings::from_environment();
  std::optional<hub::HubRef> ref = hub::parse_hub_ref(o.hf_repo);
  ENSURE(ref, fmt::format("-hf {}: not USER/REPO[:QUANT]", o.hf_repo));
  SigintScope sigint;
  try {
    return hub::obtain(settings, {*ref, o.hf_file},
                       {.terminal = bool(isatty(STDERR_FILENO)), .cancelled = interrupted, .mmproj = !o.no_mmproj});
  } catch (const hub::Interrupted& e) {
    std::fprintf(stderr, "interrupted: %s\n", e.what());
    throw CLI::RuntimeError(130);
  }
}

bool is_file(const std::string& path) {
  struct stat st {};
  return stat(path.c_str(), &st) == 0 && !S_ISDIR(st.st_mode);
}

}  // namespace

std::string model_path(const ModelOptions& o) {
  if (!o.hf_repo.empty()) return hub_model(o).paths[0].string();
  if (o.path.empty() || is_file(o.path)) return o.path;
  std::optional<hub::ModelName> name = hub::parse_model_name(o.path);
  if (!name || (o.path.ends_with(".gguf") && name->file.empty())) return o.path;  // the reader says what is wrong
  if (auto cached = hub::find_cached(hub::HubSettings::from_environment(), *name)) return (*cached)[0].string();
  throw Error(
      fmt::format("{}: no such file, and no downloaded model of that name (vkllm pull {} downloads it; vkllm "
                  "list shows what is here)",
                  o.path, o.path));
}

std::string mmproj_path(const ModelOptions& o) {
  if (!o.mmproj.empty() || o.no_mmproj || o.hf_repo.empty()) return o.mmproj;
  return hub_model(o).mmproj.string();  // from the cache, which model_path filled
}

bool names_model(const std::string& word) {
  if (is_file(word) || word.ends_with(".gguf")) return true;
  std::optional<hub::ModelName> name = hub::parse_model_name(word);
  if (!name) return false;
  if (!name->ref.tag.empty()) return true;  // USER/REPO:QUANT is no prompt: model_path says if it is not pulled
  try {
    return hub::find_cached(hub::HubSettings::from_environment(), *name).has_value();
  } catch (const Error&) {  // no cache folder: then no pulled model either
    return false;
  }
}

GgufFile open_model(const ModelOptions& o) {
  std::string path = model_path(o);
  if (path.empty()) return GgufFile::parse(default_model_bytes(), "default model");
  return GgufFile::open(path);
}

DType kv_type_named(const std::string& name) {
  std::optional<DType> t = dtype_named(name);
  ENSURE(t && (*t == DType::F16 || *t == DType::F32 || *t == DType::Q8_0 || *t == DType::Q4_0),
         fmt::format("--kv-type {}: f16, f32, q8_0 or q4_0", name));
  return *t;
}

ModelPlan plan_model(const ModelOptions& o) {
  ModelPlan p;
  p.file = std::make_unique<GgufFile>(open_model(o));
  p.config = ModelConfig::from_gguf(*p.file);
  check_weight_types(*p.file);
  p.n_ctx = o.ctx ? o.ctx : default_context(p.config);
  if (o.ctx > p.config.seq_len)
    p.warnings.push_back(fmt::format("--ctx {} is more than the {} tokens {} was trained with; text past that degrades",
                                     o.ctx, p.config.seq_len, p.file->name()));
  return p;
}

uint32_t shortest_request(const GgufFile& f) {
  Tokenizer tok = Tokenizer::from_gguf(f);
  uint32_t least = uint32_t(tok.encode("x", true).size()) + 1;
  try {
    ChatTemplate t = ChatTemplate::from_gguf(f);
    ChatTemplate::Options opt{.bos_token = t.bos_token(), .eos_token = t.eos_token()};
    std::string text = t.render(nlohmann::ordered_json::array({{{"role", "user"}, {"content", "x"}}}), opt);
    least = std::max(least, uint32_t(tok.encode(text, true, true).size()) + 1);
  } catch (const Error&) {  // a template that does not render: no chat, said where chat is asked for
  }
  return least;
}

void check_context_fits(const ModelPlan& p, const std::string& what) {
  uint32_t least = shortest_request(*p.file);
  ENSURE(p.n_ctx >= least, fmt::format("{} is less than the {} tokens the shortest request needs (a chat template's "
                                       "frame around one token, and one token of reply)",
                                       what, least));
}

namespace {

// With no --ctx, a default context whose KV cache would not fit beside the weights shrinks to one
// that does (fitted_context), and says so once loaded.
void fit_default_context(ModelPlan& plan, const GgufFile& file, const Context& ctx, const ModelOptions& o,
                         uint32_t slots) {
  UsableMemory usable = usable_memory(ctx.caps(), ctx.memory_limit());
  uint32_t n = fitted_context(file, plan.config, o.batch, kv_type_named(o.kv_type), std::max(1u, slots), usable.bytes,
                              ctx.caps(), ctx.profile());
  if (n >= plan.n_ctx) return;
  plan.warnings.push_back(
      fmt::format("context {} tokens{}: the default {} does not fit beside the weights in the {} {} (--ctx sets it)", n,
                  slots > 1 ? fmt::format(" per slot x {}", slots) : "", plan.n_ctx, human_bytes(double(usable.bytes)),
                  usable.limited ? "of VKLLM_MEMORY_LIMIT" : fmt::format("{} may use", ctx.caps().name)));
  plan.n_ctx = n;
}

// The device, its driver's version and pipeline-cache UUID, and a hash of every embedded kernel:
// what the driver's own shader cache (Mesa's, NVIDIA's) keys compiled kernels by, near enough.
// vkllm keeps no VkPipelineCache of its own: on lavapipe its data is a 32-byte header and the
// second run was no faster with it (docs/decisions.md "First use").
std::string compiled_kernels_name(const Context& ctx) {
  VkPhysicalDeviceProperties p{};
  vkGetPhysicalDeviceProperties(ctx.physical_device(), &p);
  uint64_t hash = 1469598103934665603ull;  // FNV-1a
  for (const spirv::Shader* s : spirv::all)
    for (uint32_t word : s->code) hash = (hash ^ word) * 1099511628211ull;
  std::string uuid;
  for (uint8_t b : p.pipelineCacheUUID) uuid += fmt::format("{:02x}", b);
  return fmt::format("{:04x}-{:04x}-{:x}-{}-{:016x}", p.vendorID, p.deviceID, p.driverVersion, uuid, hash);
}

}  // namespace

LoadedModel load_model(ModelPlan plan, const ModelOptions& o, bool profiling, uint32_t slots,
                       std::function<void(const CheckReport&)> on_check) {
  LoadedModel m;
  m.file = std::move(plan.file);
  m.ctx = std::make_unique<Context>(ContextOptions{.device = o.device});
  try {
    m.compiled_marker = hub::HubSettings::from_environment().cache / "compiled" / compiled_kernels_name(*m.ctx);
    std::error_code ec;
    m.first_use = !std::filesystem::exists(m.compiled_marker, ec);
  } catch (const Error&) {  // no cache folder can be named: nothing is known of earlier runs
  }
  // Small models load in a blink: only weights that take a while show their progress.
  bool show = isatty(STDERR_FILENO) && m.file->file_bytes() >= kLoadProgressBytes;
  auto t0 = std::chrono::steady_clock::now();
  auto last = t0 - std::chrono::seconds(1);
  auto progress = [&](const LoadProgress& p) {
    auto now = std::chrono::steady_clock::now();
    bool done = p.bytes_done >= p.bytes_total;
    if (!show || (!done && now - last < std::chrono::milliseconds(200))) return;
    last = now;
    double seconds = std::chrono::duration<double>(now - t0).count();
    std::string line = load_progress_text(m.file->name(), p.bytes_done, p.bytes_total, seconds);
    std::fprintf(stderr, "\r%s\033[K", line.c_str());
    if (done) std::fprintf(stderr, "\r\033[K");
  };
  if (!o.ctx) fit_default_context(plan, *m.file, *m.ctx, o, slots);
  EngineOptions eo{.n_ctx = plan.n_ctx,
                   .batch = o.batch,
                   .slots = slots,
                   .kv_type = kv_type_named(o.kv_type),
                   .profiling = profiling,
                   .check = o.check || check_requested()};
  if (eo.check)
    eo.on_check = on_check ? std::move(on_check)
                           : [](const CheckReport& r) { std::fprintf(stderr, "%s\n", r.summary().c_str()); };
  m.engine = std::make_unique<Engine>(*m.ctx, *m.file, eo, progress);
  for (const std::string& w : plan.warnings) std::fprintf(stderr, "warning: %s\n", w.c_str());
  return m;
}

LoadedModel load_model(const ModelOptions& o, bool profiling, uint32_t slots,
                       std::function<void(const CheckReport&)> on_check) {
  return load_model(plan_model(o), o, profiling, slots, std::move(on_check));
}

void print_load_line(const LoadedModel& m) {
  MemoryReport mem = m.engine->memory();
  auto size = [](uint64_t b) { return human_bytes(double(b)); };
  std::string staging = mem.staging ? fmt::format(", upload staging {} while loading", size(mem.staging)) : "";
  std::string line = fmt::format("{} on {} (profile {}): weights {}, KV cache {} ({}, {}), activations {}{}",
                                 m.file->name(), m.ctx->caps().name, m.ctx->profile().name, size(mem.weights),
                                 size(mem.kv_cache), count(m.engine->n_ctx(), "token"),
                                 info(m.engine->kv_cache().type()).name, size(mem.activations), staging);
  std::fprintf(stderr, "%s\n", line.c_str());
}

std::vector<int32_t> parse_token_list(const std::string& text) {
  std::vector<int32_t> ids;
  std::string s = text;
  for (char& c : s)
    if (c == ',') c = ' ';
  std::istringstream in(s);
  std::string word;
  while (in >> word) {
    size_t used = 0;
    long v = 0;
    try {
      v = std::stol(word, &used);
    } catch (...) {
      used = 0;
    }
    ENSURE(used == word.size() && v >= INT32_MIN && v <= INT32_MAX, "'" + word + "' is not a token id");
    ids.push_back(int32_t(v));
  }
  ENSURE(!ids.empty(), "no token ids given");
  return ids;
}

}  // namespace vkllm::cli
