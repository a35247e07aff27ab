// `vkllm logits [-m MODEL] --tokens 1,2,3 [--all] [--cpu] [--check] [--out FILE]`: the logits of
// the last (or every) position as text, one position per line; --cpu runs the CPU reference
// model; --check runs it beside the GPU and names the first layer and activation that diverge
// (a table of every activation's NMSE on stderr; an error when one passes the bound).
#include <fmt/format.h>
#include <cstdio>
#include <memory>
#include <optional>

#include "commands.h"
#include "error.h"
#include "model_options.h"
#include "reference/model.h"

namespace vkllm::cli {

namespace {

struct LogitsOptions {
  ModelOptions model;
  std::string tokens, out;
  bool all = false, cpu = false;
};

void print_report(const CheckReport& r) {
  for (size_t i = 0; i < r.rows.size(); ++i) {
    const CheckReport::Row& row = r.rows[i];
    std::fprintf(stderr, "check %5s %-16s nmse %.3e%s\n", row.layer < 0 ? "-" : std::to_string(row.layer).c_str(),
                 row.name.c_str(), row.nmse, int(i) == r.first_bad ? "  <- first divergence" : "");
  }
}

std::vector<float> gpu_logits(const LogitsOptions& o, const std::vector<int32_t>& ids) {
  std::optional<CheckReport> bad;
  LoadedModel m = load_model(o.model, false, [&](const CheckReport& r) {
    if (o.model.check) print_report(r);
    std::fprintf(stderr, "%s\n", r.summary().c_str());
    if (r.first_bad >= 0 && !bad) bad = r;
  });
  std::vector<float> out;
  if (o.all) {
    out = m.engine->eval_all(ids);
  } else {
    auto last = m.engine->eval(ids);
    out.assign(last.begin(), last.end());
  }
  if (bad) throw Error(bad->summary());
  return out;
}

std::vector<float> cpu_logits(const LogitsOptions& o, const std::vector<int32_t>& ids) {
  GgufFile file = open_model(o.model.path);
  ModelConfig config = ModelConfig::from_gguf(file);
  std::vector<float> all = ref::Model(file, config).forward(ids);
  if (o.all) return all;
  return {all.end() - config.vocab_size, all.end()};
}

void print_logits(const LogitsOptions& o, const std::vector<float>& logits, size_t rows) {
  std::FILE* f = o.out.empty() ? stdout : std::fopen(o.out.c_str(), "w");
  ENSURE(f, "cannot write " + o.out);
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f == stdout ? nullptr : f, std::fclose);
  size_t vocab = logits.size() / rows;
  std::string line;
  for (size_t r = 0; r < rows; ++r) {
    line.clear();
    for (size_t i = 0; i < vocab; ++i)
      fmt::format_to(std::back_inserter(line), "{}{:.9g}", i ? " " : "", logits[r * vocab + i]);
    line += '\n';
    ENSURE(std::fwrite(line.data(), 1, line.size(), f) == line.size(),
           "cannot write " + (o.out.empty() ? "stdout" : o.out));
  }
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Print the logits of a token sequence");
  auto o = std::make_shared<LogitsOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("--tokens", o->tokens, "Token ids, separated by commas")->required();
  cmd->add_flag("--all", o->all, "Every position, one per line (default: the last)");
  cmd->add_flag("--cpu", o->cpu, "Compute with the CPU reference model instead of the GPU");
  cmd->add_flag("--check", o->model.check,
                "Run the CPU reference beside the GPU and name the first layer and activation that diverge");
  cmd->add_option("--out", o->out, "Write to this file instead of stdout");
  cmd->callback([o] {
    std::vector<int32_t> ids = parse_token_list(o->tokens);
    std::vector<float> logits = o->cpu ? cpu_logits(*o, ids) : gpu_logits(*o, ids);
    print_logits(*o, logits, o->all ? ids.size() : 1);
  });
}

}  // namespace vkllm::cli
