// The KHR form of the cooperative-matrix kernels (shaders/coopmat_khr.h): each embedded KHR module
// parses, carries SPV_KHR_cooperative_matrix's opcodes and operands where its NV twin has the NV
// ones (a use per matrix type, layouts as integer constants, stride after layout), is what the
// rewrite makes of the twin, and passes spirv-val where spirv-val knows the extension. Debian 12's
// spirv-val (SPIRV-Tools 2023.1) predates it, so there the structure checked here is the proof.
// Modules the rewrite cannot carry over faithfully are refused with a reason.
#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>
#include <string>

#include "catch.h"
#include "cli.h"
#include "coopmat_khr.h"
#include "spirv.h"

using namespace vkllm;
namespace ck = vkllm::coopmat_khr;

namespace {

constexpr uint32_t kOpExtension = 10, kOpMemoryModel = 14, kOpCapability = 17, kOpTypeFloat = 22, kOpConstant = 43,
                   kOpSpecConstant = 50, kOpSpecConstantOp = 52, kOpLoad = 61;

struct Inst {
  uint32_t op;
  std::vector<uint32_t> w;  // the whole instruction
};

std::vector<Inst> instructions(std::span<const uint32_t> code) {
  REQUIRE(code.size() >= 5);
  REQUIRE(code[0] == 0x07230203u);
  std::vector<Inst> out;
  for (size_t i = 5; i < code.size();) {
    uint32_t n = code[i] >> 16;
    REQUIRE(n >= 1);
    REQUIRE(i + n <= code.size());
    out.push_back({code[i] & 0xffff, std::vector<uint32_t>(code.begin() + i, code.begin() + i + n)});
    i += n;
  }
  return out;
}

std::string literal(const std::vector<uint32_t>& w, size_t from) {
  std::string s;
  for (size_t i = from; i < w.size(); ++i)
    for (int b = 0; b < 4; ++b) {
      char c = char(w[i] >> (8 * b));
      if (!c) return s;
      s += c;
    }
  return s;
}

size_t count(const std::vector<Inst>& insts, uint32_t op) {
  return size_t(std::count_if(insts.begin(), insts.end(), [&](const Inst& i) { return i.op == op; }));
}

// The NV/KHR module pairs, by name.
std::vector<std::pair<const spirv::Shader*, const spirv::Shader*>> pairs() {
  std::map<std::string, const spirv::Shader*> by_name;
  for (const spirv::Shader* s : spirv::cooperative) by_name[s->name] = s;
  std::vector<std::pair<const spirv::Shader*, const spirv::Shader*>> out;
  for (const auto& [name, s] : by_name)
    if (name.ends_with("_nv")) {
      auto khr = by_name.find(name.substr(0, name.size() - 3) + "_khr");
      REQUIRE(khr != by_name.end());
      out.emplace_back(s, khr->second);
    }
  return out;
}

struct MatrixType {
  uint32_t component, scope, rows, cols, use;
};

// Checks one KHR module against its NV twin (the rewrite's contract, coopmat_khr.h).
void check_khr_module(const spirv::Shader& nv_shader, const spirv::Shader& khr_shader) {
  INFO(khr_shader.name);
  std::vector<Inst> nv = instructions(nv_shader.code), khr = instructions(khr_shader.code);
  uint32_t bound = khr_shader.code[3];
  std::map<uint32_t, uint32_t> int_const, type_of;  // id -> value; value id -> type id
  std::set<uint32_t> f16_types, f32_types, spec_ids;
  std::map<uint32_t, MatrixType> matrices;
  std::set<uint32_t> caps;
  std::vector<std::string> exts;
  for (const Inst& i : khr) {
    if (i.op == kOpCapability) caps.insert(i.w[1]);
    if (i.op == kOpExtension) exts.push_back(literal(i.w, 1));
    if (i.op == kOpMemoryModel) CHECK(i.w[2] == 3);  // Vulkan, as the KHR extension requires
    if (i.op == kOpConstant && i.w.size() == 4) int_const[i.w[2]] = i.w[3];
    if (i.op == kOpSpecConstant) spec_ids.insert(i.w[2]);
    if (i.op == kOpTypeFloat) (i.w[2] == 16 ? f16_types : f32_types).insert(i.w[1]);
    if (i.op == ck::op::kTypeKHR) {
      REQUIRE(i.w.size() == 7);
      matrices[i.w[1]] = {i.w[2], i.w[3], i.w[4], i.w[5], i.w[6]};
    }
    if ((i.op == kOpLoad || i.op == ck::op::kLoadKHR || i.op == ck::op::kMulAddKHR) && i.w.size() >= 3)
      type_of[i.w[2]] = i.w[1];
    // No NV instruction is left, not even inside a specialization-constant expression.
    CHECK((i.op < ck::op::kTypeNV || i.op > ck::op::kLengthNV));
    if (i.op == kOpSpecConstantOp) CHECK((i.w[3] < ck::op::kTypeNV || i.w[3] > ck::op::kLengthNV));
    if (i.op == kOpConstant) CHECK(i.w[2] < bound);  // the ids the rewrite adds stay under the bound
  }
  CHECK(caps.count(ck::kCapabilityKHR) == 1);
  CHECK(caps.count(ck::kCapabilityNV) == 0);
  CHECK(std::count(exts.begin(), exts.end(), "SPV_KHR_cooperative_matrix") == 1);
  CHECK(std::count(exts.begin(), exts.end(), "SPV_NV_cooperative_matrix") == 0);

  // Three matrix types, one per use, their sides the kernel's three shape constants.
  REQUIRE(matrices.size() == 3);
  std::map<uint32_t, MatrixType> by_use;
  for (const auto& [id, m] : matrices) {
    REQUIRE(int_const.count(m.use));
    REQUIRE(int_const.count(m.scope));
    CHECK(int_const[m.scope] == 3);  // subgroup
    by_use[int_const[m.use]] = m;
  }
  REQUIRE(by_use.size() == 3);
  const MatrixType &a = by_use[uint32_t(ck::Use::A)], &b = by_use[uint32_t(ck::Use::B)],
                   &c = by_use[uint32_t(ck::Use::Accumulator)];
  CHECK(f16_types.count(a.component));
  CHECK(f16_types.count(b.component));
  CHECK(f32_types.count(c.component));
  CHECK(a.rows == c.rows);  // CM
  CHECK(a.cols == b.rows);  // CK
  CHECK(b.cols == c.cols);  // CN
  for (uint32_t side : {a.rows, a.cols, b.cols}) CHECK(spec_ids.count(side));

  // Loads and stores: the layout an integer constant, then the stride the NV form had.
  std::vector<const Inst*> nv_loads, nv_stores;
  for (const Inst& i : nv) {
    if (i.op == ck::op::kLoadNV) nv_loads.push_back(&i);
    if (i.op == ck::op::kStoreNV) nv_stores.push_back(&i);
  }
  size_t load = 0, store = 0;
  for (const Inst& i : khr) {
    if (i.op == ck::op::kLoadKHR) {
      REQUIRE(load < nv_loads.size());
      const Inst& was = *nv_loads[load++];
      REQUIRE(i.w.size() == was.w.size());
      REQUIRE(int_const.count(i.w[4]));
      uint32_t layout = int_const[i.w[4]];
      // Weights (A) are row-major tiles, x (B) column-major ones (shaders/matmul_coop.glsl).
      uint32_t use = int_const[matrices.at(i.w[1]).use];
      CHECK(layout == (use == uint32_t(ck::Use::A) ? 0u : 1u));
      CHECK(i.w[5] == was.w[4]);                                         // stride
      CHECK(std::equal(i.w.begin() + 6, i.w.end(), was.w.begin() + 6));  // memory operands
    }
    if (i.op == ck::op::kStoreKHR) {
      REQUIRE(store < nv_stores.size());
      const Inst& was = *nv_stores[store++];
      REQUIRE(int_const.count(i.w[3]));
      CHECK(int_const[i.w[3]] == 1);  // the staging tile is column-major
      CHECK(i.w[4] == was.w[3]);
      CHECK(std::equal(i.w.begin() + 5, i.w.end(), was.w.begin() + 5));
    }
    if (i.op == ck::op::kMulAddKHR) {
      REQUIRE(i.w.size() == 6);
      CHECK(matrices.at(i.w[1]).use == c.use);
      CHECK(matrices.at(type_of.at(i.w[3])).use == a.use);
      CHECK(matrices.at(type_of.at(i.w[4])).use == b.use);
      CHECK(matrices.at(type_of.at(i.w[5])).use == c.use);
    }
  }
  CHECK(load == nv_loads.size());
  CHECK(store == nv_stores.size());
  CHECK(count(khr, ck::op::kMulAddKHR) == count(nv, ck::op::kMulAddNV));
  CHECK(count(khr, ck::op::kMulAddKHR) > 0);
  // What the build embedded is what the rewrite makes of the NV module now.
  CHECK(ck::nv_to_khr(nv_shader.code) == std::vector<uint32_t>(khr_shader.code.begin(), khr_shader.code.end()));
}

// Whether this spirv-tools knows SPV_KHR_cooperative_matrix: it assembles and validates a
// minimal module that declares a KHR matrix type.
bool spirv_tools_know_khr() {
  test::TempFile src("coopmat_probe.spvasm"), bin("coopmat_probe.spv");
  src.write(std::string(R"(OpCapability Shader
OpCapability Float16
OpCapability VulkanMemoryModel
OpCapability CooperativeMatrixKHR
OpExtension "SPV_KHR_cooperative_matrix"
OpMemoryModel Logical Vulkan
OpEntryPoint GLCompute %main "main"
OpExecutionMode %main LocalSize 32 1 1
%void = OpTypeVoid
%fn = OpTypeFunction %void
%uint = OpTypeInt 32 0
%u16 = OpConstant %uint 16
%u3 = OpConstant %uint 3
%u0 = OpConstant %uint 0
%half = OpTypeFloat 16
%ma = OpTypeCooperativeMatrixKHR %half %u3 %u16 %u16 %u0
%main = OpFunction %void None %fn
%l = OpLabel
OpReturn
OpFunctionEnd
)"));
  if (test::run_program(VKLLM_SPIRV_AS, fmt::format("--target-env vulkan1.2 {} -o {}", src.path, bin.path)).exit_code !=
      0)
    return false;
  return test::run_program(VKLLM_SPIRV_VAL, "--target-env vulkan1.2 " + bin.path).exit_code == 0;
}

}  // namespace

TEST_CASE("every cooperative-matrix kernel has a KHR form with KHR opcodes and operands", "[coopmat][spirv]") {
  auto all = pairs();
  REQUIRE(all.size() == 32);  // matmul_coop and matmul_coop_id for every weight type but f32
  for (const auto& [nv, khr] : all) check_khr_module(*nv, *khr);
}

TEST_CASE("the KHR forms pass spirv-val where spirv-val knows the extension", "[coopmat][spirv]") {
  if (!spirv_tools_know_khr()) {
    // Not a skip: the structure test above is the check here, and this says which tools ran.
    std::string v = test::run_program(VKLLM_SPIRV_VAL, "--version").out;
    fmt::print("spirv-val predates SPV_KHR_cooperative_matrix ({}): the KHR modules are checked structurally\n",
               v.substr(0, v.find('\n')));
    for (const auto& [nv, khr] : pairs()) {  // the NV forms at least validate (the build ran this too)
      test::TempFile f("coopmat_nv.spv");
      f.write(std::string(reinterpret_cast<const char*>(nv->code.data()), nv->code.size_bytes()));
      CHECK(test::run_program(VKLLM_SPIRV_VAL, "--target-env vulkan1.2 " + f.path).exit_code == 0);
    }
    return;
  }
  for (const auto& [nv, khr] : pairs()) {
    test::TempFile f("coopmat_khr.spv");
    f.write(std::string(reinterpret_cast<const char*>(khr->code.data()), khr->code.size_bytes()));
    test::CliResult r = test::run_program(VKLLM_SPIRV_VAL, "--target-env vulkan1.2 " + f.path);
    INFO(khr->name << ": " << r.err << r.out);
    CHECK(r.exit_code == 0);
  }
}

TEST_CASE("the rewrite refuses what it cannot carry over faithfully", "[coopmat][spirv]") {
  const spirv::Shader& nv = spirv::matmul_coop_q4_0_nv;
  std::vector<uint32_t> code(nv.code.begin(), nv.code.end());
  auto first = [&](uint32_t op) {
    for (size_t i = 5; i < code.size(); i += code[i] >> 16)
      if ((code[i] & 0xffff) == op) return i;
    FAIL("no instruction " << op);
    return size_t(0);
  };
  SECTION("a matrix type fed to a multiply-add as both A and B") {
    size_t at = first(ck::op::kMulAddNV);
    code[at + 4] = code[at + 3];
    REQUIRE_THROWS_WITH(ck::nv_to_khr(code), Catch::Contains("both as A and as B"));
  }
  SECTION("a load whose layout is not a constant") {
    size_t at = first(ck::op::kLoadNV);
    code[at + 5] = code[at + 3];  // the pointer in place of the column-major constant
    REQUIRE_THROWS_WITH(ck::nv_to_khr(code), Catch::Contains("not a boolean constant"));
  }
  SECTION("a module without the NV capability") {
    for (size_t i = 5; i < code.size(); i += code[i] >> 16)
      if ((code[i] & 0xffff) == kOpCapability && code[i + 1] == ck::kCapabilityNV) code[i + 1] = 1;
    REQUIRE_THROWS_WITH(ck::nv_to_khr(code), Catch::Contains("CooperativeMatrixNV"));
  }
  SECTION("words that are not SPIR-V, or a truncated instruction") {
    REQUIRE_THROWS_WITH(ck::nv_to_khr(std::vector<uint32_t>{1, 2, 3}), "not a SPIR-V module");
    code.resize(6);  // into the first OpCapability
    REQUIRE_THROWS_WITH(ck::nv_to_khr(code), Catch::Contains("malformed instruction"));
  }
}
