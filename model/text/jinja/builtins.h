// Builtins: jinja2's filters, tests and global functions, and the methods of str, dict and list
// that a sandboxed template may call (mutating ones fail, as in ImmutableSandboxedEnvironment).
#pragma once
#include <string>

#include "text/jinja/evaluator.h"

namespace vkllm::jinja {

Value apply_filter(Evaluator& ev, const std::string& name, const Value& v, CallArgs& args);
bool apply_test(Evaluator& ev, const std::string& name, const Value& v, CallArgs& args);
// obj.name as a bound method, or undefined when obj's type has no such method.
Value method(const Value& obj, const std::string& name);
// range, dict, namespace, cycler-free: what chat templates call besides their own macros.
void add_builtin_globals(Scope& globals);
// Python's str.format(*args, **kwargs) on `format`.
std::string python_format(const std::string& format, const CallArgs& args);
// Python's `format % args` for %s, %r, %d, %i, %f and %%.
std::string percent_format(const std::string& format, const Value& args, const Evaluator& ev);
// Python's `item in container`.
bool contains(const Value& container, const Value& item);

}  // namespace vkllm::jinja
