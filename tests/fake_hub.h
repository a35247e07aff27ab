// A stand-in for the Hugging Face hub on loopback (tests/fake_hub.py, Debian's python3), which
// `vkllm pull` and -hf reach through HF_ENDPOINT: the model API, resolve redirects, byte ranges,
// and the faults the tests ask for (a gated repository, a dropped connection, a corrupted byte).
#pragma once
#include <sys/types.h>

#include <cstddef>
#include <cstdint>
#include <map>
#include <string>
#include <vector>

namespace vkllm::test {

struct HubFile {
  std::string path;  // in the repository
  std::vector<std::byte> bytes;
  bool lfs = true;  // listed with an LFS SHA-256
};

struct HubRepo {
  std::string name;  // USER/REPO
  std::vector<HubFile> files;
  std::string token;  // non-empty: gated, needs "Authorization: Bearer <token>"
};

struct HubFaults {
  std::map<std::string, uint64_t> drop_once;     // "USER/REPO/PATH" -> the connection drops after these bytes
  std::map<std::string, uint64_t> corrupt_once;  // "USER/REPO/PATH" -> this byte is flipped, once
  std::map<std::string, double> slow_once;       // "USER/REPO/PATH" -> seconds between 16 KiB pieces, once
  size_t page_size = 1000;                       // file-list entries per page (Link: rel="next")
};

class FakeHub {
 public:
  // Whether python3 is there to play the hub; a test without it calls skip() and returns.
  static bool available();
  // Starts the hub, with a fresh cache folder for vkllm.
  FakeHub(const std::vector<HubRepo>& repos, const HubFaults& faults = {});
  ~FakeHub();
  FakeHub(const FakeHub&) = delete;

  std::string endpoint() const { return endpoint_; }
  std::string cache() const { return dir_ + "/cache"; }
  // "HF_ENDPOINT=... VKLLM_CACHE=...": the environment run_vkllm prefixes.
  std::string env() const { return "HF_ENDPOINT=" + endpoint_ + " VKLLM_CACHE=" + cache() + " HF_TOKEN="; }
  // The same as NAME=VALUE settings, for PtySession.
  std::vector<std::string> env_list() const {
    return {"HF_ENDPOINT=" + endpoint_, "VKLLM_CACHE=" + cache(), "HF_TOKEN="};
  }
  // The requests so far, one line each: "GET <path> range=<Range or -> auth=<yes|no>".
  std::vector<std::string> requests() const;

 private:
  std::string dir_, endpoint_;
  pid_t pid_ = -1;
};

}  // namespace vkllm::test
