// The Jinja2 engine against Python's jinja2 (the expected texts were printed by jinja2 3.1 with
// Hugging Face's settings), and its behaviour on bad and hostile templates: one error line, never
// a hang or a crash.
#include <string>

#include "catch.h"
#include "error.h"
#include "text/chat_template.h"

namespace {

using vkllm::jinja::Value;

struct JinjaCase {
  const char* source;
  const char* expected;  // nullptr: jinja2 raises
};

// Variables every case sees: d = {'x': 1}, msg = {'role': 'user', 'content': 'hi'}.
const JinjaCase kCases[] = {
    {"a\n{% if true %}\n  b\n{% endif %}\nc\n", "a\n  b\nc"},
    {"  {% if true %}x{% endif %}  \n  {{ 'y' }}  \n", "x  \n  y  "},
    {"a  {%- if true -%}  b  {%- endif -%}  c", "abc"},
    {"a\n  {%+ if true %}b{% endif %}\n", "a\n  b"},
    {"{# c #}\nx {#- c -#} y\n", "xy"},
    {"{% raw %}{{ x }}{% endraw %}\n", "{{ x }}"},
    {"a\r\nb\rc\n\n", "a\nb\nc\n"},
    {"{% for x in [1,2,3] %}{{ loop.index }}{{ loop.index0 }}{{ loop.first }}{{ loop.last }}{{ loop.length }}{{ "
     "loop.revindex }}{{ loop.previtem }}{{ loop.nextitem }};{% endfor %}",
     "10TrueFalse332;21FalseFalse3213;32FalseTrue312;"},
    {"{% for x in [] %}a{% else %}empty{% endfor %}", "empty"},
    {"{% for x in range(10) if x is odd %}{{ x }}{{ loop.index }} {% endfor %}", "11 32 53 74 95 "},
    {"{% for x in range(10) %}{% if x == 2 %}{% continue %}{% endif %}{% if x == 5 %}{% break %}{% endif %}{{ x }}{% "
     "endfor %}",
     "0134"},
    {"{% set x = 1 %}{% for i in [1,2] %}{{ x }}{% set x = x + 10 %}{{ x }} {% endfor %}{{ x }}", "111 111 1"},
    {"{% set ns = namespace(n=0) %}{% for i in [1,2,3] %}{% set ns.n = ns.n + i %}{% endfor %}{{ ns.n }}", "6"},
    {"{% if true %}{% set y = 5 %}{% endif %}{{ y }}", "5"},
    {"{% macro f(a, b='B', c=none) %}[{{ a }}|{{ b }}|{{ c }}]{% endmacro %}{{ f(1) }}{{ f(1, 2, 3) }}{{ f(a=4, c='C') "
     "}}",
     "[1|B|None][1|2|3][4|B|C]"},
    {"{% macro fact(n) %}{% if n <= 1 %}1{% else %}{{ n * fact(n - 1)|int }}{% endif %}{% endmacro %}{{ fact(5) }}",
     "120"},
    {"{{ {'b': 1, 'a': [1, 2.5, 'x', none, true]} | tojson }}", "{\"b\": 1, \"a\": [1, 2.5, \"x\", null, true]}"},
    {"{{ {'b': 1, 'a': [1, {}], 'c': []} | tojson(indent=2) }}",
     "{\n  \"b\": 1,\n  \"a\": [\n    1,\n    {}\n  ],\n  \"c\": []\n}"},
    {"{{ 'é\"\\n\\u0001' | tojson }} {{ 'é' | tojson(ensure_ascii=True) }}", "\"é\\\"\\n\\u0001\" \"\\u00e9\""},
    {"{{ [0.1, 1.0, 1e16, 1.5e-5, 123456789.123, -0.0, 100.0, 1e-4, 2.5e15] }}",
     "[0.1, 1.0, 1e+16, 1.5e-05, 123456789.123, -0.0, 100.0, 0.0001, 2500000000000000.0]"},
    {"{{ [1, 'a', none, true, (1,), {'k': \"it's\"}] }}", "[1, 'a', None, True, (1,), {'k': \"it's\"}]"},
    {"{{ 'hello'[1:3] }}{{ 'hello'[::-1] }}{{ [1,2,3,4][-2:] }}{{ 'héllo'[1] }}{{ [1,2,3][::2] }}",
     "elolleh[3, 4]é[1, 3]"},
    {"{{ '  a b  '.strip() }}|{{ 'a,b,,c'.split(',') }}|{{ ' a  b '.split() }}|{{ 'abc'.startswith('ab') }}{{ "
     "'abc'.endswith(('x', 'c')) }}|{{ 'xxaxx'.strip('x') }}|{{ 'a b c'.split(' ', 1) }}|{{ 'a b c'.rsplit(' ', 1) }}",
     "a b|['a', 'b', '', 'c']|['a', 'b']|TrueTrue|a|['a', 'b c']|['a b', 'c']"},
    {"{{ 'Hello World'.upper() }}{{ 'Hello'.lower() }}{{ 'hello world'.title() }}{{ 'hELLO'.capitalize() }}{{ "
     "'aaa'.replace('a', 'b', 2) }}{{ 'abc'.replace('', '-') }}",
     "HELLO WORLDhelloHello WorldHellobba-a-b-c-"},
    {"{{ '{} and {name}'.format(1, name='x') }} {{ '%s=%d' % ('a', 3) }} {{ '%05.1f|%-4s|' % (3.14159, 'ab') }}",
     "1 and x a=3 003.1|ab  |"},
    {"{{ [3, 1, 2] | sort }}{{ ['b', 'A', 'c'] | sort }}{{ [3,1,2] | sort(reverse=true) }}{{ {'b': 1, 'a': 2} | "
     "dictsort }}",
     "[1, 2, 3]['A', 'b', 'c'][3, 2, 1][('a', 2), ('b', 1)]"},
    {"{{ [1, 2, 3] | join(', ') }}|{{ [{'a': 1}, {'a': 2}] | map(attribute='a') | list }}|{{ ['a', 'b'] | map('upper') "
     "| join }}",
     "1, 2, 3|[1, 2]|AB"},
    {"{{ [1, 2, 3, 4] | select('odd') | list }}{{ [{'t': 'x'}, {'t': 'y'}] | selectattr('t', 'equalto', 'y') | list "
     "}}{{ [1, 2] | reject('odd') | list }}",
     "[1, 3][{'t': 'y'}][2]"},
    {"{{ [1, 2, 2, 1] | unique | list }}{{ [3, 5, 1] | max }}{{ [3, 5, 1] | min }}{{ [1, 2] | first }}{{ [1, 2] | last "
     "}}{{ [1,2,3] | sum }}",
     "[1, 2]51126"},
    {"{{ x | default('d') }}{{ '' | default('e', true) }}{{ none | upper }}{{ '42' | int + 1 }}{{ '4.7' | int }}{{ 'x' "
     "| int }}{{ '2.5' | float }}",
     "deNONE43402.5"},
    {"{{ 'a\nb\n\nc' | indent(2) }}|{{ 'a\nb' | indent(2, true) }}", "a\n  b\n\n  c|  a\n  b"},
    {"{{ x is defined }}{{ none is none }}{{ 'a' is string }}{{ {} is mapping }}{{ [] is iterable }}{{ 3 is number "
     "}}{{ true is boolean }}{{ 4 is divisibleby 2 }}{{ 'a' in 'cat' }}{{ 2 in [1, 2] }}{{ 'k' in {'k': 1} }}{{ 3 not "
     "in [1] }}",
     "FalseTrueTrueTrueTrueTrueTrueTrueTrueTrueTrueTrue"},
    {"{{ 7 // 2 }} {{ -7 // 2 }} {{ 7 % 3 }} {{ -7 % 3 }} {{ 7 / 2 }} {{ 2 ** 10 }} {{ 1 + 2.5 }} {{ 'ab' * 3 }} {{ "
     "[1] + [2] }} {{ 1 ~ 'a' ~ none }} {{ true + 1 }}",
     "3 -4 1 2 3.5 1024 3.5 ababab [1, 2] 1aNone 2"},
    {"{{ 1 < 2 < 3 }}{{ 1 < 3 < 2 }}{{ 1 == 1.0 }}{{ 'a' if false }}|{{ 'a' if false else 'b' }}{{ none or 'x' }}{{ "
     "'y' and 0 }}{{ not [] }}",
     "TrueFalseTrue|bx0True"},
    {"{{ -3 | abs }} {{ 2.567 | round(2) }} {{ [1,2,3] | length }} {{ 'héllo' | length }} {{ {'a': 1} | items | list "
     "}}",
     "3 2.57 3 5 [('a', 1)]"},
    {"{% set x %}inner {{ 1 + 1 }}{% endset %}[{{ x }}]{% filter upper %}shout {{ 'it' }}{% endfilter %}",
     "[inner 2]SHOUT IT"},
    {"{{ ('<b>' | safe) + '<i>' }} {{ '<i>' ~ ('<b>' | safe) }} {{ '<&>' | e }}", "<b>&lt;i&gt; <i><b> &lt;&amp;&gt;"},
    {"{{ [1, 2] | map('string') | tojson }}", nullptr},
    {"{% for k, v in {'a': 1, 'b': 2}.items() %}{{ k }}={{ v }};{% endfor %}{% for a, b in [[1, 2], [3, 4]] %}{{ a + b "
     "}}{% endfor %}",
     "a=1;b=2;37"},
    {"{% set a, b = 1, 2 %}{{ a }}{{ b }}{{ (1, 2) }}{{ d.get('x', 'dflt') }}{{ d.get('y') }}{{ {'a': 1}.keys() | list "
     "}}",
     "12(1, 2)1None['a']"},
    {"{% with a = 1, b = 2 %}{{ a + b }}{% endwith %}{{ a is defined }}", "3False"},
    {"{{ 'x' if [] | selectattr('a') else 'y' }}{{ 'p' if [] | list else 'q' }}", "xq"},
    {"{{ \"it's\" | tojson }} {{ [1, 2] | tojson(separators=(',', ':')) }} {{ {'b': 1, 'a': 2} | "
     "tojson(sort_keys=true) }}",
     "\"it's\" [1,2] {\"a\": 2, \"b\": 1}"},
};

std::string render(std::string_view source, const vkllm::jinja::Limits& limits = {}) {
  auto t = vkllm::jinja::Template::parse(source);
  return t.render({{"d", Value::dict({{"x", Value(1)}})},
                   {"msg", Value::dict({{"role", Value("user")}, {"content", Value("hi")}})}},
                  limits);
}

// The one line a failure gives.
std::string render_error(std::string_view source, const vkllm::jinja::Limits& limits = {}) {
  try {
    render(source, limits);
  } catch (const vkllm::Error& e) {
    return e.what();
  }
  return "(no error)";
}

}  // namespace

