// Issue 21's bugs, the logic under them (no window): counts in words, the vocabulary and unknown
// characters named in a prompt error, the stale trace, and the accuracy chart's tick thinning.
#include <gtest/gtest.h>

#include "app/logic/session_input.hpp"
#include "app/session.hpp"
#include "app/widgets/line_chart.hpp"
#include "app/widgets/wording.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {
namespace test_session_bugs {

std::unique_ptr<Tokenizer> char_tokenizer(std::vector<std::string> vocab) {
  ModelConfig c;
  c.vocab = std::move(vocab);
  return make_tokenizer(c);
}

TEST(Wording, CountsAreSingularForOne) {  // bug i: "the pair occurred 1 times"
  EXPECT_EQ(counted(1, "time"), "1 time");
  EXPECT_EQ(counted(0, "time"), "0 times");
  EXPECT_EQ(counted(3, "time"), "3 times");
  EXPECT_EQ(counted(1, "dispatch", "dispatches"), "1 dispatch");
  EXPECT_EQ(counted(2, "dispatch", "dispatches"), "2 dispatches");
}

TEST(PromptErrors, TheVocabularyIsSummarisedInRanges) {
  std::vector<std::string> v;
  for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
  v.push_back("=");
  v.push_back(" ");
  EXPECT_EQ(vocabulary_summary(*char_tokenizer(v)), "lowercase a–z, space, the symbols =");
  // Two in a row are listed, three or more a range; digits and capitals are named.
  EXPECT_EQ(vocabulary_summary(*char_tokenizer({"x", "y", "0", "1", "2", "3", "A", "B", "C", "é", "+", "-"})),
            "x, y, A–C, digits 0–3, \"é\", the symbols +-");
}

TEST(PromptErrors, UnknownCharactersAreNamedWithTheirPositions) {
  std::vector<std::string> v;
  for (char c = 'a'; c <= 'z'; ++c) v.emplace_back(1, c);
  const auto tok = char_tokenizer(v);
  EXPECT_EQ(unknown_input_message(*tok, tok->unknown("Hi")), "\"H\" at 1 is not in the vocabulary (lowercase a–z)");
  EXPECT_EQ(unknown_input_message(*tok, tok->unknown("HiW")),
            "\"H\" at 1 and \"W\" at 3 are not in the vocabulary (lowercase a–z)");
  EXPECT_EQ(unknown_input_message(*tok, tok->unknown("ABCDEFG")),
            "\"A\" at 1, \"B\" at 2, \"C\" at 3, \"D\" at 4, \"E\" at 5 and 2 more are not in the vocabulary "
            "(lowercase a–z)");
}

TEST(PromptErrors, TheTraceIsStaleUntilThePromptCanBeEncoded) {  // bug h
  Session s;
  const Tokens before = s.tokens();
  EXPECT_FALSE(s.trace_stale());
  s.set_prompt("Hello=");
  EXPECT_TRUE(s.trace_stale());
  EXPECT_EQ(s.tokens(), before);  // the trace is still of the last prompt that could be encoded
  EXPECT_NE(s.prompt_input().error.find("\"H\" at 1 is not in the vocabulary (lowercase a–z"), std::string::npos)
      << s.prompt_input().error;
  s.set_prompt("hello=");
  EXPECT_FALSE(s.trace_stale());
  EXPECT_TRUE(s.prompt_input().error.empty());
}

TEST(LineChart, TicksAreThinnedToTheRoomTheyNeed) {  // bug e: the accuracy chart's overlapping ticks
  EXPECT_EQ(tick_intervals(400, 60), 4);  // 100 px each
  EXPECT_EQ(tick_intervals(200, 60), 3);  // 66.7 px each; 4 would be 50
  EXPECT_EQ(tick_intervals(100, 60), 1);  // 2 would be 50
  EXPECT_EQ(tick_intervals(30, 60), 1);   // never fewer than one interval (its two ends)
}

}  // namespace test_session_bugs
}  // namespace sf
