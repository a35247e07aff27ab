// The GBNF parser: text to Grammar. Repetitions become rules (x* is R ::= x R | empty), character
// classes become byte sequences (one byte range inline, otherwise a rule of alternatives).
#include "text/grammar/gbnf.h"

#include <fmt/format.h>
#include <algorithm>
#include <map>
#include <set>
#include <unordered_map>

#include "error.h"
#include "text/grammar/utf8_ranges.h"
#include "text/tokenizer.h"

namespace vkllm::grammar {

namespace {

using Sequence = std::vector<Element>;

constexpr int kMaxNesting = 256;  // ( groups within groups

bool is_name_char(char c) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '-' || c == '_';
}

class Parser {
 public:
  Parser(std::string_view text, const Tokenizer* vocab) : s_(text), vocab_(vocab) {}

  Grammar run() {
    ENSURE(s_.size() <= kMaxGbnfBytes,
           fmt::format("the grammar is too large: {} bytes (at most {})", s_.size(), kMaxGbnfBytes));
    skip_space(true);
    while (i_ < s_.size()) {
      parse_rule();
      skip_space(true);
    }
    ENSURE(!defined_.empty(), "the grammar is empty: it has no rules");
    for (auto& [name, rule] : rule_ids_)
      ENSURE(defined_.count(name), fmt::format("grammar: rule '{}' is used but never defined", name));
    auto root = rule_ids_.find("root");
    ENSURE(root != rule_ids_.end(), "the grammar has no 'root' rule");
    g_.finish(root->second);
    return std::move(g_);
  }

 private:
  [[noreturn]] void fail(const std::string& what) const {
    size_t line = 1, col = 1;
    for (size_t k = 0; k < i_ && k < s_.size(); ++k) s_[k] == '\n' ? (++line, col = 1) : ++col;
    throw Error(fmt::format("grammar: line {}, column {}: {}", line, col, what));
  }
  bool at_end() const { return i_ >= s_.size(); }
  char peek(size_t k = 0) const { return i_ + k < s_.size() ? s_[i_ + k] : '\0'; }

  // Spaces, tabs and comments; newlines too when `newlines` (inside groups, after '|').
  void skip_space(bool newlines) {
    while (!at_end()) {
      char c = peek();
      if (c == '#') {
        while (!at_end() && peek() != '\n') ++i_;
      } else if (c == ' ' || c == '\t' || c == '\r' || (newlines && c == '\n')) {
        ++i_;
      } else {
        return;
      }
    }
  }

  std::string parse_name() {
    size_t start = i_;
    while (!at_end() && is_name_char(peek())) ++i_;
    if (i_ == start) fail(at_end() ? "unexpected end of the grammar" : fmt::format("expected a rule name"));
    return std::string(s_.substr(start, i_ - start));
  }

  uint32_t rule_named(const std::string& name) {
    auto [it, fresh] = rule_ids_.emplace(name, 0);
    if (fresh) it->second = g_.add_rule(name);
    return it->second;
  }

  void parse_rule() {
    std::string name = parse_name();
    skip_space(false);
    if (s_.substr(i_, 3) != "::=") fail(fmt::format("expected '::=' after rule name '{}'", name));
    i_ += 3;
    if (!defined_.insert(name).second) fail(fmt::format("rule '{}' is defined twice", name));
    uint32_t rule = rule_named(name);
    parse_alternatives(rule, false);
    if (!at_end() && peek() != '\n') fail(fmt::format("unexpected '{}'", peek()));
  }

  // sequence ('|' sequence)*, into `rule`; inside a group newlines are spaces.
  void parse_alternatives(uint32_t rule, bool nested) {
    if (nested && ++depth_ > kMaxNesting) fail(fmt::format("groups nested deeper than {}", kMaxNesting));
    for (;;) {
      Sequence seq = parse_sequence(nested);
      g_.add_alternative(rule, seq);
      if (peek() != '|') break;
      ++i_;
      skip_space(true);
    }
    if (nested) --depth_;
  }

  Sequence parse_sequence(bool nested) {
    Sequence seq;
    size_t last = 0;  // where the last atom starts in seq (repetitions apply to it)
    for (;;) {
      skip_space(nested);
      char c = peek();
      if (at_end() || c == '|' || c == ')' || c == '\n') return seq;
      if (c == '*' || c == '+' || c == '?' || c == '{') {
        if (last == seq.size()) fail(fmt::format("'{}' repeats nothing", c));
        Sequence atom(seq.begin() + long(last), seq.end());
        seq.resize(last);
        repeat(std::move(atom), seq);
        last = seq.size();
        continue;
      }
      last = seq.size();
      parse_atom(seq);
    }
  }

