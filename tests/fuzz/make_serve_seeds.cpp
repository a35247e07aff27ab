// Writes a seed corpus for fuzz_serve: byte 0 the route (fuzz_serve.cpp's table), byte 1 the key
// and overload flags, then a request body: good requests of every route and a few bad ones.
// Usage: fuzz_serve_seeds DIR
#include <cstdio>
#include <fstream>
#include <string>

int main(int argc, char** argv) {
  if (argc != 2) {
    std::fprintf(stderr, "usage: %s DIR\n", argv[0]);
    return 2;
  }
  struct Seed {
    char route, flags;
    const char* body;
  };
  const Seed seeds[] = {
      {0, 0, R"({"messages": [{"role": "system", "content": "Be brief."}, {"role": "user", "content": "Hi"}]})"},
      {0, 0, R"({"messages": [{"role": "user", "content": [{"type": "text", "text": "a"}]}], "stream": true,
               "stream_options": {"include_usage": true}, "max_tokens": 5})"},
      {0, 3, R"({"messages": [{"role": "user", "content": "x"}], "stop": ["e", "the"], "seed": 7, "temperature": 1})"},
      {0, 0, R"({"messages": [{"role": "user", "content": "a"}, {"role": "assistant", "content": null,
               "reasoning_content": "r", "tool_calls": [{"type": "function", "function": {"name": "f",
               "arguments": "{}"}}]}, {"role": "tool", "tool_call_id": "1", "content": "2"}],
               "tools": [{"type": "function"}], "chat_template_kwargs": {"enable_thinking": false}})"},
      {0, 0, R"({"messages": [{"role": "user", "content": "w"}], "tools": [{"type": "function", "function":
               {"name": "get", "parameters": {"type": "object", "properties": {"c": {"enum": ["a", "b"]}},
               "required": ["c"]}}}], "tool_choice": "required", "max_tokens": 40, "logprobs": true,
               "top_logprobs": 2})"},
      {0, 0, R"({"messages": [{"role": "user", "content": "w"}], "tools": [{"type": "function", "function":
               {"name": "get"}}], "tool_choice": {"type": "function", "function": {"name": "get"}},
               "parallel_tool_calls": true, "stream": true})"},
      {0, 0, R"({"messages": [{"role": "user", "content": "j"}], "response_format": {"type": "json_schema",
               "json_schema": {"name": "a", "schema": {"type": "object", "properties": {"n": {"type": "integer",
               "minimum": 1, "maximum": 9}}, "required": ["n"]}}}, "max_tokens": 30, "reasoning_format": "none"})"},
      {1, 0, R"({"prompt": "g", "grammar": "root ::= [a-z]{1,5} \".\"", "logprobs": 2, "stream": true})"},
      {1, 0, R"({"prompt": "In the beginning", "max_tokens": 8, "temperature": 0})"},
      {1, 0, R"({"prompt": "And God", "stream": true, "stop": "d", "logit_bias": {"5": -100, "6": 3}})"},
      {1, 0, R"({"prompt": [1, 200, 300], "max_tokens": 0, "top_k": 3, "top_p": 0.5, "min_p": 0.1})"},
      {1, 0, R"({"prompt": "x", "presence_penalty": 1, "frequency_penalty": -1, "repeat_penalty": 1.2,
               "ignore_eos": true, "max_completion_tokens": 3})"},
      {1, 0, R"({"prompt": "x", "response_format": {"type": "json_object"}})"},
      {1, 0, R"({"prompt": "x", "n": 2})"},
      {1, 1, R"({"prompt": "x"})"},
      {2, 0, ""},
      {3, 1, ""},
      {4, 0, ""},
      {5, 0, R"({"content": "Hello world", "add_special": true, "with_pieces": true})"},
      {6, 0, R"({"tokens": [1, 2, 3, 300, 4000]})"},
      {7, 0, ""},
      {8, 0, "{}"},
      {9, 0, R"({"prompt": "In the beginning", "layer": 1})"},
      {9, 0, R"({"messages": [{"role": "user", "content": "Hi"}], "layer": 0})"},
      {9, 0, R"({"tokens": [1, 2, 3], "layer": 99})"},
      {10, 0, ""},
      {11, 0, R"({"model": "fuzz", "messages": [{"role": "user", "content": "Hi"}], "options": {"temperature": 0,
               "num_predict": 5, "stop": ["e"], "seed": 3, "top_k": 4}, "think": false})"},
      {11, 0, R"({"model": "fuzz:latest", "messages": [{"role": "user", "content": "w"}, {"role": "assistant",
               "content": "", "tool_calls": [{"function": {"name": "f", "arguments": {"a": 1}}}]}, {"role": "tool",
               "tool_name": "f", "content": "2"}], "tools": [{"type": "function", "function": {"name": "f"}}],
               "stream": false, "format": {"type": "object", "properties": {"n": {"type": "integer"}}}})"},
      {11, 0, R"({"model": "fuzz", "messages": [{"role": "user", "content": "j"}], "format": "json", "think": "low"})"},
      {12, 0, R"({"model": "fuzz", "prompt": "In the beginning", "raw": true, "options": {"num_predict": 4}})"},
      {12, 0, R"({"model": "fuzz", "prompt": "Hi", "system": "Be brief.", "stream": false})"},
      {12, 0, R"({"model": "fuzz"})"},
      {13, 0, R"({"model": "fuzz"})"},
      {14, 0, ""},
      {15, 0, ""},
      {16, 0, ""},
      {17, 0, ""},
      {18, 0, R"({"model": "llama3"})"},
      {19, 0, ""},
      {20, 8, R"({"prompt": "x", "max_tokens": 2})"},
      {21, 0, R"({"model": "m", "max_tokens": 8, "system": "Be brief.", "messages": [{"role": "user", "content":
               "Hi"}], "stop_sequences": ["e"], "temperature": 0.5, "top_k": 3})"},
      {21, 17, R"({"model": "m", "max_tokens": 40, "stream": true, "messages": [{"role": "user", "content": [{"type":
               "text", "text": "w"}]}, {"role": "assistant", "content": [{"type": "thinking", "thinking": "t"},
               {"type": "tool_use", "id": "t1", "name": "get", "input": {"c": "a"}}]}, {"role": "user", "content":
               [{"type": "tool_result", "tool_use_id": "t1", "content": "5"}]}], "tools": [{"name": "get",
               "input_schema": {"type": "object", "properties": {"c": {"enum": ["a", "b"]}}, "required": ["c"]}}],
               "tool_choice": {"type": "any"}, "thinking": {"type": "enabled", "budget_tokens": 10}})"},
      {22, 0, R"({"model": "m", "messages": [{"role": "user", "content": "Hi"}], "tools": [{"name": "f",
               "input_schema": {"type": "object"}}]})"},
      {23, 0, R"({"input": ["In the beginning", "And God said"], "encoding_format": "base64", "dimensions": 8})"},
      {23, 0, R"({"input": [[1, 2, 3], [4]], "model": "fuzz"})"},
      {24, 0, R"({"model": "fuzz", "input": ["a", "b"], "truncate": false})"},
  };
  int n = 0;
  for (const Seed& s : seeds) {
    std::ofstream f(std::string(argv[1]) + "/seed" + std::to_string(n++), std::ios::binary);
    f.put(s.route).put(s.flags) << s.body;
  }
  return 0;
}
