// Grammar building and its static checks: productive rules, nullable rules, left recursion.
#include "text/grammar/grammar.h"

#include <fmt/format.h>

#include "error.h"

namespace vkllm::grammar {

uint32_t Grammar::add_rule(std::string name) {
  ENSURE(names_.size() < kMaxGrammarRules,
         fmt::format("the grammar is too large: more than {} rules (after expanding repetitions)", kMaxGrammarRules));
  names_.push_back(std::move(name));
  alternatives_.emplace_back();
  return uint32_t(names_.size() - 1);
}

void Grammar::add_alternative(uint32_t rule, std::span<const Element> sequence) {
  ENSURE(elements_.size() + sequence.size() + 1 <= kMaxGrammarElements,
         fmt::format("the grammar is too large: more than {} elements (after expanding repetitions)",
                     kMaxGrammarElements));
  alternatives_[rule].push_back(uint32_t(elements_.size()));
  elements_.insert(elements_.end(), sequence.begin(), sequence.end());
  elements_.push_back({});
}

namespace {

// Which rules satisfy `holds`, by a worklist: an alternative holds when every element does
// (`element_ok` for bytes and tokens; rule references when their rule holds). Linear time.
template <class ElementOk>
std::vector<bool> fixpoint(const std::vector<std::vector<uint32_t>>& alternatives, const std::vector<Element>& elements,
                           ElementOk element_ok) {
  size_t n = alternatives.size();
  std::vector<bool> holds(n, false);
  std::vector<std::vector<std::pair<uint32_t, uint32_t>>> users(n);  // rule -> (rule, alt) using it
  std::vector<std::vector<uint32_t>> pending(n);                     // (rule, alt) -> refs not yet known
  std::vector<std::pair<uint32_t, uint32_t>> ready;
  for (uint32_t r = 0; r < n; ++r) {
    pending[r].resize(alternatives[r].size());
    for (uint32_t a = 0; a < alternatives[r].size(); ++a) {
      bool possible = true;
      for (uint32_t p = alternatives[r][a]; elements[p].op != Op::End; ++p) {
        if (elements[p].op == Op::Rule)
          ++pending[r][a], users[elements[p].arg].emplace_back(r, a);
        else
          possible = possible && element_ok(elements[p]);
      }
      if (!possible)
        pending[r][a] = UINT32_MAX;  // never holds
      else if (pending[r][a] == 0)
        ready.emplace_back(r, a);
    }
  }
  while (!ready.empty()) {
    uint32_t r = ready.back().first;
    ready.pop_back();
    if (holds[r]) continue;
    holds[r] = true;
    for (auto [u, a] : users[r])
      if (pending[u][a] != UINT32_MAX && --pending[u][a] == 0) ready.emplace_back(u, a);
  }
  return holds;
}

}  // namespace

std::vector<bool> Grammar::nullable_rules() const {
  return fixpoint(alternatives_, elements_, [](const Element&) { return false; });
}

void Grammar::prune_unproductive() {
  std::vector<bool> productive = fixpoint(alternatives_, elements_, [](const Element&) { return true; });
  ENSURE(productive[root_], fmt::format("the grammar is unsatisfiable: rule '{}' can never complete (every "
                                        "alternative reaches a rule that never ends)",
                                        names_[root_]));
  for (auto& alts : alternatives_)
    std::erase_if(alts, [&](uint32_t start) {
      for (uint32_t p = start; elements_[p].op != Op::End; ++p)
        if (elements_[p].op == Op::Rule && !productive[elements_[p].arg]) return true;
      return false;
    });
}

// Rule A leads to rule B when B can be the first thing A expands to (only nullable rules before
// it). A cycle of such edges would make the matcher expand forever.
void Grammar::check_left_recursion(const std::vector<bool>& nullable) const {
  size_t n = alternatives_.size();
  std::vector<std::vector<uint32_t>> first(n);
  for (uint32_t r = 0; r < n; ++r)
    for (uint32_t start : alternatives_[r])
      for (uint32_t p = start; elements_[p].op == Op::Rule; ++p) {
        first[r].push_back(elements_[p].arg);
        if (!nullable[elements_[p].arg]) break;
      }
  // Iterative depth-first search with colours: 0 new, 1 on the path, 2 done.
  std::vector<uint8_t> colour(n, 0);
  std::vector<std::pair<uint32_t, size_t>> stack;
  for (uint32_t start = 0; start < n; ++start) {
    if (colour[start]) continue;
    stack.emplace_back(start, 0);
    colour[start] = 1;
    while (!stack.empty()) {
      auto& [r, next] = stack.back();
      if (next == first[r].size()) {
        colour[r] = 2;
        stack.pop_back();
        continue;
      }
      uint32_t to = first[r][next++];
      ENSURE(colour[to] != 1, fmt::format("the grammar is left-recursive: rule '{}' can reach itself without "
                                          "consuming anything",
                                          names_[to]));
      if (colour[to] == 0) colour[to] = 1, stack.emplace_back(to, 0);
    }
  }
}

void Grammar::finish(uint32_t root) {
  ENSURE(root < names_.size(), "the grammar has no root rule");
  root_ = root;
  prune_unproductive();
  check_left_recursion(nullable_rules());
}

}  // namespace vkllm::grammar