  void parse_atom(Sequence& seq) {
    char c = peek();
    if (c == '"') {
      ++i_;
      while (peek() != '"') {
        if (at_end() || peek() == '\n') fail("unterminated string literal");
        for (uint8_t b : utf8_encode(parse_char())) seq.push_back({Op::Bytes, b, b, 0});
      }
      ++i_;
    } else if (c == '[') {
      ++i_;
      append_class(parse_class(), seq);
    } else if (c == '.') {
      ++i_;
      append_class({{0, kMaxCodePoint}}, seq);
    } else if (c == '(') {
      ++i_;
      skip_space(true);
      uint32_t group = g_.add_rule(fmt::format("group-{}", g_.rules()));
      parse_alternatives(group, true);
      if (peek() != ')') fail("expected ')'");
      ++i_;
      seq.push_back({Op::Rule, 0, 0, group});
    } else if (c == '<' || (c == '!' && peek(1) == '<')) {
      bool negated = c == '!';
      i_ += negated ? 2 : 1;
      seq.push_back({negated ? Op::NotToken : Op::Token, 0, 0, parse_token()});
    } else if (is_name_char(c)) {
      seq.push_back({Op::Rule, 0, 0, rule_named(parse_name())});
    } else {
      fail(fmt::format("unexpected '{}'", c));
    }
  }

  // <[id]> or <text>, after the '<'.
  uint32_t parse_token() {
    size_t close = s_.find('>', i_ + (peek() == '>' ? 1 : 0));
    if (close == std::string_view::npos) fail("unterminated token reference (missing '>')");
    std::string_view inner = s_.substr(i_, close - i_);
    if (!vocab_) fail("token references (<...>) need a model's vocabulary");
    int64_t id = -1;
    if (inner.size() > 2 && inner.front() == '[' && inner.back() == ']') {
      id = 0;
      for (char d : inner.substr(1, inner.size() - 2)) {
        if (d < '0' || d > '9') fail("expected a token id in <[...]>");
        id = std::min<int64_t>(id * 10 + (d - '0'), int64_t(1) << 40);  // saturates: only the range check matters
      }
      if (id >= int64_t(vocab_->vocab_size()))
        fail(fmt::format("token id {} is outside the vocabulary of {} tokens", id, vocab_->vocab_size()));
    } else {
      id = vocab_->find(fmt::format("<{}>", inner));
      if (id < 0) fail(fmt::format("'<{}>' is not a token of the vocabulary", inner));
    }
    if (vocab_->is_end_of_generation(int32_t(id)))
      fail(fmt::format("token {} ends the generation: a grammar cannot name it (the output ends where 'root' does)",
                       id));
    i_ = close + 1;
    return uint32_t(id);
  }

  // One character of a literal or class, escapes decoded; the source's UTF-8 decoded.
  uint32_t parse_char() {
    unsigned char c = uint8_t(peek());
    if (c == '\\') {
      ++i_;
      char e = peek();
      ++i_;
      switch (e) {
        case 'n':
          return '\n';
        case 'r':
          return '\r';
        case 't':
          return '\t';
        case '\\':
        case '"':
        case '[':
        case ']':
        case '-':
        case '^':
          return uint8_t(e);
        case 'x':
          return parse_hex(2);
        case 'u':
          return parse_hex(4);
        case 'U':
          return parse_hex(8);
        default:
          --i_;
          fail(at_end() ? "unexpected end after '\\'" : fmt::format("unknown escape '\\{}'", e));
      }
    }
    size_t len = utf8_char_length(c);
    if (i_ + len > s_.size()) fail("the grammar is not valid UTF-8");
    std::string_view ch = s_.substr(i_, len);
    for (size_t k = 1; k < len; ++k)
      if ((uint8_t(ch[k]) & 0xC0) != 0x80) fail("the grammar is not valid UTF-8");
    uint32_t cp = decode_utf8(ch);
    if ((c >= 0x80 && len == 1) || cp > kMaxCodePoint || (cp >= 0xD800 && cp <= 0xDFFF) ||
        (len > 1 && utf8_encode(cp).size() != len))
      fail("the grammar is not valid UTF-8");
    i_ += len;
    return cp;
  }

  uint32_t parse_hex(int digits) {
    uint32_t v = 0;
    for (int k = 0; k < digits; ++k) {
      char d = peek();
      int x = d >= '0' && d <= '9'   ? d - '0'
              : d >= 'a' && d <= 'f' ? d - 'a' + 10
              : d >= 'A' && d <= 'F' ? d - 'A' + 10
                                     : -1;
      if (x < 0) fail(fmt::format("expected {} hex digits", digits));
      v = v << 4 | uint32_t(x);
      ++i_;
    }
    if (v > kMaxCodePoint || (v >= 0xD800 && v <= 0xDFFF)) fail(fmt::format("U+{:X} is not a character", v));
    return v;
  }

