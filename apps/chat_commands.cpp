// Slash commands of `vkllm chat`.
#include "chat_commands.h"

#include <fmt/format.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <limits>
#include <map>
#include <sstream>

#include "error.h"
#include "gguf/reader.h"
#include "image/image_decode.h"
#include "output.h"
#include "text/template_family.h"

namespace vkllm::cli {

const char* const kChatCommandsHelp =
    "  /? or /help                  this list\n"
    "  /bye or /exit                leave (as Ctrl-D, or Ctrl-C at an empty prompt)\n"
    "  /clear or /reset             forget the conversation (the system message stays)\n"
    "  /set NAME VALUE              temperature, top_p, top_k, min_p, seed, repeat_penalty,\n"
    "                               repeat_last_n, n_predict, context (reloads the model);\n"
    "                               /set system TEXT; /set verbose, /set quiet; Ollama's\n"
    "                               /set parameter NAME VALUE (num_ctx, num_predict) too\n"
    "  /show model|template|settings|system\n"
    "                               the model, its chat template, the sampling settings\n"
    "  /save FILE, /load FILE       the conversation as OpenAI messages JSON\n"
    "  /image FILE                  an image for the next message (JPEG, PNG, GIF, BMP, WebP;\n"
    "                               needs --mmproj, the model's projector)\n"
    "  \"\"\" ... \"\"\"                  a message of several lines (or end a line with \\)\n"
    "  Ctrl-C                       stop the reply; the conversation keeps what came\n";

// --- the state

void ChatState::start() {
  ModelPlan plan = plan_model(model_options);
  check_context_fits(plan, fmt::format("--ctx {}", plan.n_ctx));
  projector = open_projector(model_options, plan.config.dim);
  model = load_model(std::move(plan), model_options);
  sampler = std::make_unique<Sampler>(sampling);
  start_session(nlohmann::ordered_json::array());
}

void ChatState::start_session(const nlohmann::ordered_json& messages) {
  if (projector.file && !encoder)
    encoder = std::make_unique<VisionEncoder>(*model.ctx, *projector.file, *projector.config);
  session = std::make_unique<ChatSession>(*model.engine, *sampler, ChatTemplate::from_gguf(*model.file), system);
  session->set_encoder(encoder.get());
  if (!messages.empty()) session->set_messages(messages);
}

// A failed reload tries the old context again; without a model the chat cannot go on, so a
// second failure ends it (std::runtime_error: not a turn's vkllm::Error).
void ChatState::reload(uint32_t ctx) {
  ModelOptions next = model_options;
  next.ctx = ctx;
  ModelPlan plan = plan_model(next);  // checked while the old model still runs
  check_context_fits(plan, fmt::format("/set context {}", plan.n_ctx));
  nlohmann::ordered_json messages = session->messages();
  uint32_t old = model_options.ctx;
  session.reset();
  encoder.reset();
  model = {};  // the GPU memory goes before the new model comes
  model_options.ctx = ctx;
  try {
    model = load_model(std::move(plan), model_options);
    start_session(messages);
  } catch (const Error& e) {
    model_options.ctx = old;
    try {
      model = load_model(model_options);
    } catch (const std::exception& again) {
      throw std::runtime_error(again.what());
    }
    start_session(messages);
    throw;
  }
}

uint32_t ChatState::max_tokens() const { return gen.n_predict < 0 ? UINT32_MAX : uint32_t(gen.n_predict); }

// --- /set

namespace {

void note(const std::string& s) { std::fprintf(stderr, "%s\n", s.c_str()); }

// Checks a value as the flag of the same meaning checks it ("'abc' is not a number >= 0").
std::string checked(const std::string& name, std::string value, const CLI::Validator& v) {
  std::string err = v(value);
  ENSURE(err.empty(), fmt::format("/set {}: {}", name, err));
  return value;
}

void set_value(ChatState& st, std::string name, const std::string& value) {
  static const std::map<std::string, std::string> ollama = {{"num_ctx", "context"}, {"num_predict", "n_predict"}};
  if (auto it = ollama.find(name); it != ollama.end()) name = it->second;
  SamplerOptions& s = st.sampling;
  constexpr int64_t kInt = std::numeric_limits<int32_t>::max();
  if (name == "temperature")
    s.temperature = std::stof(checked(name, value, real_range(Bound{0})));
  else if (name == "top_p")
    s.top_p = std::stof(checked(name, value, real_range(Bound{0, true}, Bound{1})));
  else if (name == "top_k")
    s.top_k = std::stoi(checked(name, value, int_range(0, kInt)));
  else if (name == "min_p")
    s.min_p = std::stof(checked(name, value, real_range(Bound{0}, Bound{1, true})));
  else if (name == "repeat_penalty")
    s.repeat_penalty = std::stof(checked(name, value, real_range(Bound{0, true})));
  else if (name == "repeat_last_n")
    s.repeat_last_n = std::stoi(checked(name, value, int_range(0, kInt)));
  else if (name == "seed")
    st.gen.seed = std::stoll(checked(name, value, int_range(-1))), s.seed = sampler_options(st.gen).seed;
  else if (name == "n_predict")
    st.gen.n_predict = std::stoi(checked(name, value, int_range(-1, kInt)));
  else if (name != "context")
    throw Error(fmt::format("/set {}: not a setting (/? lists them)", name));
  if (name == "context") {
    st.reload(uint32_t(std::stoul(checked(name, value, int_range(0, 1 << 20)))));
    return note(
        fmt::format("Set context to {} (the model was loaded again).", count(st.model.engine->n_ctx(), "token")));
  }
  *st.sampler = Sampler(s);
  note(fmt::format("Set {} to {}.", name, value));
}

void set(ChatState& st, const std::string& args) {
  std::istringstream in(args);
  std::string name, value;
  in >> name;
  if (name == "parameter") in >> name;
  if (name == "system") {
    std::string text = args.substr(std::min(args.size(), args.find("system") + 6));
    text.erase(0, text.find_first_not_of(' '));
    st.system = text;
    st.session->set_system(text);
    return note(text.empty() ? "Removed the system message." : "Set the system message.");
  }
  if (name == "verbose" || name == "quiet") {
    st.verbose = name == "verbose";
    return note(st.verbose ? "Set verbose: statistics after every reply." : "Set quiet.");
  }
  std::getline(in >> std::ws, value);
  ENSURE(!name.empty() && !value.empty(), "/set NAME VALUE (/? lists the names)");
  set_value(st, name, value);
}

// --- /show

std::string settings_text(const ChatState& st) {
  const SamplerOptions& s = st.sampling;
  return fmt::format(
      "temperature     {}\ntop_p           {}\ntop_k           {}\nmin_p           {}\nrepeat_penalty  {}\n"
      "repeat_last_n   {}\nseed            {}\nn_predict       {}\ncontext         {} tokens\nsystem          {}\n",
      s.temperature, s.top_p, s.top_k, s.min_p, s.repeat_penalty, s.repeat_last_n, s.seed, st.gen.n_predict,
      st.model.engine->n_ctx(), st.system.empty() ? "(none)" : st.system);
}

std::string model_text(const ChatState& st) {
  const Engine& e = *st.model.engine;
  const ChatTemplate& t = st.session->chat_template();
  return fmt::format(
      "model           {}\narchitecture    {}\nlayers          {}\ncontext         {} tokens (trained "
      "with {})\nkv cache        {}\ndevice          {}\ntemplate        {}\n",
      st.model.file->name(), e.config().arch_name, e.config().n_layers, e.n_ctx(), e.config().seq_len,
      info(e.kv_cache().type()).name, st.model.ctx->caps().name,
      t.is_fallback() ? "none in the file: ChatML" : chat_template_family(t.source()));
}

void show(const ChatState& st, const std::string& what) {
  if (what == "model" || what == "info") return write_stdout(model_text(st));
  if (what == "settings" || what == "parameters") return write_stdout(settings_text(st));
  if (what == "system") return write_stdout((st.system.empty() ? "(no system message)" : st.system) + "\n");
  if (what == "template") {
    const std::string& src = st.session->chat_template().source();
    return write_stdout(src + (src.ends_with("\n") ? "" : "\n"));
  }
  throw Error("/show model|template|settings|system");
}

// --- /save and /load

void save(const ChatState& st, const std::string& path) {
  ENSURE(!path.empty(), "/save FILE");
  std::ofstream out(path, std::ios::binary | std::ios::trunc);
  out << st.session->messages().dump(2, ' ', false, nlohmann::json::error_handler_t::replace) << "\n";
  out.close();
  ENSURE(out.good(), fmt::format("/save {}: cannot write: {}", path, std::strerror(errno)));
  note(fmt::format("Saved {} to {}.", count(st.session->messages().size(), "message"), path));
}

void load(ChatState& st, const std::string& path) {
  ENSURE(!path.empty(), "/load FILE");
  nlohmann::ordered_json j;
  try {
    j = nlohmann::ordered_json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(fmt::format("{}: not JSON ({})", path, e.what()));
  }
  if (j.is_object() && j.contains("messages")) j = j["messages"];  // a chat completion request
  try {
    st.session->set_messages(j);
  } catch (const Error& e) {
    throw Error(fmt::format("{}: {}", path, e.what()));
  }
  const auto& m = st.session->messages();
  st.system = !m.empty() && m[0]["role"] == "system" ? m[0]["content"].get<std::string>() : "";
  note(fmt::format("Loaded {} from {}.", count(m.size(), "message"), path));
}

// /image FILE: decoded and sized now, so a bad file is said at once; it joins the next message.
void image(ChatState& st, const std::string& path) {
  ENSURE(!path.empty(), "/image FILE");
  ENSURE(st.encoder, "/image needs the model's projector: start vkllm chat with --mmproj FILE (its mmproj-*.gguf)");
  VisionInput in = preprocess_image(load_image_file(path), *st.projector.config);
  note(fmt::format("Image {} ({}): it goes with your next message.", path, count(in.grid.tokens(), "token")));
  st.session->add_image(std::move(in));
}

}  // namespace

ChatCommand run_chat_command(ChatState& st, const std::string& line) {
  size_t space = line.find(' ');
  std::string cmd = line.substr(0, space);
  std::string args = space == std::string::npos ? "" : line.substr(space + 1);
  while (!args.empty() && args.back() == ' ') args.pop_back();
  args.erase(0, args.find_first_not_of(' ') == std::string::npos ? args.size() : args.find_first_not_of(' '));
  if (cmd == "/bye" || cmd == "/exit") return ChatCommand::Exit;
  if (cmd == "/?" || cmd == "/help")
    write_stdout(std::string("Commands:\n") + kChatCommandsHelp);
  else if (cmd == "/clear" || cmd == "/reset")
    st.session->reset(), note("(conversation cleared)");
  else if (cmd == "/set")
    set(st, args);
  else if (cmd == "/show")
    show(st, args);
  else if (cmd == "/save")
    save(st, args);
  else if (cmd == "/load")
    load(st, args);
  else if (cmd == "/image")
    image(st, args);
  else
    throw Error(fmt::format("unknown command '{}' (/? lists the commands)", printable(cmd)));
  return ChatCommand::Continue;
}

}  // namespace vkllm::cli
