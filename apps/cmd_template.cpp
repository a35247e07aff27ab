// `vkllm template [-m MODEL] [--template FILE] --messages FILE [--tools FILE] [--bos-token S]
// [--eos-token S] [--no-generation-prompt]`: prints the prompt a chat template renders for a
// conversation, exactly (no newline added). With -m (or the default model) the template and the
// bos/eos texts come from the model; --template and the token flags override them.
#include <cstdio>

#include "commands.h"
#include "error.h"
#include "model_options.h"
#include "output.h"
#include "text/chat_template.h"

namespace vkllm::cli {

namespace {

struct TemplateOptions {
  ModelOptions model;
  std::string template_file, messages_file, tools_file;
  std::optional<std::string> bos, eos;
  bool no_generation_prompt = false;
};

nlohmann::ordered_json read_json(const std::string& path) {
  try {
    return nlohmann::ordered_json::parse(read_text_file(path));
  } catch (const nlohmann::json::exception& e) {
    throw Error(path + ": not valid JSON (" + e.what() + ")");
  }
}

void render(const TemplateOptions& o) {
  ChatTemplate model_template = ChatTemplate::from_gguf(open_model(o.model));
  ChatTemplate t = o.template_file.empty() ? model_template : ChatTemplate::parse(read_text_file(o.template_file));
  ChatTemplate::Options opts{.bos_token = o.bos.value_or(model_template.bos_token()),
                             .eos_token = o.eos.value_or(model_template.eos_token()),
                             .add_generation_prompt = !o.no_generation_prompt};
  if (!o.tools_file.empty()) opts.tools = read_json(o.tools_file);
  std::string prompt = t.render(read_json(o.messages_file), opts);
  write_stdout(prompt);
}

}  // namespace

void add_template_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("template", "Print the prompt a chat template renders for a conversation");
  auto o = std::make_shared<TemplateOptions>();
  add_model_options(cmd, o->model, false);
  cmd->add_option("--template", o->template_file, "Jinja2 template file (default: the model's)")
      ->type_name("FILE")
      ->check(non_empty);
  cmd->add_option("--messages", o->messages_file, "JSON file: an array of {role, content} messages; -: standard input")
      ->type_name("FILE")
      ->required()
      ->check(non_empty);
  cmd->add_option("--tools", o->tools_file, "JSON file: an array of tool definitions")
      ->type_name("FILE")
      ->check(non_empty);
  cmd->add_option("--bos-token", o->bos, "Text of bos_token (default: the model's)")->type_name("TEXT");
  cmd->add_option("--eos-token", o->eos, "Text of eos_token (default: the model's)")->type_name("TEXT");
  cmd->add_flag("--no-generation-prompt", o->no_generation_prompt, "Render without the assistant's opening");
  add_jinja_flag(cmd);
  cmd->callback([o] { render(*o); });
}

}  // namespace vkllm::cli
