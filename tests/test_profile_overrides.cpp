// VKLLM_PROFILE's overrides (runtime/profile_overrides.h): every number and switch of Profile can
// be set by name, on a named profile or the device's own; a wrong field or value is one error
// line; `vkllm devices` shows what was set; problems() refuses numbers the kernels cannot run.
#include <fmt/format.h>

#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <set>
#include <sstream>

#include "catch.h"
#include "cli.h"
#include "context.h"
#include "device_descriptions.h"
#include "error.h"
#include "harness.h"
#include "profile_overrides.h"

using namespace vkllm;

namespace {

// The uint32_t and bool members of struct Profile, read from caps.h.
std::set<std::string> profile_members() {
  std::ifstream in(VKLLM_SOURCE_DIR "/runtime/caps.h");
  std::stringstream text;
  text << in.rdbuf();
  std::string s = text.str();
  size_t begin = s.find("struct Profile {"), end = s.find("\n};", begin);
  REQUIRE(begin != std::string::npos);
  std::string body = s.substr(begin, end - begin);
  std::set<std::string> names;
  static const std::regex member(R"(\n\s*(uint32_t|bool)\s+(\w+)\s*=)");
  for (std::sregex_iterator it(body.begin(), body.end(), member), e; it != e; ++it) names.insert((*it)[2]);
  return names;
}

}  // namespace

TEST_CASE("VKLLM_PROFILE can set every number and switch of a profile", "[profile][overrides]") {
  std::set<std::string> settable;
  for (const std::string& f : profile_field_names()) settable.insert(f);
  std::set<std::string> members = profile_members();
  CHECK(members.size() > 15);
  for (const std::string& m : members) {
    if (m == "tuned" || m == "run_subgroup_size") continue;  // a claim and a derived value
    INFO("Profile::" << m << " is missing from runtime/profile_overrides.cpp's table");
    CHECK(settable.count(m) == 1);
  }
  CHECK(settable.size() + 2 == members.size());
}

TEST_CASE("profile overrides apply to a named profile or the device's own", "[profile][overrides]") {
  DeviceCaps nv = test::nvidia_device();
  ProfileRequest r = parse_profile_request("nvidia:matvec_wg=256,matvec_rows=8,subgroup_ops=false");
  Profile p = profile_for(r, nv);
  CHECK(p.name == "nvidia");
  CHECK(p.matvec_wg == 256);
  CHECK(p.matvec_rows == 8);
  CHECK(!p.subgroup_ops);
  CHECK(p.matmul_bm == profile_named("nvidia").matmul_bm);  // the rest as the profile has it
  CHECK(p.overrides == "matvec_wg=256,matvec_rows=8,subgroup_ops=0");
  CHECK(!p.tuned);
  CHECK(problems(nv, p).empty());

  DeviceCaps lvp = test::lavapipe_device();
  Profile own = profile_for(parse_profile_request(":attn_br=4,matvec_wide_loads=0"), lvp);
  CHECK(own.name == "llvmpipe");
  CHECK(own.attn_br == 4);
  CHECK(!own.matvec_wide_loads);
  CHECK(!own.tuned);  // llvmpipe's measured values, but not these
  Profile plain = profile_for(parse_profile_request("llvmpipe"), lvp);
  CHECK(plain.tuned);
  CHECK(plain.overrides.empty());
  // Fitted after the overrides: a workgroup wider than the device allows is clamped.
  CHECK(profile_for(parse_profile_request(":wg_size=4096"), lvp).wg_size == 1024);
  // Every field takes a value.
  for (const std::string& f : profile_field_names()) {
    INFO(f);
    CHECK_NOTHROW(parse_profile_request(fmt::format("generic:{}=1", f)));
  }
}