TEST_CASE("jinja renders as Python's jinja2", "[jinja]") {
  for (const JinjaCase& c : kCases) {
    INFO("template: " << c.source);
    if (c.expected) {
      CHECK(render(c.source) == c.expected);
    } else {
      CHECK_THROWS_AS(render(c.source), vkllm::Error);
    }
  }
}

TEST_CASE("jinja float repr is Python's", "[jinja]") {
  using vkllm::jinja::float_repr;
  CHECK(float_repr(0.1) == "0.1");
  CHECK(float_repr(1.0 / 3) == "0.3333333333333333");
  CHECK(float_repr(1e22) == "1e+22");
  CHECK(float_repr(123e-20) == "1.23e-18");
  CHECK(float_repr(9999999999999998.0) == "9999999999999998.0");
  CHECK(float_repr(5e-324) == "5e-324");
}

TEST_CASE("jinja syntax errors are one line with the line number", "[jinja]") {
  CHECK(render_error("a\n{% if x %}\nb") == "template: line 3: unexpected end of template: missing 'endif'");
  CHECK(render_error("{{ 1 + }}") == "template: line 1: unexpected end of print statement");
  CHECK(render_error("\n\n{% frobnicate %}") == "template: line 3: unknown tag 'frobnicate'");
  CHECK(render_error("{% include 'x' %}") == "template: line 1: the 'include' statement is not supported");
  CHECK(render_error("{{ 'abc }}") == "template: line 1: unexpected end of string");
  CHECK(render_error("{# open") == "template: line 1: missing end of comment tag");
  CHECK(render_error("{{ x") == "template: line 1: missing '}}'");
  CHECK(render_error("{% break %}") == "template: line 1: 'break' outside of a loop");
  CHECK(render_error("{{ x | nosuchfilter }}") == "template: line 1: no filter named 'nosuchfilter'");
  CHECK(render_error("{{ 1 is nosuchtest }}") == "template: line 1: no test named 'nosuchtest'");
  CHECK(render_error("ok\xff") == "template: invalid UTF-8 at byte 2");
  CHECK(render_error("{{ $ }}") == "template: line 1: unexpected char '$'");
}