  std::vector<CodeRange> parse_class() {
    bool negate = peek() == '^';
    if (negate) ++i_;
    std::vector<CodeRange> ranges;
    while (peek() != ']') {
      if (at_end() || peek() == '\n') fail("unterminated character class");
      uint32_t lo = parse_char(), hi = lo;
      if (peek() == '-' && peek(1) != ']') {
        ++i_;
        if (at_end()) fail("unterminated character class");
        hi = parse_char();
        if (hi < lo) fail("a character range goes backwards");
      }
      ranges.push_back({lo, hi});
    }
    ++i_;
    std::vector<CodeRange> set = normalize(std::move(ranges), negate);
    if (set.empty()) fail("the character class matches nothing");
    return set;
  }

  // One byte range inline; anything else a rule of byte sequences, shared between equal classes.
  void append_class(const std::vector<CodeRange>& set, Sequence& seq) {
    std::vector<std::vector<ByteRange>> alts;
    for (const CodeRange& r : set)
      for (auto& s : utf8_sequences(r.lo, r.hi)) alts.push_back(std::move(s));
    if (alts.size() == 1 && alts[0].size() == 1) {
      seq.push_back({Op::Bytes, alts[0][0].lo, alts[0][0].hi, 0});
      return;
    }
    std::vector<uint32_t> key;
    for (const CodeRange& r : set) key.insert(key.end(), {r.lo, r.hi});
    auto [it, fresh] = classes_.emplace(std::move(key), 0);
    if (fresh) {
      it->second = g_.add_rule(fmt::format("class-{}", g_.rules()));
      for (const auto& alt : alts) {
        Sequence s;
        for (ByteRange b : alt) s.push_back({Op::Bytes, b.lo, b.hi, 0});
        g_.add_alternative(it->second, s);
      }
    }
    seq.push_back({Op::Rule, 0, 0, it->second});
  }

  // x* -> R ::= x R | ; x+ -> x x*; x? -> R ::= x | ; x{m,n} -> m copies of x, then n - m nested
  // optional copies (R_k ::= x R_(k-1) | ), which keeps the matcher's stacks shallow.
  void repeat(Sequence atom, Sequence& seq) {
    uint32_t lo = 0, hi = UINT32_MAX;  // UINT32_MAX: no upper bound
    char c = peek();
    ++i_;
    if (c == '+') lo = 1;
    if (c == '?') hi = 1;
    if (c == '{') parse_bounds(lo, hi);
    if (size_t(lo) * atom.size() + seq.size() > kMaxGrammarElements)
      fail(fmt::format("the grammar is too large: more than {} elements", kMaxGrammarElements));
    for (uint32_t k = 0; k < lo; ++k) seq.insert(seq.end(), atom.begin(), atom.end());
    if (hi == lo) return;
    uint32_t tail = g_.add_rule(fmt::format("rep-{}", g_.rules()));
    g_.add_alternative(tail, {});
    if (hi == UINT32_MAX) {
      Sequence again = atom;
      again.push_back({Op::Rule, 0, 0, tail});
      g_.add_alternative(tail, again);
    } else {
      g_.add_alternative(tail, atom);  // R_1 ::= x |
      for (uint32_t k = lo + 1; k < hi; ++k) {
        uint32_t outer = g_.add_rule(fmt::format("rep-{}", g_.rules()));
        Sequence s = atom;
        s.push_back({Op::Rule, 0, 0, tail});
        g_.add_alternative(outer, {});
        g_.add_alternative(outer, s);
        tail = outer;
      }
    }
    seq.push_back({Op::Rule, 0, 0, tail});
  }

  void parse_bounds(uint32_t& lo, uint32_t& hi) {
    auto number = [&] {
      skip_space(false);
      if (peek() < '0' || peek() > '9') fail("expected a number in {m,n}");
      uint64_t v = 0;
      while (peek() >= '0' && peek() <= '9') {
        v = v * 10 + uint64_t(peek() - '0');
        if (v > kMaxRepetition) fail(fmt::format("a repetition count above {}", kMaxRepetition));
        ++i_;
      }
      skip_space(false);
      return uint32_t(v);
    };
    lo = number();
    hi = lo;
    if (peek() == ',') {
      ++i_;
      skip_space(false);
      hi = peek() == '}' ? UINT32_MAX : number();
    }
    if (peek() != '}') fail("expected '}'");
    ++i_;
    if (hi < lo) fail(fmt::format("{{{},{}}} repeats at most fewer times than at least", lo, hi));
  }

  std::string_view s_;
  const Tokenizer* vocab_;
  size_t i_ = 0;
  int depth_ = 0;
  Grammar g_;
  std::unordered_map<std::string, uint32_t> rule_ids_;
  std::set<std::string> defined_;
  std::map<std::vector<uint32_t>, uint32_t> classes_;
};

}  // namespace

Grammar parse_gbnf(std::string_view text, const Tokenizer* vocab) { return Parser(text, vocab).run(); }

}  // namespace vkllm::grammar
