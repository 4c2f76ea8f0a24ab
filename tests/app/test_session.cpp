// The app's Session (model, trace, cursor) and the notation renderer's parser, headless.
#include <gtest/gtest.h>

#include "app/mathtext.hpp"
#include "app/session.hpp"

using namespace sf;

namespace {

const Event& ev(const Session& s) { return s.current(); }

}  // namespace

TEST(Session, StartsOnAlgorithm10Line1) {
  Session s;
  EXPECT_EQ(ev(s).alg, 10);
  EXPECT_EQ(ev(s).line, 1);
  EXPECT_EQ(ev(s).kind, EventKind::Line);
  EXPECT_EQ(s.prompt(), "hello=");
  EXPECT_EQ(s.tokens().size(), 7u);  // <bos> + 6 characters
  EXPECT_EQ(s.tokens()[0], s.tokenizer().bos_token());
}

TEST(Session, PromptEditKeepsCursorAtSameLineAndIndices) {
  Session s;
  ASSERT_TRUE(s.jump_to(4, 5, 2, 3));
  s.set_prompt("the cat sat");
  EXPECT_EQ(ev(s).alg, 4);
  EXPECT_EQ(ev(s).line, 5);
  EXPECT_EQ(ev(s).idx.l, 2);
  EXPECT_EQ(ev(s).idx.h, 3);
  // The new trace is of the new prompt: S is ℓ×ℓ with ℓ = 12 (<bos> + 11 characters).
  const auto scope = s.trace().scope(s.cursor());
  const Value* S = nullptr;
  for (const Value* v : scope)
    if (v->name == "S") S = v;
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->m.rows(), 12);
}

TEST(Session, PromptEditKeepsColumnIndexWhereItStillExists) {
  Session s;
  ASSERT_TRUE(s.jump_to(6, 2, 1, 0, 7));
  s.set_prompt("abcdefghij");
  EXPECT_EQ(ev(s).alg, 6);
  EXPECT_EQ(ev(s).idx.t, 7);
  s.set_prompt("ab");  // t = 7 no longer exists: the cursor stays in layer_norm, line 2
  EXPECT_EQ(ev(s).alg, 6);
  EXPECT_EQ(ev(s).line, 2);
  EXPECT_LE(ev(s).idx.t, 3);
}

TEST(Session, PromptEditTellsTheTwoLayerNormCallsOfALayerApart) {
  Session s;
  ASSERT_TRUE(s.jump_to(10, 7, 2));
  s.step_back();  // the last layer_norm line of line 7's calls (t = ℓ)
  ASSERT_EQ(s.current().alg, 6);
  ASSERT_EQ(s.trace().caller_key(s.cursor()), 10007);
  s.set_prompt("hello world!");
  EXPECT_EQ(s.current().alg, 6);
  EXPECT_EQ(s.current().idx.l, 2);
  EXPECT_EQ(s.trace().caller_key(s.cursor()), 10007);  // still line 7's call, not line 5's
}

TEST(Session, UnknownCharactersAreReportedAndKeepTheLastTrace) {
  Session s;
  const size_t steps = s.trace().size();
  s.set_prompt("héllo~");
  EXPECT_FALSE(s.prompt_error().empty());
  ASSERT_EQ(s.unknown_chars().size(), 2u);
  EXPECT_EQ(s.unknown_chars()[0].chr, "é");
  EXPECT_EQ(s.unknown_chars()[0].position, 2u);
  EXPECT_EQ(s.unknown_chars()[0].byte, 1u);
  EXPECT_EQ(s.unknown_chars()[1].chr, "~");
  EXPECT_EQ(s.trace().size(), steps);  // the last good trace is kept
  s.set_prompt("hello");
  EXPECT_TRUE(s.prompt_error().empty());
}

TEST(Session, PromptLongerThanLmaxIsRefusedWithAMessage) {
  Session s;
  s.set_prompt(std::string(200, 'a'));
  EXPECT_NE(s.prompt_error().find("ℓ_max"), std::string::npos);
  EXPECT_EQ(s.tokens().size(), 7u);
}

TEST(Session, SteppingFollowsTheTrace) {
  Session s;
  s.step_over();  // line 1 → line 2 (its nested embedding calls are skipped)
  EXPECT_EQ(ev(s).alg, 10);
  EXPECT_EQ(ev(s).line, 2);
  s.step_back_over();
  EXPECT_EQ(ev(s).line, 1);
  s.step_into();  // into Algorithm 1 for t = 1
  EXPECT_EQ(ev(s).alg, 1);
  EXPECT_EQ(ev(s).kind, EventKind::Enter);
  EXPECT_EQ(ev(s).idx.t, 1);
  s.step_out();
  EXPECT_EQ(ev(s).alg, 10);
  EXPECT_EQ(ev(s).line, 2);
}

TEST(Session, ContinueStopsAtBreakpoints) {
  Session s;
  s.toggle_breakpoint(4, 5);
  s.continue_run();
  EXPECT_EQ(ev(s).alg, 4);
  EXPECT_EQ(ev(s).line, 5);
  EXPECT_EQ(ev(s).idx.l, 1);
  EXPECT_EQ(ev(s).idx.h, 1);
  s.continue_run();
  EXPECT_EQ(ev(s).idx.h, 2);
  s.toggle_breakpoint(4, 5);
  EXPECT_FALSE(s.has_breakpoint(4, 5));
}