TEST_CASE("a wrong profile override is one clear error", "[profile][overrides]") {
  auto error = [](const std::string& text) {
    try {
      parse_profile_request(text);
    } catch (const Error& e) {
      return std::string(e.what());
    }
    return std::string("no error");
  };
  CHECK(error("nvidia:matvec_wgg=2")
            .starts_with("profile 'nvidia:matvec_wgg=2': no field 'matvec_wgg' (fields: wg_size, matvec_wg,"));
  CHECK(error("nvidia:matvec_wg=abc") ==
        "profile 'nvidia:matvec_wg=abc': matvec_wg=abc is not a whole number from 1 to 4294967295");
  CHECK(error(":matvec_wg=0").find("matvec_wg=0 is not a whole number from 1") != std::string::npos);
  CHECK(error(":matvec_wg=-4").find("is not a whole number") != std::string::npos);
  CHECK(error(":matvec_wg=99999999999").find("is not a whole number") != std::string::npos);
  CHECK(error(":matvec_wg=").find("is not a whole number") != std::string::npos);
  CHECK(error(":subgroup_ops=yes") == "profile ':subgroup_ops=yes': subgroup_ops=yes is not 0, 1, true or false");
  CHECK(error(":matvec_wg").find("'matvec_wg' has no value (field=value)") != std::string::npos);
  CHECK(error("nvidia:").find("nothing after ':'") != std::string::npos);
  CHECK(error(":attn_br=8,").find("a trailing ','") != std::string::npos);
  CHECK(error("fastest:attn_br=8").starts_with("unknown profile 'fastest'"));
  CHECK(error(":subgroup_size=0") == "no error");  // 0: the device's own size
}

TEST_CASE("problems() refuses profile numbers the kernels cannot run", "[profile][overrides][problems]") {
  DeviceCaps nv = test::nvidia_device();
  auto why = [&](const std::string& text) {
    return fmt::format("{}", fmt::join(problems(nv, profile_for(parse_profile_request(text), nv)), "; "));
  };
  CHECK(why("nvidia:attn_wg=48") == "profile nvidia: attn_wg 48 is not a power of two");
  CHECK(why("nvidia:matvec_rows=8,matvec_rows_per_thread=16")
            .find("matvec_rows 8 must be a multiple of "
                  "matvec_rows_per_thread 16") != std::string::npos);
  CHECK(why("nvidia:matmul_tm=3").find("does not split into 3x4 micro-tiles") != std::string::npos);
  CHECK(why("nvidia:matmul_bk=12").find("64x64x12") != std::string::npos);
  CHECK(why("nvidia:subgroup_size=24").find("subgroup_size 24 is not a power of two") != std::string::npos);
  CHECK(why("nvidia:attn_br=64,attn_wg=256").empty());
}

TEST_CASE("a Context runs the overridden profile, and vkllm devices shows it", "[profile][overrides][cli]") {
  std::string own = choose_profile(test::gpu().caps()).name;
  Context ctx({.profile = ":attn_br=4,wg_size=64"});
  CHECK(ctx.profile().name == own);
  CHECK(ctx.profile().attn_br == 4);
  CHECK(ctx.profile().wg_size == 64);

  auto j = test::run_vkllm("devices --json", "VKLLM_PROFILE=nvidia:matvec_wg=256,matvec_rows=8 VKLLM_DEVICE=0");
  REQUIRE(j.exit_code == 0);
  auto d = nlohmann::json::parse(j.out)["devices"][0];
  CHECK(d["profile"] == "nvidia");
  CHECK(d["profile_overrides"] == "matvec_wg=256,matvec_rows=8");
  CHECK(d["profile_tuned"] == false);
  auto text = test::run_vkllm("devices", "VKLLM_PROFILE=:attn_wg=8 VKLLM_DEVICE=0");
  CHECK(text.out.find(fmt::format("profile: {} (VKLLM_PROFILE), overridden: attn_wg=8", own)) != std::string::npos);
  auto plain = test::run_vkllm("devices --json");
  CHECK(nlohmann::json::parse(plain.out)["devices"][0]["profile_overrides"] == "");

  auto run = test::run_vkllm("run -p x -n 1 --seed 1", "VKLLM_PROFILE=:attn_wg=8,attn_br=4");
  INFO(run.err);
  CHECK(run.exit_code == 0);
  for (const char* bad : {"nvidia:matvec_wgg=2", ":attn_wg=48"}) {
    auto r = test::run_vkllm("run -p x -n 1", fmt::format("VKLLM_PROFILE={}", bad));
    INFO(bad << ": " << r.err);
    CHECK(r.exit_code == 1);
    CHECK(r.err.starts_with("error: "));
    CHECK(test::line_count(r.err) == 1);
  }
  auto warned = test::run_vkllm("devices", "VKLLM_PROFILE=:attn_wgg=8");
  CHECK(warned.exit_code == 0);
  CHECK(warned.err.starts_with("warning: VKLLM_PROFILE: profile ':attn_wgg=8': no field 'attn_wgg'"));
}
