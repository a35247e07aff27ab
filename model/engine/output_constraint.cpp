// Masks, advancing, and the lazy start at a trigger.
#include "engine/output_constraint.h"

#include <algorithm>

#include "error.h"
#include "text/tokenizer.h"

namespace vkllm {

OutputConstraint::OutputConstraint(ConstraintSpec spec, const Tokenizer& tokenizer)
    : spec_(std::move(spec)), tok_(tokenizer) {
  if (spec_.automaton && spec_.triggers.empty()) matcher_.emplace(spec_.automaton);
}

namespace {

class MatcherFilter final : public TokenFilter {
 public:
  explicit MatcherFilter(grammar::GrammarMatcher& m) : m_(m) {}
  bool allows(int32_t token) override { return m_.allows(token); }
  bool mask_cached() override { return m_.mask_cached(); }
  std::shared_ptr<const std::vector<uint64_t>> mask() override { return m_.allowed(); }

 private:
  grammar::GrammarMatcher& m_;
};

}  // namespace

std::shared_ptr<const grammar::TokenMask> OutputConstraint::mask() { return matcher_ ? matcher_->allowed() : nullptr; }

int32_t OutputConstraint::sample(Sampler& sampler, std::span<const float> logits) {
  if (!matcher_) return sampler.sample(logits);
  MatcherFilter filter(*matcher_);
  return sampler.sample(logits, filter);
}

void OutputConstraint::accept(int32_t token) {
  if (matcher_) {
    ENSURE(matcher_->accept(token), "the sampled token breaks the grammar");
    return;
  }
  if (!spec_.automaton || failed_) return;
  starts_.push_back(text_.size());
  tokens_.push_back(token);
  text_ += tok_.piece(token);
  look_for_trigger();
}

void OutputConstraint::look_for_trigger() {
  size_t longest = 0;
  for (const std::string& t : spec_.triggers) longest = std::max(longest, t.size());
  // Only text that the last token added (plus what could join a trigger with it) is new.
  size_t from = starts_.back() >= longest ? starts_.back() - longest + 1 : 0;
  size_t at = std::string::npos;
  for (const std::string& t : spec_.triggers) at = std::min(at, text_.find(t, from));
  if (at == std::string::npos) return;
  if (spec_.trigger_at_start) {
    std::string_view before(text_.data(), at);
    size_t think = before.find("</think>");
    if (before.find_first_not_of(" \t\r\n") == before.find("<think>") && think != std::string_view::npos)
      before.remove_prefix(think + 8);
    if (before.find_first_not_of(" \t\r\n") != std::string_view::npos) {
      failed_ = true;  // the reply is text: a later brace is not a call
      return;
    }
  }
  start(at);
}

// Feeds the grammar everything from byte `at`: the rest of the token it falls in (as bytes, or
// whole when it starts there: a special token), then the tokens after it.
void OutputConstraint::start(size_t at) {
  size_t k = size_t(std::upper_bound(starts_.begin(), starts_.end(), at) - starts_.begin()) - 1;
  grammar::GrammarMatcher m(spec_.automaton);
  bool ok = starts_[k] == at
                ? m.accept(tokens_[k])
                : m.accept_bytes(std::string_view(text_).substr(at, tok_.piece(tokens_[k]).size() - (at - starts_[k])));
  for (size_t i = k + 1; ok && i < tokens_.size(); ++i) ok = m.accept(tokens_[i]);
  if (!ok) {
    failed_ = true;
    return;
  }
  matcher_.emplace(std::move(m));
}

}  // namespace vkllm
