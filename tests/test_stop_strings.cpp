// StopStrings: streamed text up to a stop string, holding back only what could begin one.
#include <string>
#include <vector>

#include "catch.h"
#include "text/stop_strings.h"

using vkllm::StopStrings;

namespace {

// Feeds `pieces` one by one; returns what was shown, with '|' between pushes.
std::string stream(StopStrings& s, const std::vector<std::string>& pieces) {
  std::string out;
  for (const std::string& p : pieces) out += s.push(p) + "|";
  return out + s.flush();
}

}  // namespace

TEST_CASE("stop strings cut the text before the first match", "[stop-strings]") {
  StopStrings s({"\n\n", "User:"});
  CHECK(stream(s, {"Hello", " world", "\n", "\nmore"}) == "Hello| world|||");
  CHECK(s.stopped());
  CHECK(s.matched() == "\n\n");
  CHECK(s.push("after") == "");
}

TEST_CASE("a possible start of a stop string waits, then is shown when it is not one", "[stop-strings]") {
  StopStrings s({"User:"});
  CHECK(stream(s, {"a Us", "e", "r is", " here"}) == "a ||User is| here|");
  CHECK(!s.stopped());
  StopStrings t({"User:"});
  CHECK(stream(t, {"x Use", "r", ": y"}) == "x |||");  // the match spans three pieces
  CHECK(t.stopped());
  StopStrings u({"abc"});
  CHECK(stream(u, {"ab"}) == "|ab");  // the end of generation shows what was held
}

TEST_CASE("the earliest of several stop strings wins, and empty ones are ignored", "[stop-strings]") {
  StopStrings s({"", "cd", "bcde"});
  CHECK(stream(s, {"abcdef"}) == "a|");
  CHECK(s.matched() == "bcde");
  StopStrings none({});
  CHECK(stream(none, {"a", "b"}) == "a|b|");
}

TEST_CASE("stop strings hold back whole UTF-8 characters", "[stop-strings]") {
  StopStrings s({"\xc3\xa9t\xc3\xa9"});  // "été"
  CHECK(stream(s, {"caf\xc3\xa9", " \xc3\xa9t", "\xc3\xa9!"}) == "caf|\xc3\xa9 ||");
  CHECK(s.stopped());
}
