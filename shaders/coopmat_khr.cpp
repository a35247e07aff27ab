// SPV_NV_cooperative_matrix -> SPV_KHR_cooperative_matrix, instruction by instruction.
#include "coopmat_khr.h"

#include <algorithm>
#include <map>
#include <optional>
#include <string>

namespace vkllm::coopmat_khr {

namespace {

constexpr uint32_t kMagic = 0x07230203, kHeaderWords = 5;
constexpr uint32_t kOpExtension = 10, kOpCapability = 17, kOpTypeInt = 21, kOpConstantTrue = 41, kOpConstantFalse = 42,
                   kOpConstant = 43, kOpSpecConstantOp = 52;
const char* const kExtensionNV = "SPV_NV_cooperative_matrix";
const char* const kExtensionKHR = "SPV_KHR_cooperative_matrix";

std::string id(uint32_t v) { return "%" + std::to_string(v); }

struct Inst {
  size_t at;  // index of its first word
  uint32_t words, opcode;
};

std::vector<Inst> parse(std::span<const uint32_t> code) {
  if (code.size() < kHeaderWords || code[0] != kMagic) throw RewriteError("not a SPIR-V module");
  std::vector<Inst> out;
  for (size_t i = kHeaderWords; i < code.size();) {
    uint32_t words = code[i] >> 16, opcode = code[i] & 0xffff;
    if (words == 0 || i + words > code.size()) throw RewriteError("malformed instruction at word " + std::to_string(i));
    out.push_back({i, words, opcode});
    i += words;
  }
  return out;
}

std::string string_at(std::span<const uint32_t> words) {
  std::string s;
  for (uint32_t w : words)
    for (int b = 0; b < 4; ++b) {
      char c = char((w >> (8 * b)) & 0xff);
      if (c == '\0') return s;
      s += c;
    }
  return s;
}

std::vector<uint32_t> string_words(const std::string& s) {
  std::vector<uint32_t> w(s.size() / 4 + 1, 0);  // always room for the terminating zero
  for (size_t i = 0; i < s.size(); ++i) w[i / 4] |= uint32_t(uint8_t(s[i])) << (8 * (i % 4));
  return w;
}

uint32_t header(uint32_t words, uint32_t opcode) { return (words << 16) | opcode; }

// Opcodes with a result type (word 1) and result id (word 2) that may yield a multiply-add
// operand: what a cooperative matrix value can come from in a compute shader.
bool yields_value(uint32_t opcode) {
  switch (opcode) {
    case 1:    // OpUndef
    case 44:   // OpConstantComposite
    case 46:   // OpConstantNull
    case 55:   // OpFunctionParameter
    case 57:   // OpFunctionCall
    case 61:   // OpLoad
    case 80:   // OpCompositeConstruct
    case 81:   // OpCompositeExtract
    case 82:   // OpCompositeInsert
    case 83:   // OpCopyObject
    case 169:  // OpSelect
    case 245:  // OpPhi
    case 400:  // OpCopyLogical
    case op::kLoadNV:
    case op::kMulAddNV:
      return true;
    default:
      return (opcode >= 109 && opcode <= 124) ||  // conversions
             (opcode >= 126 && opcode <= 143);    // arithmetic (negate .. matrix times scalar)
  }
}
bool is_conversion(uint32_t opcode) { return opcode >= 109 && opcode <= 124; }

struct Module {
  std::span<const uint32_t> code;
  std::vector<Inst> insts;
  size_t first_matrix = SIZE_MAX;              // index of the first matrix type instruction
  size_t uint_type = SIZE_MAX;                 // index of OpTypeInt 32 0
  std::map<uint32_t, uint32_t> uint_const;     // value -> id, declared before first_matrix
  std::map<uint32_t, bool> bool_const;         // id -> value (OpConstantTrue/False)
  std::map<uint32_t, uint32_t> type_of;        // value id -> its type id
  std::map<uint32_t, std::optional<Use>> use;  // matrix type id -> its use, once known

