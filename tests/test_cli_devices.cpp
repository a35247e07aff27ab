// `vkllm devices` as a user runs it, and the one-line errors of the command line.
#include <fmt/format.h>

#include <algorithm>
#include <nlohmann/json.hpp>

#include "catch.h"
#include "cli.h"
#include "harness.h"

using vkllm::test::line_count;
using vkllm::test::run_vkllm;

TEST_CASE("vkllm devices --json lists devices with their limits", "[cli]") {
  auto r = run_vkllm("devices --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  REQUIRE(!j["devices"].empty());
  bool chosen = false;
  for (auto& d : j["devices"]) {
    chosen = chosen || d["chosen"].get<bool>();
    CHECK(d.contains("profile"));
    CHECK(d["limits"]["max_storage_buffer_range"].get<uint64_t>() > 0);
    if (d["name"].get<std::string>().starts_with("llvmpipe")) {  // lavapipe's real limits
      CHECK(d["limits"]["shared_memory_bytes"] == 32768);
      // The size LP_NATIVE_VECTOR_WIDTH gives (8 by default), read from the device.
      CHECK(d["subgroup"]["size"] == vkllm::test::gpu().caps().subgroup_size);
      CHECK(d["subgroup"]["run_size"] == vkllm::test::gpu().caps().subgroup_size);
      CHECK(d["path_notes"].empty());
      CHECK(d["limits"]["max_storage_buffer_range"] == 134217728);
      CHECK(d["profile"] == "llvmpipe");
      CHECK(d["uma"] == true);
      // lavapipe reports no compute units: split-K aims at the profile's guess.
      CHECK(d["compute_units"] == 0);
      CHECK(d["compute_units_source"] == "");
      CHECK(d["attention_split_target"] == vkllm::profile_named("llvmpipe").attn_target_wgs);
      CHECK(d["denorm_preserve_f32"] == vkllm::test::gpu().caps().denorm_preserve_f32);
    }
    uint32_t units = d["compute_units"], target = d["attention_split_target"];
    if (units) CHECK(target == units * vkllm::profile_named(d["profile"].get<std::string>()).attn_wgs_per_cu);
  }
  CHECK(chosen);
}

TEST_CASE("vkllm devices prints a readable list", "[cli]") {
  auto r = run_vkllm("devices");
  REQUIRE(r.exit_code == 0);
  CHECK(r.out.find("maxStorageBufferRange") != std::string::npos);
  CHECK(r.out.find("    compute units: ") != std::string::npos);
  CHECK(r.out.find("    f32 subnormals: ") != std::string::npos);
  CHECK(r.out.find("<- chosen") != std::string::npos);
}

TEST_CASE("no Vulkan driver gives one error line", "[cli]") {
  auto r = run_vkllm("devices", "VK_ICD_FILENAMES=/nonexistent.json VK_DRIVER_FILES=/nonexistent.json");
  CHECK(r.exit_code != 0);
  CHECK(r.err.starts_with("error: "));
  CHECK(line_count(r.err) == 1);
}

TEST_CASE("an unknown subcommand or flag gives one error line", "[cli]") {
  for (const char* args : {"frobnicate", "devices --nope"}) {
    auto r = run_vkllm(args);
    CHECK(r.exit_code != 0);
    CHECK(r.err.starts_with("error: "));
    CHECK(line_count(r.err) == 1);
  }
}

TEST_CASE("vkllm devices reports the choice run makes under VKLLM_DEVICE and VKLLM_PROFILE", "[cli]") {
  auto forced = run_vkllm("devices --json", "VKLLM_PROFILE=generic VKLLM_DEVICE=0");
  REQUIRE(forced.exit_code == 0);
  auto j = nlohmann::json::parse(forced.out);
  CHECK(j["profile_forced"] == true);
  CHECK(j["devices"][0]["chosen"] == true);
  for (auto& d : j["devices"]) CHECK(d["profile"] == "generic");
  for (auto& d : j["devices"]) CHECK(d["profile_tuned"] == false);
  // Only llvmpipe's values come from measurements so far; the GPU profiles say they are guesses.
  for (const char* name : {"nvidia", "amd_rdna", "amd_gcn", "intel", "generic"}) {
    auto text = run_vkllm("devices", fmt::format("VKLLM_PROFILE={} VKLLM_DEVICE=0", name));
    CHECK(text.out.find(fmt::format("profile: {} (VKLLM_PROFILE), untuned: ", name)) != std::string::npos);
  }
  auto llvmpipe = run_vkllm("devices", "VKLLM_PROFILE=llvmpipe VKLLM_DEVICE=0");
  CHECK(llvmpipe.out.find("profile: llvmpipe (VKLLM_PROFILE), tuned by measurement") != std::string::npos);
  auto run = run_vkllm("run -p x -n 1", "VKLLM_PROFILE=generic");
  CHECK(run.err.find("(profile generic)") != std::string::npos);

  auto unknown = run_vkllm("devices", "VKLLM_PROFILE=fastest");
  CHECK(unknown.exit_code == 0);
  CHECK(unknown.err.starts_with("warning: VKLLM_PROFILE: unknown profile 'fastest' (known: generic"));
  CHECK(unknown.out.find("<- chosen") != std::string::npos);
  auto bad_run = run_vkllm("run -p x -n 1", "VKLLM_PROFILE=fastest");
  CHECK(bad_run.exit_code == 1);
  CHECK(bad_run.err.starts_with("error: unknown profile 'fastest'"));

  auto missing = run_vkllm("devices", "VKLLM_DEVICE=99");
  CHECK(missing.exit_code == 0);
  CHECK(missing.err.starts_with("warning: VKLLM_DEVICE=99 is not a device index"));
  CHECK(missing.out.find("<- chosen") == std::string::npos);
}

TEST_CASE("vkllm devices says whether prefill runs on cooperative matrices, and what its checks found", "[cli]") {
  auto r = run_vkllm("devices --json");
  REQUIRE(r.exit_code == 0);
  auto j = nlohmann::json::parse(r.out);
  for (auto& d : j["devices"]) {
    auto& c = d["cooperative_matrices"];
    REQUIRE(c.is_object());
    CHECK(c["offered"].contains("nv"));
    if (c["api"] == "none") {  // lavapipe: no extension, no checks
      CHECK(!c["why_not"].get<std::string>().empty());
      CHECK(c["checks"].empty());
      continue;
    }
    CHECK((c["api"] == "nv" || c["api"] == "khr"));
    if (!d["chosen"].get<bool>()) continue;
    CHECK(!c["checks"].empty());  // the chosen device's pipelines, each against the tiled kernel
    for (auto& check : c["checks"]) {
      INFO(check.dump());
      CHECK(check["state"] == "kept");
    }
  }
  auto text = run_vkllm("devices");
  CHECK(text.out.find("    cooperative matrices: ") != std::string::npos);
  auto off = run_vkllm("devices --json", "VKLLM_COOPMAT=off");
  for (auto& d : nlohmann::json::parse(off.out)["devices"])
    CHECK(d["cooperative_matrices"]["why_not"] == "turned off by VKLLM_COOPMAT=off");
  for (const char* cmd : {"devices", "run -p x -n 1"}) {
    auto bad = run_vkllm(cmd, "VKLLM_COOPMAT=fast");
    CHECK(bad.exit_code == 1);
    CHECK(bad.err == "error: VKLLM_COOPMAT='fast' is not one of auto, off, nv, khr\n");
  }
}