TEST(Session, GenerationOneTokenAtATimeIsTracedAndAppends) {
  Session s;
  s.sampling.tau = 0;
  s.trace_generate(1, true);
  ASSERT_EQ(s.generated().size(), 1u);
  EXPECT_EQ(s.run_kind(), RunKind::Generate);
  EXPECT_EQ(s.trace().events[0].alg, 14);
  s.trace_generate(1, true);
  ASSERT_EQ(s.generated().size(), 2u);
  // Argmax is deterministic: generating both at once gives the same two tokens.
  Session all;
  all.sampling.tau = 0;
  all.trace_generate(2, false);
  EXPECT_EQ(all.generated(), s.generated());
  // Each generation step has its own DTransformer frame with its own x.
  ASSERT_TRUE(all.jump_to(10, 1));
  size_t second = SIZE_MAX;
  for (size_t k = all.cursor() + 1; k < all.trace().size(); ++k)
    if (all.trace().events[k].alg == 10 && all.trace().events[k].line == 1) second = k;
  ASSERT_NE(second, SIZE_MAX);
  EXPECT_EQ(all.tokens_at(second).size(), all.tokens().size() + 1);
  // Algorithm 14's own P (line 3) is labelled by the x its DTransformer call saw.
  for (size_t k = 0; k < all.trace().size(); ++k) {
    const Event& e = all.trace().events[k];
    if (e.alg == 14 && e.line == 3 && e.idx.i == 2) all.jump(k);
  }
  ASSERT_EQ(all.current().alg, 14);
  ASSERT_EQ(all.current().line, 3);
  ASSERT_EQ(all.current().idx.i, 2);
  EXPECT_EQ(all.tokens_at(all.cursor()).size(), all.tokens().size() + 1);
}

TEST(Session, EditingThePromptRestartsTheContinuation) {
  Session s;
  s.sampling.tau = 0;
  s.trace_generate(1, true);
  s.trace_generate(1, true);
  ASSERT_EQ(s.generated().size(), 2u);
  s.set_prompt("abc");  // in generation mode: the trace generates again, from the new prompt
  EXPECT_EQ(s.run_kind(), RunKind::Generate);
  EXPECT_EQ(s.generated().size(), 1u);
  EXPECT_EQ(s.generated(), s.generation().y);
  s.trace_forward();
  s.set_prompt("abcd");
  EXPECT_TRUE(s.generated().empty());
}

TEST(Session, AModelWhoseVocabularyLacksThePromptStillTraces) {
  Session s;
  ModelConfig c;
  c.vocab = {"0", "1"};
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 8;
  s.set_model(Model::initialised(c, 3), "tiny");
  EXPECT_FALSE(s.prompt_error().empty());  // "hello=" has no 0/1 characters
  ASSERT_EQ(s.tokens().size(), 1u);
  EXPECT_EQ(s.tokens()[0], 4);  // bos_token = N_V − 1 with N_V = 5
  EXPECT_GT(s.trace().size(), 1u);
  s.set_prompt("0110");
  EXPECT_TRUE(s.prompt_error().empty());
  EXPECT_EQ(s.tokens().size(), 5u);
}

TEST(Session, ScopeForACallerFrameHoldsWhatItBoundBeforeTheCall) {
  Session s;
  ASSERT_TRUE(s.jump_to(4, 5, 1, 1));
  const auto stack = s.trace().call_stack(s.cursor());
  ASSERT_EQ(stack.size(), 3u);  // DTransformer line 6 › MHAttention line 2 › Attention line 5
  const Event& outer = s.trace().events[stack[0]];
  EXPECT_EQ(outer.alg, 10);
  EXPECT_EQ(outer.line, 6);
  bool has_Xt = false, has_P = false;
  for (const Value* v : s.scope_for_view(stack[0])) {
    has_Xt |= v->name == "X̃";
    has_P |= v->name == "P";
  }
  EXPECT_TRUE(has_Xt);
  EXPECT_FALSE(has_P);  // not computed yet at this point of the run
}

TEST(MathText, SubscriptsSuperscriptsAndLiteralUnderscores) {
  auto runs = parse_math("W_q X");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[0].text, "W");
  EXPECT_EQ(runs[1].text, "q");
  EXPECT_EQ(runs[1].level, -1);
  EXPECT_EQ(runs[2].text, " X");
  runs = parse_math("Q ∈ ℝ^{16×7}");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].text, "16×7");
  EXPECT_EQ(runs[1].level, 1);
  runs = parse_math("ℝ^{d_e×ℓ_max}");
  ASSERT_EQ(runs.size(), 2u);
  EXPECT_EQ(runs[1].text, "dₑ×ℓₘₐₓ");
  runs = parse_math("layer_norm(e | γ, β) and eos_token");
  ASSERT_EQ(runs.size(), 1u);
  EXPECT_EQ(runs[0].level, 0);
  runs = parse_math("W^l_mlp1");
  ASSERT_EQ(runs.size(), 3u);
  EXPECT_EQ(runs[1].level, 1);
  EXPECT_EQ(runs[2].text, "mlp1");
  EXPECT_EQ(runs[2].level, -1);
  runs = parse_math("ℓ_z×ℓ_x");
  ASSERT_EQ(runs.size(), 4u);
  EXPECT_EQ(runs[1].text, "z");
  EXPECT_EQ(runs[2].text, "×ℓ");
}
