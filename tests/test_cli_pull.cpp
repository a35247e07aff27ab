// `vkllm pull`, -hf, list and rm against a loopback stand-in for the Hugging Face hub
// (tests/fake_hub.py through HF_ENDPOINT): the model API, redirects, ranges, a resumed download, a
// corrupted byte, 401/403/404, a split model, and a later -hf that runs from the cache alone.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "fake_hub.h"
#include "fixture/fixture.h"
#include "gguf/writer.h"
#include "harness.h"
#include "pty_session.h"

using vkllm::test::FakeHub;
using vkllm::test::HubFaults;
using vkllm::test::HubFile;
using vkllm::test::HubRepo;
using vkllm::test::run_vkllm;
namespace fs = std::filesystem;

namespace {

std::vector<std::byte> tiny_model(uint32_t seed) { return vkllm::make_fixture_model({.chat = "chatml", .seed = seed}); }

std::vector<std::byte> text(const std::string& s) {
  std::vector<std::byte> b(s.size());
  std::memcpy(b.data(), s.data(), s.size());
  return b;
}

// A GGUF repository as the hub lists them: a README, two quants and a projector.
HubRepo tiny_repo() {
  return {"test/tiny-GGUF",
          {{"README.md", text("# tiny\n"), false},
           {"tiny-Q8_0.gguf", tiny_model(1)},
           {"tiny-Q4_K_M.gguf", tiny_model(2)},
           {"mmproj-tiny-f16.gguf", text("not a model")}}};
}

std::vector<std::byte> file_bytes(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::vector<char> c((std::istreambuf_iterator<char>(in)), {});
  std::vector<std::byte> b(c.size());
  std::memcpy(b.data(), c.data(), c.size());
  return b;
}

size_t count_with(const std::vector<std::string>& lines, const std::string& part) {
  return size_t(std::count_if(lines.begin(), lines.end(),
                              [&](const std::string& l) { return l.find(part) != std::string::npos; }));
}

void check_pull_error(const vkllm::test::CliResult& r, const std::string& message, int code = 1) {
  INFO(r.err);
  CHECK(r.exit_code == code);
  CHECK(r.err.find("error: " + message) != std::string::npos);
  CHECK(r.out.empty());
}

}  // namespace

