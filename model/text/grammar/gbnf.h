// GBNF, the grammar text llama.cpp takes (its grammars/README.md): rules `name ::= alternatives`,
// "literals", [character classes] (ranges, ^ negation), `.` any character, ( groups ), the
// repetitions * + ? {m} {m,} {m,n}, # comments, and whole tokens: <[id]>, <text> (the token whose
// text that is), !<...> (any token but that one). `root` is where matching starts.
#pragma once
#include <string_view>

#include "text/grammar/grammar.h"

namespace vkllm {
class Tokenizer;
}

namespace vkllm::grammar {

// Largest GBNF text accepted, and the largest repetition count ({m,n}).
inline constexpr size_t kMaxGbnfBytes = size_t(1) << 20;
inline constexpr uint32_t kMaxRepetition = 10000;

// Parses and finishes (checks) a grammar. `vocab` resolves token references; without one they
// are an error. Throws Error: "grammar: line L, column C: what" for syntax, or the check's message.
Grammar parse_gbnf(std::string_view text, const Tokenizer* vocab = nullptr);

}  // namespace vkllm::grammar