  uint32_t word(const Inst& in, uint32_t k) const { return code[in.at + k]; }
};

const char* use_name(Use u) { return u == Use::A ? "A" : u == Use::B ? "B" : "the accumulator"; }

void give_use(Module& m, uint32_t value, Use u, bool is_type = false) {
  uint32_t type = value;
  if (!is_type) {
    auto t = m.type_of.find(value);
    if (t == m.type_of.end())
      throw RewriteError("multiply-add operand " + id(value) + " comes from an instruction the rewrite does not know");
    type = t->second;
  }
  auto it = m.use.find(type);
  if (it == m.use.end()) throw RewriteError("multiply-add operand " + id(value) + " is not a cooperative matrix");
  if (it->second && *it->second != u)
    throw RewriteError("matrix type " + id(type) + " is used both as " + use_name(*it->second) + " and as " +
                       use_name(u) + " of a multiply-add; give the two matrices distinct types (e.g. distinct " +
                       "specialization constants for their sizes)");
  it->second = u;
}

Module read(std::span<const uint32_t> code) {
  Module m;
  m.code = code;
  m.insts = parse(code);
  bool nv_capability = false;
  for (size_t i = 0; i < m.insts.size(); ++i) {
    const Inst& in = m.insts[i];
    uint32_t op = in.opcode;
    if (op == kOpCapability && in.words == 2 && m.word(in, 1) == kCapabilityNV) nv_capability = true;
    if (op == kOpTypeInt && in.words == 4 && m.word(in, 2) == 32 && m.word(in, 3) == 0 && m.uint_type == SIZE_MAX)
      m.uint_type = i;
    if (op == kOpConstant && in.words == 4 && m.uint_type != SIZE_MAX && i < m.first_matrix &&
        m.word(in, 1) == m.word(m.insts[m.uint_type], 1))
      m.uint_const.emplace(m.word(in, 3), m.word(in, 2));
    if (op == kOpConstantTrue || op == kOpConstantFalse) m.bool_const[m.word(in, 2)] = op == kOpConstantTrue;
    if (op == op::kTypeNV) {
      if (in.words != 6) throw RewriteError("OpTypeCooperativeMatrixNV with " + std::to_string(in.words) + " words");
      m.first_matrix = std::min(m.first_matrix, i);
      m.use[m.word(in, 1)] = std::nullopt;
    }
    if (op == kOpSpecConstantOp && in.words >= 4) {
      uint32_t inner = m.word(in, 3);
      if (inner >= op::kTypeNV && inner <= op::kLengthNV)
        throw RewriteError("OpSpecConstantOp over a cooperative-matrix instruction (e.g. .length() of a matrix)");
    }
    if (yields_value(op) && in.words >= 3) m.type_of[m.word(in, 2)] = m.word(in, 1);
  }
  if (!nv_capability) throw RewriteError("the module does not declare the CooperativeMatrixNV capability");
  if (m.uint_type == SIZE_MAX || m.uint_type > m.first_matrix)
    throw RewriteError("no 32-bit unsigned integer type before the first matrix type");
  for (const Inst& in : m.insts) {
    if (in.opcode == op::kMulAddNV) {
      if (in.words != 6) throw RewriteError("OpCooperativeMatrixMulAddNV with operands the rewrite does not know");
      give_use(m, m.word(in, 1), Use::Accumulator, true);
      give_use(m, m.word(in, 3), Use::A);
      give_use(m, m.word(in, 4), Use::B);
      give_use(m, m.word(in, 5), Use::Accumulator);
    }
  }
  for (const auto& [type, u] : m.use)
    if (!u) throw RewriteError("matrix type " + id(type) + " feeds no multiply-add, so its use is unknown");
  // A conversion keeps the use (KHR converts only between matrices of one use).
  for (const Inst& in : m.insts) {
    if (!is_conversion(in.opcode) || in.words != 4) continue;
    auto to = m.use.find(m.word(in, 1));
    auto from_type = m.type_of.find(m.word(in, 3));
    if (to == m.use.end() || from_type == m.type_of.end()) continue;
    auto from = m.use.find(from_type->second);
    if (from != m.use.end() && *from->second != *to->second)
      throw RewriteError("a conversion between matrices of different uses (" + id(m.word(in, 2)) + ")");
  }
  return m;
}

}  // namespace

std::vector<uint32_t> nv_to_khr(std::span<const uint32_t> nv) {
  Module m = read(nv);
  uint32_t bound = nv[3];
  const uint32_t uint_id = m.word(m.insts[m.uint_type], 1);
  std::vector<uint32_t> added;  // new OpConstant instructions, placed right after the uint type
  auto constant = [&](uint32_t value) {
    auto it = m.uint_const.find(value);
    if (it != m.uint_const.end()) return it->second;
    uint32_t id_new = bound++;
    added.insert(added.end(), {header(4, kOpConstant), uint_id, id_new, value});
    m.uint_const.emplace(value, id_new);
    return id_new;
  };
  auto layout = [&](uint32_t column_major) {
    auto b = m.bool_const.find(column_major);
    if (b == m.bool_const.end())
      throw RewriteError("a matrix load or store whose column-major operand " + id(column_major) +
                         " is not a boolean constant");
    return constant(uint32_t(b->second ? Layout::ColumnMajor : Layout::RowMajor));
  };

  std::vector<uint32_t> body;
  size_t after_uint = 0;
  for (size_t i = 0; i < m.insts.size(); ++i) {
    const Inst& in = m.insts[i];
    std::span<const uint32_t> w = nv.subspan(in.at, in.words);
    switch (in.opcode) {
      case kOpCapability:
        body.insert(body.end(), {w[0], w[1] == kCapabilityNV ? kCapabilityKHR : w[1]});
        break;
      case kOpExtension:
        if (string_at(w.subspan(1)) == kExtensionNV) {
          std::vector<uint32_t> s = string_words(kExtensionKHR);
          body.push_back(header(uint32_t(1 + s.size()), kOpExtension));
          body.insert(body.end(), s.begin(), s.end());
        } else {
          body.insert(body.end(), w.begin(), w.end());
        }
        break;
      case op::kTypeNV:  // result, component, scope, rows, columns -> ... use
        body.insert(body.end(),
                    {header(7, op::kTypeKHR), w[1], w[2], w[3], w[4], w[5], constant(uint32_t(*m.use.at(w[1])))});
        break;
      case op::kLoadNV:  // type, result, pointer, stride, column-major, [memory access]
        if (in.words < 6) throw RewriteError("OpCooperativeMatrixLoadNV with too few operands");
        body.insert(body.end(), {header(in.words, op::kLoadKHR), w[1], w[2], w[3], layout(w[5]), w[4]});
        body.insert(body.end(), w.begin() + 6, w.end());
        break;
      case op::kStoreNV:  // pointer, object, stride, column-major, [memory access]
        if (in.words < 5) throw RewriteError("OpCooperativeMatrixStoreNV with too few operands");
        body.insert(body.end(), {header(in.words, op::kStoreKHR), w[1], w[2], layout(w[4]), w[3]});
        body.insert(body.end(), w.begin() + 5, w.end());
        break;
      case op::kMulAddNV:
      case op::kLengthNV:
        body.push_back(header(in.words, in.opcode == op::kMulAddNV ? op::kMulAddKHR : op::kLengthKHR));
        body.insert(body.end(), w.begin() + 1, w.end());
        break;
      default:
        body.insert(body.end(), w.begin(), w.end());
    }
    if (i == m.uint_type) after_uint = body.size();
  }
  // New constants go right after the unsigned integer type, which precedes every matrix type and
  // every function; the layout constants are only known once the loads and stores are rewritten.
  body.insert(body.begin() + ptrdiff_t(after_uint), added.begin(), added.end());

  std::vector<uint32_t> out(nv.begin(), nv.begin() + kHeaderWords);
  out[3] = bound;
  out.insert(out.end(), body.begin(), body.end());
  return out;
}

}  // namespace vkllm::coopmat_khr