TEST_CASE("vkllm pull fetches the Q4_K_M file, verified, and -hf and -m NAME then run from the cache", "[cli][hub]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  HubRepo repo = tiny_repo();
  FakeHub hub({repo}, {.page_size = 2});  // the file list comes in two pages
  auto r = run_vkllm("pull test/tiny-GGUF", hub.env());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string path = hub.cache() + "/hf/test/tiny-GGUF/tiny-Q4_K_M.gguf";
  CHECK(r.out == path + "\n");
  CHECK(file_bytes(path) == repo.files[2].bytes);
  CHECK(r.err.find("tiny-Q4_K_M.gguf: ") != std::string::npos);
  CHECK(r.err.find("SHA-256 verified") != std::string::npos);
  CHECK(r.err.find("test/tiny-GGUF:Q4_K_M: ") != std::string::npos);
  std::vector<std::string> log = hub.requests();
  CHECK(count_with(log, "/api/models/test/tiny-GGUF/tree/main") == 2);
  CHECK(count_with(log, "/test/tiny-GGUF/resolve/main/tiny-Q4_K_M.gguf") == 1);
  CHECK(count_with(log, "/cdn/test/tiny-GGUF/tiny-Q4_K_M.gguf") == 1);
  CHECK(count_with(log, "Q8_0") == 0);
  // The projector beside it, as llama.cpp's -hf fetches it (--no-mmproj: not).
  CHECK(file_bytes(hub.cache() + "/hf/test/tiny-GGUF/mmproj-tiny-f16.gguf") == repo.files[3].bytes);
  CHECK(r.err.find("projector: " + hub.cache() + "/hf/test/tiny-GGUF/mmproj-tiny-f16.gguf") != std::string::npos);
  CHECK(count_with(log, "/cdn/test/tiny-GGUF/mmproj-tiny-f16.gguf") == 1);

  // Again: up to date, nothing downloaded.
  r = run_vkllm("pull test/tiny-GGUF:Q4_K_M", hub.env());
  CHECK(r.exit_code == 0);
  CHECK(r.err.find("tiny-Q4_K_M.gguf: up to date") != std::string::npos);
  CHECK(count_with(hub.requests(), "/cdn/") == 2);

  // Offline: a hub that cannot be reached is never asked.
  std::string offline = "HF_ENDPOINT=http://127.0.0.1:9 VKLLM_CACHE=" + hub.cache();
  for (std::string args : {"run -hf test/tiny-GGUF -n 3 -s 1 -p hi", "run -m test/tiny-GGUF:Q4_K_M -n 3 -s 1 -p hi",
                           "run test/tiny-GGUF:Q4_K_M hi -n 3 -s 1"}) {
    auto run = run_vkllm(args, offline);
    INFO(args << "\n" << run.err);
    CHECK(run.exit_code == 0);
    CHECK(run.err.find("tiny-Q4_K_M.gguf on ") != std::string::npos);
  }
  // A quant not in the cache needs the hub.
  check_pull_error(run_vkllm("run -hf test/tiny-GGUF:Q8_0 -p hi", offline), "cannot reach http://127.0.0.1:9: ");
  check_pull_error(
      run_vkllm("run -m test/tiny-GGUF:Q8_0 -p hi", offline),
      "test/tiny-GGUF:Q8_0: no such file, and no downloaded model of that name (vkllm pull test/tiny-GGUF:Q8_0 "
      "downloads it");

  r = run_vkllm("pull test/tiny-GGUF:q8_0", hub.env());
  REQUIRE(r.exit_code == 0);
  auto list = run_vkllm("list", offline);
  INFO(list.out);
  CHECK(list.exit_code == 0);
  CHECK(list.out.starts_with("NAME "));
  CHECK(list.out.find("test/tiny-GGUF:Q8_0    Q8_0      llama") != std::string::npos);
  CHECK(list.out.find("test/tiny-GGUF:Q4_K_M  Q4_K_M    llama") != std::string::npos);
  auto rm = run_vkllm("rm test/tiny-GGUF:Q8_0", offline);
  CHECK(rm.exit_code == 0);
  CHECK(rm.out.starts_with("deleted test/tiny-GGUF:Q8_0 ("));
  CHECK(!fs::exists(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf"));
  check_pull_error(run_vkllm("rm test/tiny-GGUF:Q8_0", offline),
                   "test/tiny-GGUF:Q8_0 is not in the cache; it holds test/tiny-GGUF:Q4_K_M");
  CHECK(run_vkllm("rm test/tiny-GGUF", offline).exit_code == 0);
  CHECK(!fs::exists(hub.cache() + "/hf/test"));
  list = run_vkllm("list", offline);
  CHECK(list.out == "no models in " + hub.cache() + " (vkllm pull USER/REPO[:QUANT] downloads one)\n");
}

TEST_CASE("vkllm pull --no-mmproj leaves the projector on the hub", "[cli][hub]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  FakeHub hub({tiny_repo()});
  auto r = run_vkllm("pull test/tiny-GGUF:Q8_0 --no-mmproj", hub.env());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(count_with(hub.requests(), "/cdn/") == 1);
  CHECK(!fs::exists(hub.cache() + "/hf/test/tiny-GGUF/mmproj-tiny-f16.gguf"));
  CHECK(r.err.find("projector:") == std::string::npos);
}

TEST_CASE("vkllm pull resumes a dropped connection and a partial file with HTTP ranges", "[cli][hub]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  HubRepo repo = tiny_repo();
  uint64_t size = repo.files[1].bytes.size(), drop = size / 3;
  FakeHub hub({repo}, {.drop_once = {{"test/tiny-GGUF/tiny-Q8_0.gguf", drop}}});
  auto r = run_vkllm("pull test/tiny-GGUF:Q8_0", hub.env());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  CHECK(file_bytes(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf") == repo.files[1].bytes);
  CHECK(r.err.find("resuming (try 2 of 6)") != std::string::npos);
  CHECK(count_with(hub.requests(), fmt::format("tiny-Q8_0.gguf range=bytes={}-", drop)) == 2);  // resolve, CDN

  // A .part an earlier run left: only the rest is asked for.
  std::string part = hub.cache() + "/hf/test/tiny-GGUF/tiny-Q4_K_M.gguf.part";
  const std::vector<std::byte>& q4 = repo.files[2].bytes;
  std::ofstream(part, std::ios::binary).write(reinterpret_cast<const char*>(q4.data()), std::streamsize(q4.size() / 2));
  r = run_vkllm("pull test/tiny-GGUF", hub.env());
  REQUIRE(r.exit_code == 0);
  CHECK(r.err.find("resuming at") != std::string::npos);
  CHECK(count_with(hub.requests(),
                   fmt::format("/cdn/test/tiny-GGUF/tiny-Q4_K_M.gguf range=bytes={}-", q4.size() / 2)) == 1);
  CHECK(file_bytes(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q4_K_M.gguf") == q4);
  CHECK(!fs::exists(part));
}

TEST_CASE("vkllm pull at a terminal: a progress bar, and Ctrl-C keeps the partial file for the next pull",
          "[cli][hub][tty]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  HubRepo repo = tiny_repo();
  const std::vector<std::byte>& q8 = repo.files[1].bytes;  // about 300 KiB: 19 pieces, 4 s
  FakeHub hub({repo}, {.slow_once = {{"test/tiny-GGUF/tiny-Q8_0.gguf", 0.2}}});
  std::string part = hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf.part";
  {
    vkllm::test::PtySession s({"pull", "test/tiny-GGUF:Q8_0"}, hub.env_list());
    REQUIRE(s.wait_for("tiny-Q8_0.gguf  "));  // the bar: "  6% [#  ...] 16.0 KiB / 300 KiB  ... ETA 0:03"
    REQUIRE(s.wait_for(" KiB/s  ETA "));
    s.send("\x03");
    CHECK(s.wait_exit() == 130);
    INFO(s.output());
    CHECK(s.output().find("interrupted: " + part + " keeps ") != std::string::npos);
    CHECK(s.output().find(": run the command again to resume") != std::string::npos);
  }
  REQUIRE(fs::exists(part));
  uint64_t kept = fs::file_size(part);
  CHECK(kept > 0);
  CHECK(kept < q8.size());
  auto r = run_vkllm("pull test/tiny-GGUF:Q8_0", hub.env());
  INFO(r.err);
  CHECK(r.exit_code == 0);
  CHECK(r.err.find(fmt::format("downloading tiny-Q8_0.gguf ({:.1f} KiB, resuming at ", q8.size() / 1024.0)) !=
        std::string::npos);
  CHECK(count_with(hub.requests(), fmt::format("/cdn/test/tiny-GGUF/tiny-Q8_0.gguf range=bytes={}-", kept)) == 1);
  CHECK(file_bytes(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf") == q8);
}

TEST_CASE("vkllm pull: a corrupted byte fails the SHA-256 and nothing is kept", "[cli][hub]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  HubRepo repo = tiny_repo();
  FakeHub hub({repo}, {.corrupt_once = {{"test/tiny-GGUF/tiny-Q8_0.gguf", 1000}}});
  auto r = run_vkllm("pull test/tiny-GGUF:Q8_0", hub.env());
  check_pull_error(r, "tiny-Q8_0.gguf: SHA-256 mismatch (the hub lists ");
  CHECK(r.err.find("; the download was deleted: run the command again\n") != std::string::npos);
  CHECK(!fs::exists(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf"));
  CHECK(!fs::exists(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf.part"));
  r = run_vkllm("pull test/tiny-GGUF:Q8_0", hub.env());  // the hub is well again
  CHECK(r.exit_code == 0);
  CHECK(file_bytes(hub.cache() + "/hf/test/tiny-GGUF/tiny-Q8_0.gguf") == repo.files[1].bytes);
}

TEST_CASE("vkllm pull: 401, 403 and 404 say what to do", "[cli][hub]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  HubRepo gated = tiny_repo();
  gated.name = "test/gated", gated.token = "hf_secret";
  FakeHub hub({tiny_repo(), gated});
  std::string env = hub.env();
  check_pull_error(
      run_vkllm("pull test/gated", env),
      "test/gated: 401 Unauthorized: test/gated is gated or private (or does not exist); set HF_TOKEN to an "
      "access token of an account that may read it (" +
          hub.endpoint() + "/settings/tokens)");
  check_pull_error(run_vkllm("pull test/gated", env + "hf_wrong"),
                   "test/gated: 403 Forbidden: test/gated is gated: accept its terms at " + hub.endpoint() +
                       "/test/gated with the account of HF_TOKEN");
  auto ok = run_vkllm("pull test/gated:Q8_0", env + "hf_secret");
  INFO(ok.err);
  CHECK(ok.exit_code == 0);
  CHECK(count_with(hub.requests(), "/test/gated/resolve/main/tiny-Q8_0.gguf range=- auth=yes") == 1);
  CHECK(count_with(hub.requests(), "/cdn/test/gated/tiny-Q8_0.gguf range=- auth=no") == 1);  // the CDN gets no token

  check_pull_error(run_vkllm("pull test/missing", env),
                   "test/missing: no such repository on " + hub.endpoint() + " (404)");
  check_pull_error(run_vkllm("pull test/tiny-GGUF:Q5_K_S", env),
                   "test/tiny-GGUF has no Q5_K_S model file; it has Q8_0, Q4_K_M\n");
  check_pull_error(run_vkllm("run -hf test/tiny-GGUF --hf-file tiny-Q3_K.gguf -p x", env),
                   "test/tiny-GGUF has no file tiny-Q3_K.gguf; its GGUF files: tiny-Q8_0.gguf, tiny-Q4_K_M.gguf, "
                   "mmproj-tiny-f16.gguf\n");
  check_pull_error(run_vkllm("pull x/y", "HF_ENDPOINT=http://127.0.0.1:9 VKLLM_CACHE=" + hub.cache()),
                   "cannot reach http://127.0.0.1:9: ");
  check_pull_error(run_vkllm("pull tiny", env), "model: 'tiny' is not USER/REPO[:QUANT]", 2);
  check_pull_error(run_vkllm("pull", env), "which model? vkllm pull USER/REPO[:QUANT]", 2);
  check_pull_error(run_vkllm("pull test/tiny-GGUF:Q8_0 --hf-file tiny-Q8_0.gguf", env),
                   "--hf-file: test/tiny-GGUF:Q8_0 names a QUANT and --hf-file a file: give one of them", 2);
  check_pull_error(run_vkllm("run -hf test/tiny-GGUF:Q8_0 --hf-file tiny-Q8_0.gguf -p x", env),
                   "--hf-file: -hf test/tiny-GGUF:Q8_0 names a QUANT and --hf-file a file: give one of them", 2);
  // USER/REPO:QUANT as the first word is a model, pulled or not (never a prompt).
  check_pull_error(run_vkllm("run test/tiny-GGUF:Q5_K_S hello", env),
                   "test/tiny-GGUF:Q5_K_S: no such file, and no downloaded model of that name (vkllm pull "
                   "test/tiny-GGUF:Q5_K_S downloads it");
  check_pull_error(run_vkllm("run -hf tiny -p x", env), "--hf-repo: 'tiny' is not USER/REPO[:QUANT]", 2);
  check_pull_error(run_vkllm("run --hf-file x.gguf -p x", env), "--hf-file requires --hf-repo", 2);
  check_pull_error(run_vkllm("run -hf a/b -m c.gguf -p x", env), "--model excludes --hf-repo", 2);
}

TEST_CASE("a split model: pull fetches every part, run and info load it from the first", "[cli][hub][split]") {
  if (!FakeHub::available()) return vkllm::test::skip("python3 is needed to play the Hugging Face hub");
  char tmpl[] = "/tmp/vkllm_split_cli_XXXXXX";
  REQUIRE(mkdtemp(tmpl));
  std::string dir = tmpl;
  std::vector<std::string> paths =
      vkllm::fixture_writer({.chat = "chatml", .seed = 3}).save_split(dir + "/big-Q8_0", 3);
  HubRepo repo{"test/big-GGUF", {{"README.md", text("big\n"), false}}};
  for (const std::string& p : paths) repo.files.push_back({"Q8_0/" + fs::path(p).filename().string(), file_bytes(p)});
  fs::remove_all(dir);
  FakeHub hub({repo});
  auto r = run_vkllm("pull test/big-GGUF", hub.env());
  INFO(r.err);
  REQUIRE(r.exit_code == 0);
  std::string first = hub.cache() + "/hf/test/big-GGUF/Q8_0/big-Q8_0-00001-of-00003.gguf";
  CHECK(r.out == first + "\n");
  CHECK(r.err.find("test/big-GGUF:Q8_0: ") != std::string::npos);
  CHECK(r.err.find(" in 3 parts, ") != std::string::npos);
  CHECK(count_with(hub.requests(), "/cdn/") == 3);

  auto info = run_vkllm("info -m " + first);
  CHECK(info.exit_code == 0);
  CHECK(info.out.find(" in 3 parts)") != std::string::npos);
  std::string offline = "HF_ENDPOINT=http://127.0.0.1:9 VKLLM_CACHE=" + hub.cache();
  auto run = run_vkllm("run -hf test/big-GGUF:Q8_0 -n 3 -s 1 -p hi", offline);
  INFO(run.err);
  CHECK(run.exit_code == 0);
  std::string second = hub.cache() + "/hf/test/big-GGUF/Q8_0/big-Q8_0-00002-of-00003.gguf";
  check_pull_error(run_vkllm("info -m " + second), second + ": part 2 of 3 of a split model: open " + first + "\n");
  auto list = run_vkllm("list --json", offline);
  CHECK(list.out.find("\"name\": \"test/big-GGUF:Q8_0\"") != std::string::npos);
}

TEST_CASE("the cache folder is VKLLM_CACHE, else $XDG_CACHE_HOME/vkllm, else ~/.cache/vkllm", "[cli][hub]") {
  auto cache_of = [](const std::string& env) {
    auto r = run_vkllm("list --json", env);
    INFO(env << "\n" << r.err);
    CHECK(r.exit_code == 0);
    return nlohmann::json::parse(r.out)["cache"].get<std::string>();
  };
  CHECK(cache_of("VKLLM_CACHE=/tmp/vkllm_c XDG_CACHE_HOME=/tmp/vkllm_x HOME=/tmp/vkllm_h") == "/tmp/vkllm_c");
  CHECK(cache_of("VKLLM_CACHE= XDG_CACHE_HOME=/tmp/vkllm_x HOME=/tmp/vkllm_h") == "/tmp/vkllm_x/vkllm");
  CHECK(cache_of("VKLLM_CACHE= XDG_CACHE_HOME= HOME=/tmp/vkllm_h") == "/tmp/vkllm_h/.cache/vkllm");
  check_pull_error(run_vkllm("list", "env -u VKLLM_CACHE -u XDG_CACHE_HOME -u HOME"),
                   "no cache folder for models: set VKLLM_CACHE (or HOME)\n");
  check_pull_error(run_vkllm("pull a/b", "HF_ENDPOINT=ftp://mirror VKLLM_CACHE=/tmp/vkllm_c"),
                   "HF_ENDPOINT='ftp://mirror' is not an http:// or https:// address\n");
  CHECK(!fs::exists("/tmp/vkllm_c"));  // listing and a refused pull write nothing
}
