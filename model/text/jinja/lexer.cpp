// Lexer: follows jinja2's lexer (jinja2/lexer.py): the text before each tag is cut by the tag's
// whitespace control, then the tag's inside is split into names, literals and operators.
#include "text/jinja/lexer.h"

#include <fmt/format.h>
#include <algorithm>
#include <array>

#include "error.h"
#include "text/jinja/value.h"

namespace vkllm::jinja {

namespace {

[[noreturn]] void syntax_error(int line, const std::string& what) {
  throw Error(fmt::format("template: line {}: {}", line, what));
}

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_name_start(char c) { return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_'; }
bool is_name_char(char c) { return is_name_start(c) || is_digit(c); }

// Newlines to \n, and the last one dropped (keep_trailing_newline is off).
std::string normalize(std::string_view src) {
  std::string s;
  s.reserve(src.size());
  for (size_t i = 0; i < src.size(); ++i) {
    if (src[i] == '\r') {
      s += '\n';
      if (i + 1 < src.size() && src[i + 1] == '\n') ++i;
    } else {
      s += src[i];
    }
  }
  if (!s.empty() && s.back() == '\n') s.pop_back();
  return s;
}

class Lexer {
 public:
  explicit Lexer(std::string s) : s_(std::move(s)) {}
  std::vector<Token> run();

 private:
  size_t skip_spaces(size_t i) const {
    size_t n;
    while (i < s_.size() && (n = space_at(s_, i))) i += n;
    return i;
  }
  void advance_to(size_t to) {  // moves pos_ forward, counting lines
    line_ += int(std::count(s_.begin() + long(pos_), s_.begin() + long(to), '\n'));
    pos_ = to;
  }
  void emit_text(std::string_view text, char sign, bool lstrip);
  bool try_raw(size_t open, char sign);
  void comment(size_t open);
  void tag(bool block);
  size_t tag_end(size_t i, bool block) const;  // length of the closing delimiter at i, or 0
  void close_tag(size_t i, bool block);
  void string_literal();
  void number();

  std::string s_;
  size_t pos_ = 0;
  int line_ = 1;
  bool line_starting_ = true;  // the last thing consumed ended with a newline
  std::vector<Token> out_;
};

std::vector<Token> Lexer::run() {
  while (pos_ < s_.size()) {
    size_t open = s_.find('{', pos_);
    while (open != std::string::npos && open + 1 < s_.size() && s_[open + 1] != '{' && s_[open + 1] != '%' &&
           s_[open + 1] != '#')
      open = s_.find('{', open + 1);
    if (open == std::string::npos || open + 1 >= s_.size()) {
      emit_text(std::string_view(s_).substr(pos_), 0, false);
      advance_to(s_.size());
      break;
    }
    char kind = s_[open + 1];
    char sign = open + 2 < s_.size() && (s_[open + 2] == '-' || s_[open + 2] == '+') ? s_[open + 2] : 0;
    if (kind == '%' && try_raw(open, sign)) continue;
    emit_text(std::string_view(s_).substr(pos_, open - pos_), sign, kind != '{');
    advance_to(open);
    if (kind == '#') {
      comment(open);
    } else {
      out_.push_back({kind == '%' ? Token::Kind::BlockBegin : Token::Kind::VarBegin, "", line_});
      advance_to(open + 2 + (sign ? 1 : 0));
      tag(kind == '%');
    }
  }
  out_.push_back({Token::Kind::End, "", line_});
  return std::move(out_);
}

// The text before a tag: `-` strips all whitespace before it; lstrip_blocks strips the spaces
// between the line's start and a block or comment tag (unless `+`).
void Lexer::emit_text(std::string_view text, char sign, bool lstrip) {
  if (sign == '-') {
    text = strip_spaces(text, false, true);
  } else if (sign != '+' && lstrip) {
    size_t nl = text.rfind('\n');
    size_t l_pos = nl == std::string_view::npos ? 0 : nl + 1;
    if (l_pos > 0 || line_starting_) {
      std::string_view tail = text.substr(l_pos);
      if (!tail.empty() && strip_spaces(tail, true, false).empty()) text = text.substr(0, l_pos);
    }
  }
  if (!text.empty()) out_.push_back({Token::Kind::Text, std::string(text), line_});
}

// {% raw %}...{% endraw %}: the inside is text.
bool Lexer::try_raw(size_t open, char sign) {
  size_t i = skip_spaces(open + 2 + (sign ? 1 : 0));
  if (s_.compare(i, 3, "raw") != 0 || (i + 3 < s_.size() && is_name_char(s_[i + 3]))) return false;
  i = skip_spaces(i + 3);
  bool strip_after = s_.compare(i, 3, "-%}") == 0;
  if (!strip_after && s_.compare(i, 2, "%}") != 0) return false;
  emit_text(std::string_view(s_).substr(pos_, open - pos_), sign, true);
  advance_to(open);
  size_t body = strip_after ? skip_spaces(i + 3) : i + 2;
  for (size_t e = s_.find("{%", body); e != std::string::npos; e = s_.find("{%", e + 2)) {
    char esign = e + 2 < s_.size() && (s_[e + 2] == '-' || s_[e + 2] == '+') ? s_[e + 2] : 0;
    size_t j = skip_spaces(e + 2 + (esign ? 1 : 0));
    if (s_.compare(j, 6, "endraw") != 0) continue;
    j = skip_spaces(j + 6);
    size_t close;
    if (s_.compare(j, 3, "-%}") == 0) {
      close = skip_spaces(j + 3);
    } else if (s_.compare(j, 3, "+%}") == 0) {
      close = j + 3;
    } else if (s_.compare(j, 2, "%}") == 0) {
      close = j + 2 + (j + 2 < s_.size() && s_[j + 2] == '\n');
    } else {
      continue;
    }
    advance_to(body);
    line_starting_ = false;
    emit_text(std::string_view(s_).substr(body, e - body), esign, true);
    advance_to(close);
    line_starting_ = s_[close - 1] == '\n';
    return true;
  }
  syntax_error(line_, "missing end of raw directive");
}

void Lexer::comment(size_t open) {
  size_t body = open + 2 + (open + 2 < s_.size() && (s_[open + 2] == '-' || s_[open + 2] == '+'));
  size_t e = s_.find("#}", body);
  if (e == std::string::npos) syntax_error(line_, "missing end of comment tag");
  size_t close = e + 2;
  char sign = e > body && (s_[e - 1] == '-' || s_[e - 1] == '+') ? s_[e - 1] : 0;
  if (sign == '-')
    close = skip_spaces(close);
  else if (sign != '+' && close < s_.size() && s_[close] == '\n')
    ++close;  // trim_blocks
  advance_to(close);
  line_starting_ = s_[close - 1] == '\n';
}

size_t Lexer::tag_end(size_t i, bool block) const {
  std::string_view close = block ? "%}" : "}}";
  if (s_.compare(i, 2, close) == 0) return 2;
  if ((s_[i] == '-' || (block && s_[i] == '+')) && s_.compare(i + 1, 2, close) == 0) return 3;
  return 0;
}

void Lexer::close_tag(size_t i, bool block) {
  size_t close = i + tag_end(i, block);
  if (s_[i] == '-')
    close = skip_spaces(close);
  else if (block && s_[i] != '+' && close < s_.size() && s_[close] == '\n')
    ++close;  // trim_blocks: the newline after a block tag goes
  out_.push_back({block ? Token::Kind::BlockEnd : Token::Kind::VarEnd, "", line_});
  advance_to(close);
  line_starting_ = s_[close - 1] == '\n';
}

void Lexer::tag(bool block) {
  static const std::array<std::string_view, 6> two = {"//", "**", "==", "!=", ">=", "<="};
  static const std::string_view one = "+-/*%~[](){}><=.:|,;";
  std::string open;  // brackets not yet closed: inside them a closing delimiter is an operator
  for (;;) {
    advance_to(skip_spaces(pos_));
    if (pos_ >= s_.size()) syntax_error(line_, block ? "unexpected end of template: missing '%}'" : "missing '}}'");
    if (open.empty() && tag_end(pos_, block)) return close_tag(pos_, block);
    char c = s_[pos_];
    if (c == '\'' || c == '"') {
      string_literal();
    } else if (is_digit(c)) {
      number();
    } else if (is_name_start(c)) {
      size_t e = pos_;
      while (e < s_.size() && is_name_char(s_[e])) ++e;
      out_.push_back({Token::Kind::Name, s_.substr(pos_, e - pos_), line_});
      pos_ = e;
    } else if (std::find(two.begin(), two.end(), std::string_view(s_).substr(pos_, 2)) != two.end()) {
      out_.push_back({Token::Kind::Op, s_.substr(pos_, 2), line_});
      pos_ += 2;
    } else if (one.find(c) != std::string_view::npos) {
      if (c == '(' || c == '[' || c == '{') open += c == '(' ? ')' : (c == '[' ? ']' : '}');
      if (c == ')' || c == ']' || c == '}') {
        if (open.empty() || open.back() != c) syntax_error(line_, fmt::format("unexpected '{}'", c));
        open.pop_back();
      }
      out_.push_back({Token::Kind::Op, std::string(1, c), line_});
      pos_ += 1;
    } else {
      syntax_error(line_,
                   "unexpected char " + repr(Value(std::string(utf8_chars(std::string_view(s_).substr(pos_, 4))[0]))));
    }
  }
}

int hex_value(char c) {
  if (c >= '0' && c <= '9') return c - '0';
  if (c >= 'a' && c <= 'f') return c - 'a' + 10;
  if (c >= 'A' && c <= 'F') return c - 'A' + 10;
  return -1;
}

void append_utf8(std::string& out, uint32_t cp) {
  if (cp < 0x80) {
    out += char(cp);
  } else if (cp < 0x800) {
    out += char(0xc0 | (cp >> 6));
    out += char(0x80 | (cp & 0x3f));
  } else if (cp < 0x10000) {
    out += char(0xe0 | (cp >> 12));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  } else {
    out += char(0xf0 | (cp >> 18));
    out += char(0x80 | ((cp >> 12) & 0x3f));
    out += char(0x80 | ((cp >> 6) & 0x3f));
    out += char(0x80 | (cp & 0x3f));
  }
}

// A quoted string with Python's escapes (jinja2 decodes literals with "unicode-escape").
void Lexer::string_literal() {
  char q = s_[pos_];
  int line = line_;
  std::string v;
  size_t i = pos_ + 1;
  for (;; ++i) {
    if (i >= s_.size()) syntax_error(line, "unexpected end of string");
    char c = s_[i];
    if (c == q) break;
    if (c != '\\') {
      v += c;
      continue;
    }
    if (++i >= s_.size()) syntax_error(line, "unexpected end of string");
    char e = s_[i];
    static const std::string_view from = "\\'\"abfnrtv\n", to = "\\'\"\a\b\f\n\r\t\v";
    size_t k = from.find(e);
    if (k != std::string_view::npos) {
      if (e != '\n') v += to[k];  // a backslash before a newline joins the lines
    } else if (e >= '0' && e <= '7') {
      uint32_t cp = 0;
      for (int n = 0; n < 3 && i < s_.size() && s_[i] >= '0' && s_[i] <= '7'; ++n, ++i)
        cp = cp * 8 + uint32_t(s_[i] - '0');
      --i;
      append_utf8(v, cp);
    } else if (e == 'x' || e == 'u' || e == 'U') {
      int n = e == 'x' ? 2 : (e == 'u' ? 4 : 8);
      uint32_t cp = 0;
      for (int d = 0; d < n; ++d) {
        int h = i + 1 < s_.size() ? hex_value(s_[i + 1]) : -1;
        if (h < 0) syntax_error(line, fmt::format("truncated \\{} escape in a string", e));
        cp = cp * 16 + uint32_t(h);
        ++i;
      }
      if (cp > 0x10ffff || (cp >= 0xd800 && cp < 0xe000))
        syntax_error(line, "a string escape names no Unicode character");
      append_utf8(v, cp);
    } else if (e == 'N') {
      syntax_error(line, "\\N{...} escapes are not supported");
    } else {
      v += '\\';
      --i;  // the character after the backslash is read again as itself
    }
  }
  out_.push_back({Token::Kind::String, std::move(v), line});
  advance_to(i + 1);
}

// Integers and floats: digits with `_` separators, a fraction and/or an exponent.
void Lexer::number() {
  auto digits = [&](size_t i) {
    size_t j = i;
    while (j < s_.size() && (is_digit(s_[j]) || (s_[j] == '_' && j > i && j + 1 < s_.size() && is_digit(s_[j + 1]))))
      ++j;
    return j;
  };
  size_t e = digits(pos_);
  bool is_float = false;
  if (e + 1 < s_.size() && s_[e] == '.' && is_digit(s_[e + 1])) {
    e = digits(e + 1);
    is_float = true;
  }
  if (e < s_.size() && (s_[e] == 'e' || s_[e] == 'E')) {
    size_t x = e + 1;
    if (x < s_.size() && (s_[x] == '+' || s_[x] == '-')) ++x;
    if (x < s_.size() && is_digit(s_[x])) {
      e = digits(x);
      is_float = true;
    }
  }
  std::string text = s_.substr(pos_, e - pos_);
  text.erase(std::remove(text.begin(), text.end(), '_'), text.end());
  out_.push_back({is_float ? Token::Kind::Float : Token::Kind::Int, text, line_});
  pos_ = e;
}

}  // namespace

std::vector<Token> tokenize(std::string_view source) { return Lexer(normalize(source)).run(); }

}  // namespace vkllm::jinja
