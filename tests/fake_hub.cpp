// Starting and stopping tests/fake_hub.py.
#include "fake_hub.h"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "catch.h"

namespace vkllm::test {

namespace fs = std::filesystem;

bool FakeHub::available() { return !std::string(VKLLM_PYTHON3).empty() && access(VKLLM_PYTHON3, X_OK) == 0; }

FakeHub::FakeHub(const std::vector<HubRepo>& repos, const HubFaults& faults) {
  std::string python = VKLLM_PYTHON3;
  REQUIRE(available());
  char tmpl[] = "/tmp/vkllm_hub_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  dir_ = tmpl;
  nlohmann::json config = {{"log", dir_ + "/requests.log"}, {"page_size", faults.page_size},
                           {"drop_once", faults.drop_once}, {"corrupt_once", faults.corrupt_once},
                           {"slow_once", faults.slow_once}, {"repos", nlohmann::json::object()}};
  int n = 0;
  for (const HubRepo& r : repos) {
    nlohmann::json files = nlohmann::json::array();
    for (const HubFile& f : r.files) {
      std::string local = dir_ + "/file" + std::to_string(n++);
      std::ofstream(local, std::ios::binary)
          .write(reinterpret_cast<const char*>(f.bytes.data()), std::streamsize(f.bytes.size()));
      files.push_back({{"path", f.path}, {"file", local}, {"lfs", f.lfs}});
    }
    config["repos"][r.name] = {{"files", files}};
    if (!r.token.empty()) config["repos"][r.name]["token"] = r.token;
  }
  std::ofstream(dir_ + "/config.json") << config.dump();
  std::ofstream(dir_ + "/requests.log");
  int out[2];
  REQUIRE(pipe(out) == 0);
  pid_ = fork();
  REQUIRE(pid_ >= 0);
  if (pid_ == 0) {
    dup2(out[1], STDOUT_FILENO);
    close(out[0]), close(out[1]);
    std::string script = std::string(VKLLM_SOURCE_DIR) + "/tests/fake_hub.py", cfg = dir_ + "/config.json";
    execl(python.c_str(), python.c_str(), script.c_str(), cfg.c_str(), nullptr);
    _exit(127);
  }
  close(out[1]);
  std::string line;
  pollfd p{.fd = out[0], .events = POLLIN, .revents = 0};
  char c = 0;
  while (line.find('\n') == std::string::npos && poll(&p, 1, 20000) > 0 && read(out[0], &c, 1) == 1) line += c;
  close(out[0]);
  REQUIRE(line.starts_with("port "));
  endpoint_ = "http://127.0.0.1:" + line.substr(5, line.size() - 6);
}

FakeHub::~FakeHub() {
  if (pid_ > 0) {
    kill(pid_, SIGTERM);
    waitpid(pid_, nullptr, 0);
  }
  std::error_code ec;
  if (!dir_.empty()) fs::remove_all(dir_, ec);
}

std::vector<std::string> FakeHub::requests() const {
  std::ifstream in(dir_ + "/requests.log");
  std::vector<std::string> out;
  for (std::string l; std::getline(in, l);) out.push_back(l);
  return out;
}

}  // namespace vkllm::test
