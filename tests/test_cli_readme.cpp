// README's "The command line" section against the program itself: every command and every option
// that `--help` lists is documented there, and every option the section names exists.
#include <fmt/format.h>

#include <fstream>
#include <regex>
#include <set>
#include <sstream>

#include "catch.h"
#include "cli.h"

using vkllm::test::run_vkllm;

namespace {

std::string readme_section() {
  std::ifstream in(VKLLM_SOURCE_DIR "/README.md");
  std::stringstream ss;
  ss << in.rdbuf();
  std::string all = ss.str();
  size_t start = all.find("## The command line");
  REQUIRE(start != std::string::npos);
  return all.substr(start, all.find("\n## ", start + 1) - start);
}

// The commands `vkllm --help` lists.
std::vector<std::string> commands() {
  std::string help = run_vkllm("--help").out;
  std::vector<std::string> out;
  std::istringstream in(help.substr(help.find("Subcommands:")));
  std::string line;
  while (std::getline(in, line))
    if (line.starts_with("  ") && line.size() > 2 && line[2] != ' ')
      out.push_back(line.substr(2, line.find(' ', 2) - 2));
  return out;
}

// Every option name in one command's help ("-c,--ctx-size,--ctx N" gives three).
std::set<std::string> options(const std::string& command) {
  std::string help = run_vkllm(command + " --help").out;
  std::set<std::string> out;
  std::istringstream in(help.substr(help.find("Options:")));
  std::string line;
  std::regex name(R"(-{1,2}[a-z][a-z0-9-]*)");
  while (std::getline(in, line)) {
    if (!line.starts_with("  -")) continue;
    std::string names = line.substr(2, line.find(' ', 2) - 2);
    for (std::sregex_iterator it(names.begin(), names.end(), name), end; it != end; ++it) out.insert(it->str());
  }
  return out;
}

}  // namespace

TEST_CASE("README's command-line section documents every command and option --help lists", "[cli-readme]") {
  std::string readme = readme_section();
  std::set<std::string> all = options("");  // --version
  all.insert("-ngl");                       // the one option CLI11 cannot name, documented by hand
  std::vector<std::string> cmds = commands();
  REQUIRE(cmds.size() >= 8);
  for (const std::string& c : cmds) {
    INFO(c);
    CHECK(readme.find("    vkllm " + c + " ") != std::string::npos);
    for (const std::string& o : options(c)) {
      all.insert(o);
      if (o == "-h" || o == "--help") continue;
      INFO(o);
      CHECK(std::regex_search(readme, std::regex("[^a-z-]" + o + "[^a-z-]")));
    }
  }
  // And nothing the section names is gone: every --option in it (up to vkllm-bench's paragraph)
  // is one of the program's.
  std::string own = readme.substr(0, readme.find("Kernel benchmarks"));
  std::regex long_option(R"((^|[^a-z-])(--[a-z][a-z0-9-]+))");
  for (std::sregex_iterator it(own.begin(), own.end(), long_option), end; it != end; ++it) {
    INFO((*it)[2].str());
    CHECK(all.count((*it)[2].str()) == 1);
  }
}