TEST_CASE("jinja runtime errors name the line", "[jinja]") {
  CHECK(render_error("\n{{ nope.attr }}") == "template: line 2: 'nope' is undefined");
  CHECK(render_error("{{ 1 / 0 }}") == "template: line 1: division by zero");
  CHECK(render_error("{{ 'a' + 1 }}") == "template: line 1: unsupported operand type(s) for +: 'str' and 'int'");
  CHECK(render_error("{{ [1].append(2) }}").find("may not modify a list") != std::string::npos);
  CHECK(render_error("{% set x = 5 %}{% set x.a = 1 %}") ==
        "template: line 1: cannot assign attribute on non-namespace object");
  CHECK(render_error("{{ [1, 2] | map('string') | tojson }}") ==
        "template: line 1: Object of type generator is not JSON serializable");
}

TEST_CASE("jinja bounds loops, recursion, output and nesting", "[jinja]") {
  vkllm::jinja::Limits small{.max_output = 1 << 16, .max_steps = 100'000, .max_call_depth = 16};
  CHECK(render_error("{% for i in range(100000) %}{% for j in range(100000) %}x{% endfor %}{% endfor %}", small)
            .find("ran longer than 100000 steps") != std::string::npos);
  CHECK(render_error("{% macro f(n) %}{{ f(n + 1) }}{% endmacro %}{{ f(0) }}", small)
            .find("macro calls nested deeper than 16") != std::string::npos);
  CHECK(render_error("{{ 'x' * 100000000000 }}", small).find("text longer than 65536 bytes") != std::string::npos);
  CHECK(render_error("{% for i in range(1000) %}{{ 'abcdefghij' * 100 }}{% endfor %}", small).find("text longer") !=
        std::string::npos);
  CHECK(render_error("{{ range(1000000) }}").find("Range too big") != std::string::npos);
  CHECK(render_error("{{" + std::string(300, '(') + "1" + std::string(300, ')') + "}}").find("nesting deeper than") !=
        std::string::npos);
  std::string deep_ifs;
  for (int i = 0; i < 200; ++i) deep_ifs += "{% if true %}";
  CHECK(render_error(deep_ifs).find("nesting deeper than") != std::string::npos);
  std::string long_sum = "{{ 1";
  for (int i = 0; i < 1000; ++i) long_sum += " + 1";
  CHECK(render_error(long_sum + " }}").find("an expression nests deeper than") != std::string::npos);
  CHECK(render_error("{% set ns = namespace(x=[]) %}{% for i in range(300) %}{% set ns.x = [ns.x] %}{% endfor %}")
            .find("values nest deeper than") != std::string::npos);
  CHECK(render_error("{% set ns = namespace() %}{% set ns.me = ns %}").find("cannot hold a namespace") !=
        std::string::npos);
}

TEST_CASE("chat template: Hugging Face's globals and variables", "[jinja]") {
  auto t = vkllm::ChatTemplate::parse(
      "{{ bos_token }}{% for m in messages %}{% if m.role == 'system' %}{{ raise_exception('no system') }}"
      "{% endif %}{{ m.role }}:{{ m.content }};{% endfor %}{{ tools is none }}{{ documents is none }}"
      "{{ strftime_now('%Y-%m-%d') }}{{ flag }}{% if add_generation_prompt %}>{% endif %}{{ eos_token }}");
  vkllm::ChatTemplate::Options o{.bos_token = "<s>", .eos_token = "</s>", .now = 1736936400};
  o.extra = {{"flag", 7}};
  nlohmann::ordered_json msgs = nlohmann::ordered_json::parse(R"([{"role": "user", "content": "hi"}])");
  CHECK(t.render(msgs, o) == "<s>user:hi;TrueTrue2025-01-157></s>");
  o.add_generation_prompt = false;
  CHECK(t.render(msgs, o) == "<s>user:hi;TrueTrue2025-01-157</s>");
  auto with_system = nlohmann::ordered_json::parse(R"([{"role": "system", "content": "x"}])");
  CHECK_THROWS_WITH(t.render(with_system, o), "template: line 1: no system");
}

TEST_CASE("chat template: bad messages are one error line", "[jinja]") {
  auto t = vkllm::ChatTemplate::parse(vkllm::kChatMlTemplate);
  vkllm::ChatTemplate::Options o;
  auto bad = [&](const char* json) {
    try {
      t.render(nlohmann::ordered_json::parse(json), o);
    } catch (const vkllm::Error& e) {
      return std::string(e.what());
    }
    return std::string("(no error)");
  };
  CHECK(bad(R"({"role": "user"})") == "messages: not a JSON array of {role, content} objects");
  CHECK(bad(R"([{"content": "x"}])") == "messages[0]: not an object with a string \"role\"");
  CHECK(bad(R"([{"role": "user", "content": 5}])") ==
        "messages[0]: \"content\" is not a string, null or a list of parts");
  CHECK(bad(R"([{"role": "user"}])") == "messages[0]: no \"content\"");
  nlohmann::ordered_json invalid = nlohmann::ordered_json::array({{{"role", "user"}, {"content", "a\xff"}}});
  CHECK_THROWS_WITH(t.render(invalid, o), "messages: a string is not valid UTF-8");
  nlohmann::ordered_json ok = nlohmann::ordered_json::parse(
      R"([{"role": "system", "content": "S"}, {"role": "user", "content": [{"type": "text", "text": "U"}]}])");
  CHECK(t.render(ok, o) == "<|im_start|>system\nS<|im_end|>\n<|im_start|>user\nU<|im_end|>\n<|im_start|>assistant\n");
}
