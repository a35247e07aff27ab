// `vkllm logits [-m MODEL] --tokens 1,2,3 [--all] [--cpu] [--check] [--out FILE]`: the logits of
// the last (or every) position as text, one position per line; --cpu runs the CPU reference
// model; --check runs it beside the GPU and names the first layer and activation that diverge
// (a table of every activation's NMSE on stderr; an error when one passes the bound).
#include <fmt/format.h>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <memory>
#include <optional>

#include "commands.h"
#include "error.h"
#include "model_options.h"
#include "output.h"
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

// Both paths check the ids against the model's vocabulary and the context before any work.
ModelPlan checked_plan(const LogitsOptions& o, const std::vector<int32_t>& ids) {
  ModelPlan plan = plan_model(o.model);
  check_token_ids(ids, plan.config.vocab_size);
  ENSURE(ids.size() <= plan.n_ctx,
         fmt::format("{} do not fit a context of {} (use --ctx)", count(ids.size(), "token"), plan.n_ctx));
  return plan;
}

std::vector<float> gpu_logits(const LogitsOptions& o, const std::vector<int32_t>& ids) {
  std::optional<CheckReport> bad;
  LoadedModel m = load_model(checked_plan(o, ids), o.model, false, 1, [&](const CheckReport& r) {
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
  ModelPlan plan = checked_plan(o, ids);
  // The reference stores its K/V rows as the GPU's cache would (--kv-type), so the two agree.
  std::vector<float> all = ref::Model(*plan.file, plan.config, kv_type_named(o.model.kv_type)).forward(ids);
  if (o.all) return all;
  return {all.end() - plan.config.vocab_size, all.end()};
}

void print_logits(const LogitsOptions& o, const std::vector<float>& logits, size_t rows) {
  std::FILE* f = o.out.empty() ? stdout : std::fopen(o.out.c_str(), "w");
  ENSURE(f, fmt::format("{}: cannot write: {}", o.out, std::strerror(errno)));
  std::unique_ptr<std::FILE, int (*)(std::FILE*)> closer(f == stdout ? nullptr : f, std::fclose);
  size_t vocab = logits.size() / rows;
  std::string line;
  for (size_t r = 0; r < rows; ++r) {
    line.clear();
    for (size_t i = 0; i < vocab; ++i)
      fmt::format_to(std::back_inserter(line), "{}{:.9g}", i ? " " : "", logits[r * vocab + i]);
    line += '\n';
    if (f == stdout) {
      write_stdout(line);
      continue;
    }
    ENSURE(std::fwrite(line.data(), 1, line.size(), f) == line.size(),
           fmt::format("{}: cannot write: {}", o.out, std::strerror(errno)));
  }
  ENSURE(f == stdout || std::fflush(f) == 0, fmt::format("{}: cannot write: {}", o.out, std::strerror(errno)));
}

}  // namespace

void add_logits_command(CLI::App& app) {
  auto* cmd = app.add_subcommand("logits", "Print the logits of a token sequence");
  auto o = std::make_shared<LogitsOptions>();
  add_model_options(cmd, o->model);
  cmd->add_option("--tokens", o->tokens, "Token ids, separated by commas or spaces")->type_name("IDS")->required();
  cmd->add_flag("--all", o->all, "Every position, one per line (default: the last)");
  cmd->add_flag("--cpu", o->cpu, "Compute with the CPU reference model instead of the GPU");
  cmd->add_flag("--check", o->model.check,
                "Run the CPU reference beside the GPU and name the first layer and activation that diverge");
  cmd->add_option("--out", o->out, "Write to this file instead of stdout")->type_name("FILE")->check(non_empty);
  cmd->callback([o] {
    std::vector<int32_t> ids = parse_token_list(o->tokens);
    std::vector<float> logits = o->cpu ? cpu_logits(*o, ids) : gpu_logits(*o, ids);
    print_logits(*o, logits, o->all ? ids.size() : 1);
  });
}

}  // namespace vkllm::cli
