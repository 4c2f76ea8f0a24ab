// The app's Session (model, trace, cursor) and the notation renderer's parser, headless.
#include <gtest/gtest.h>
#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <fstream>

#include "app/mathtext.hpp"
#include "app/session.hpp"
#include "app/attention_calls.hpp"
#include "app/widgets/downsample.hpp"
#include "core/io/checkpoint.hpp"

namespace test_session {

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
  ASSERT_EQ(s.trace().caller_ref(s.cursor()), lines::d_transformer::norm2);
  s.set_prompt("hello world!");
  EXPECT_EQ(s.current().alg, 6);
  EXPECT_EQ(s.current().idx.l, 2);
  EXPECT_EQ(s.trace().caller_ref(s.cursor()), lines::d_transformer::norm2);  // still line 7's call, not line 5's
}

TEST(Session, UnknownCharactersAreReportedAndKeepTheLastTrace) {
  Session s;
  const size_t steps = s.trace().size();
  s.set_prompt("héllo~");
  EXPECT_FALSE(s.prompt_input().error.empty());
  ASSERT_EQ(s.prompt_input().unknown.size(), 2u);
  EXPECT_EQ(s.prompt_input().unknown[0].chr, "é");
  EXPECT_EQ(s.prompt_input().unknown[0].position, 2u);
  EXPECT_EQ(s.prompt_input().unknown[0].byte, 1u);
  EXPECT_EQ(s.prompt_input().unknown[1].chr, "~");
  EXPECT_EQ(s.trace().size(), steps);  // the last good trace is kept
  s.set_prompt("hello");
  EXPECT_TRUE(s.prompt_input().error.empty());
}

TEST(Session, PromptLongerThanLmaxIsRefusedWithAMessage) {
  Session s;
  s.set_prompt(std::string(200, 'a'));
  EXPECT_NE(s.prompt_input().error.find("ℓ_max"), std::string::npos);
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
  s.generation().settings.tau = 0;
  s.trace_generate(1, true);
  ASSERT_EQ(s.generation().generated().size(), 1u);
  EXPECT_EQ(s.run_kind(), RunKind::Generate);
  EXPECT_EQ(s.trace().events[0].alg, 14);
  s.trace_generate(1, true);
  ASSERT_EQ(s.generation().generated().size(), 2u);
  // Argmax is deterministic: generating both at once gives the same two tokens.
  Session all;
  all.generation().settings.tau = 0;
  all.trace_generate(2, false);
  EXPECT_EQ(all.generation().generated(), s.generation().generated());
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
  s.generation().settings.tau = 0;
  s.trace_generate(1, true);
  s.trace_generate(1, true);
  ASSERT_EQ(s.generation().generated().size(), 2u);
  s.set_prompt("abc");  // in generation mode: the trace generates again, from the new prompt
  EXPECT_EQ(s.run_kind(), RunKind::Generate);
  EXPECT_EQ(s.generation().generated().size(), 1u);
  EXPECT_EQ(s.generation().generated(), s.generation().result().y);
  s.trace_forward();
  s.set_prompt("abcd");
  EXPECT_TRUE(s.generation().generated().empty());
}

TEST(Session, AModelWhoseVocabularyLacksThePromptStillTraces) {
  Session s;
  ModelConfig c;
  c.vocab = {"0", "1"};
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 8;
  s.set_prompt("hello=");  // typed, so kept (a default prompt would be the model's own characters)
  s.wait_for_trace();
  s.set_model(Model::initialised(c, 3), "tiny");
  EXPECT_FALSE(s.prompt_input().error.empty());  // "hello=" has no 0/1 characters
  ASSERT_EQ(s.tokens().size(), 1u);
  EXPECT_EQ(s.tokens()[0], 4);  // bos_token = N_V − 1 with N_V = 5
  EXPECT_GT(s.trace().size(), 1u);
  s.set_prompt("0110");
  EXPECT_TRUE(s.prompt_input().error.empty());
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

// --- BERT and the encoder-decoder in the session ---

namespace {

Model small_model(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.L = 2;
  c.L_enc = 2;
  c.L_dec = 2;
  c.H = 4;
  c.d_e = 64;
  c.d_attn = 16;
  c.d_mid = 16;
  c.d_mlp = 256;
  c.d_f = 64;
  c.l_max = 16;  // short: an untrained encoder-decoder runs to the ℓ_max cap
  return Model::initialised(c, 1);
}

const Value* value_at(const Trace& t, size_t k, const std::string& name) {
  for (const auto& v : t.events[k].values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

TEST(SessionBert, ForwardTraceIsAlgorithm9WithAllOnesMask) {
  Session s;
  s.set_model(small_model("bert"), "bert test");
  s.set_prompt("abc");
  EXPECT_EQ(s.arch().output(), OutputKind::FillIn);
  EXPECT_EQ(ev(s).alg, 9);
  for (int line : {1, 5, 12}) EXPECT_TRUE(s.jump_to(9, line)) << "line " << line;
  const auto calls = head_calls(s.trace());
  ASSERT_EQ(calls.size(), 2u * 4u);  // L × H
  for (const auto& c : calls) {
    EXPECT_EQ(c.caller_alg, 9);
    EXPECT_EQ(c.caller_line, 5);
    ASSERT_NE(c.mask, nullptr);
    EXPECT_EQ(c.mask->m.rows(), 5);  // [bos, a, b, c, eos]: BERT reads whole sequences
    EXPECT_EQ(c.mask->m.cols(), 5);
    EXPECT_EQ(c.mask->m.minCoeff(), 1.0f);  // Mask ≡ 1: no causal zeros
  }
  const auto groups = attention_groups(calls, s.model().config);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_NE(groups[0].mask_text.find("Mask ≡ 1"), std::string::npos);
}

TEST(SessionBert, MaskTogglesAndFillEqualsFillMasks) {
  Session s;
  s.set_model(small_model("bert"), "bert test");
  s.set_prompt("abcd");
  ASSERT_TRUE(s.jump_to(4, 5, 2, 3));
  std::string err;
  EXPECT_FALSE(s.toggle_mask(1, err));  // <bos>
  EXPECT_FALSE(s.toggle_mask(6, err));  // past the end
  ASSERT_TRUE(s.toggle_mask(3, err)) << err;
  EXPECT_EQ(s.prompt(), "a[MASK]cd");
  EXPECT_EQ(s.tokens()[2], s.tokenizer().mask_token());
  EXPECT_EQ(ev(s).alg, 4);  // the cursor is kept
  EXPECT_EQ(ev(s).idx.l, 2);
  EXPECT_EQ(ev(s).idx.h, 3);
  ASSERT_TRUE(s.toggle_mask(5, err)) << err;
  EXPECT_EQ(s.prompt(), "a[MASK]c[MASK]");
  s.fill_in().settings = {0.0, 1, 5};
  const FillResult expect = fill_masks(s.tokens(), s.model(), 0.0, 1, 5);
  const FillResult& got = s.fill();
  ASSERT_EQ(got.positions.size(), 2u);
  EXPECT_EQ(got.filled, expect.filled);
  for (size_t i = 0; i < 2; ++i) {
    EXPECT_EQ(got.positions[i].t, expect.positions[i].t);
    EXPECT_EQ(got.positions[i].chosen, expect.positions[i].chosen);
    ASSERT_EQ(got.positions[i].top.size(), 5u);
    EXPECT_EQ(got.positions[i].top[0].id, expect.positions[i].top[0].id);
    EXPECT_FLOAT_EQ(got.positions[i].top[0].p, expect.positions[i].top[0].p);
  }
  EXPECT_EQ(got.positions[0].t, 3);
  EXPECT_EQ(got.positions[1].t, 5);
  // The fill reads P of the traced forward run: the same column at t = 3.
  s.trace_fill();
  EXPECT_EQ(ev(s).alg, 9);
  EXPECT_EQ(ev(s).line, 12);
  const Value* P = value_at(s.trace(), s.cursor(), "P");
  ASSERT_NE(P, nullptr);
  EXPECT_FLOAT_EQ(P->m(got.positions[0].chosen - 1, 2), got.positions[0].p(got.positions[0].chosen - 1));
  // A sampled fill (τ > 0) is fill_masks with that seed.
  s.fill_in().settings = {1.0, 7, 3};
  EXPECT_EQ(s.fill().filled, fill_masks(s.tokens(), s.model(), 1.0, 7, 3).filled);
  // Unmasking restores the characters.
  ASSERT_TRUE(s.toggle_mask(3, err));
  ASSERT_TRUE(s.toggle_mask(5, err));
  EXPECT_EQ(s.prompt(), "abcd");
  EXPECT_TRUE(s.fill().positions.empty());
  EXPECT_FALSE(s.fill_error().empty());
  // A [MASK] typed by hand has nothing to restore.
  s.set_prompt("a[MASK]");
  EXPECT_FALSE(s.toggle_mask(3, err));
}

TEST(SessionEd, SetContextRetracesAndKeepsTheCursor) {
  Session s;
  s.set_model(small_model("ed"), "ed test");
  EXPECT_TRUE(s.arch().has_context());
  s.set_context("hello");
  s.set_prompt("olleh");
  ASSERT_EQ(s.tokens_z().size(), 7u);  // <bos> hello <eos>
  EXPECT_EQ(s.tokens_z().back(), s.tokenizer().eos_token());
  ASSERT_TRUE(s.jump_to(4, 4, 1, 2));  // the first S: the encoder's layer 1, head 2
  ASSERT_EQ(s.trace().caller_ref(s.cursor()).alg, 5);
  s.set_context("abcdefgh");
  EXPECT_TRUE(s.context_input().error.empty());
  EXPECT_EQ(s.tokens_z().size(), 10u);
  EXPECT_EQ(ev(s).alg, 4);
  EXPECT_EQ(ev(s).line, 4);
  EXPECT_EQ(ev(s).idx.l, 1);
  EXPECT_EQ(ev(s).idx.h, 2);
  const Value* S = value_at(s.trace(), s.cursor(), "S");
  ASSERT_NE(S, nullptr);
  EXPECT_EQ(S->m.rows(), 10);  // the new z: encoder self-attention is ℓ_z × ℓ_z
  EXPECT_EQ(S->m.cols(), 10);
  // An unknown character keeps the last good trace and says so.
  s.set_context("abc\x01");
  EXPECT_FALSE(s.context_input().error.empty());
  EXPECT_EQ(s.tokens_z().size(), 10u);
}

TEST(SessionEd, CrossAttentionAxesAreZRowsAndXColumns) {
  Session s;
  s.set_model(small_model("ed"), "ed test");
  s.set_context("abcde");  // ℓ_z = 7
  s.set_prompt("xyz");     // ℓ_x = 4
  const auto calls = head_calls(s.trace());
  const auto groups = attention_groups(calls, s.model().config);
  ASSERT_EQ(groups.size(), 3u);
  EXPECT_EQ(groups[0].line, 5);
  EXPECT_EQ(groups[1].line, 14);
  EXPECT_EQ(groups[2].line, 16);
  EXPECT_NE(groups[0].title.find("ncoder"), std::string::npos);
  EXPECT_NE(groups[1].title.find("ecoder"), std::string::npos);
  EXPECT_NE(groups[2].title.find("Cross"), std::string::npos);
  const HeadCall* enc = find_head_call(calls, 8, 5, 1, 1, 0);
  const HeadCall* dec = find_head_call(calls, 8, 14, 2, 1, 0);
  const HeadCall* cross = find_head_call(calls, 8, 16, 2, 3, 0);
  ASSERT_TRUE(enc && dec && cross && cross->S && enc->mask && dec->mask && cross->mask);
  EXPECT_EQ(enc->mask->m.rows(), 7);
  EXPECT_EQ(enc->mask->m.minCoeff(), 1.0f);
  EXPECT_EQ(dec->mask->m.rows(), 4);
  EXPECT_EQ(dec->mask->m(1, 0), 0.0f);  // causal: key 2 is after query 1
  EXPECT_EQ(dec->mask->m(0, 1), 1.0f);
  EXPECT_EQ(cross->mask->m.rows(), 7);
  EXPECT_EQ(cross->mask->m.cols(), 4);
  EXPECT_EQ(cross->mask->m.minCoeff(), 1.0f);
  EXPECT_EQ(cross->S->m.rows(), 7);
  EXPECT_EQ(cross->S->m.cols(), 4);
  EXPECT_EQ(cross->S->rows, Axis::TokenZ);
  EXPECT_EQ(cross->S->cols, Axis::TokenX);
  EXPECT_EQ(s.tokens_at(cross->line4, Axis::TokenZ), s.tokens_z());
  EXPECT_EQ(s.tokens_at(cross->line4, Axis::TokenX), s.tokens());
  // The decoder's self-attention labels both axes with x.
  EXPECT_EQ(s.tokens_at(dec->line4, dec->S->rows), s.tokens());
}

TEST(SessionEd, TranslateOneAndAllEqualEdInference) {
  Session s;
  s.set_model(small_model("ed"), "ed test");
  s.set_context("abc");
  s.translation().settings = {0.7, 3, false};
  const EdInferenceResult expect = edinference(s.tokens_z(), s.model(), EdInferenceOptions{0.7, 3, false});
  ASSERT_GE(expect.steps.size(), 2u);
  s.trace_translate(true);
  EXPECT_EQ(s.run_kind(), RunKind::Translate);
  EXPECT_EQ(s.translation().shown(), 1);
  EXPECT_EQ(s.translation().translated(), Tokens(expect.x_hat.begin(), expect.x_hat.begin() + 2));
  EXPECT_EQ(ev(s).alg, 15);
  EXPECT_EQ(ev(s).line, 3);
  EXPECT_EQ(ev(s).idx.i, 1);
  s.step_into();  // into line 4's EDTransformer call
  EXPECT_EQ(ev(s).alg, 8);
  s.trace_translate(true);
  EXPECT_EQ(s.translation().shown(), 2);
  EXPECT_EQ(ev(s).idx.i, 2);
  EXPECT_EQ(s.translation().translated(), Tokens(expect.x_hat.begin(), expect.x_hat.begin() + 3));
  s.trace_translate(false);
  EXPECT_EQ(s.translation().translated(), expect.x_hat);
  EXPECT_EQ(s.translation().result().stopped, expect.stopped);
  ASSERT_EQ(s.translation().result().steps.size(), expect.steps.size());
  for (size_t i = 0; i < expect.steps.size(); ++i) {
    EXPECT_EQ(s.translation().result().steps[i].y, expect.steps[i].y);
    EXPECT_TRUE(s.translation().result().steps[i].p.isApprox(expect.steps[i].p));
  }
  // The last step's cross-attention: rows z, columns the x̂ that step saw.
  const int n = static_cast<int>(expect.steps.size());
  const HeadCall* cross = find_head_call(head_calls(s.trace()), 8, 16, 1, 1, n);
  ASSERT_TRUE(cross && cross->A);
  EXPECT_EQ(cross->A->m.rows(), static_cast<int>(s.tokens_z().size()));
  EXPECT_EQ(cross->A->m.cols(), n);
  EXPECT_EQ(s.tokens_at(cross->line6, Axis::TokenX), Tokens(expect.x_hat.begin(), expect.x_hat.begin() + n));
  // Reusing the encoder's output gives the same x̂ (Algorithm 15's option, not in the paper).
  s.translation().settings.reuse_encoding = true;
  s.trace_translate(false);
  EXPECT_EQ(s.translation().translated(), expect.x_hat);
  // A new z returns to the forward pass (Algorithm 8).
  s.set_context("abd");
  EXPECT_EQ(s.run_kind(), RunKind::Forward);
  EXPECT_EQ(ev(s).alg, 8);
}

// A prefix-LM GPT (variant): the attention view's mask caption and the traced Mask are the
// prefix mask [[t_z ≤ max(t_x, p)]], p = the position of the first "=" (<bos> is position 1).
TEST(SessionVariants, PrefixMaskIsCaptionedAndTraced) {
  ModelConfig c = small_model("gpt").config;
  c.mask = MaskKind::Prefix;
  Session s;
  s.set_model(Model::initialised(c, 1), "prefix test");
  s.set_prompt("ba=ab");  // x = [bos, b, a, =, a, b]: p = 4
  const auto calls = head_calls(s.trace());
  ASSERT_FALSE(calls.empty());
  const auto groups = attention_groups(calls, s.model().config);
  ASSERT_EQ(groups.size(), 1u);
  EXPECT_NE(groups[0].mask_text.find("prefix-LM"), std::string::npos);
  ASSERT_NE(calls[0].mask, nullptr);
  const auto& m = calls[0].mask->m;  // (ℓ_z, ℓ_x)
  ASSERT_EQ(m.rows(), 6);
  EXPECT_EQ(m(3, 0), 1.0f);  // key 4 (the "=") is seen by query 1: inside the prefix
  EXPECT_EQ(m(4, 0), 0.0f);  // key 5 is not: after the prefix, causal
  EXPECT_EQ(m(4, 4), 1.0f);
  EXPECT_EQ(m(5, 4), 0.0f);
}

// --- big models: tracing off the UI thread ---

namespace {

// Every event and every value of two traces are the same (algorithm, line, indices, values).
void expect_same_trace(const Trace& a, const Trace& b) {
  ASSERT_EQ(a.size(), b.size());
  for (size_t k = 0; k < a.size(); ++k) {
    const Event &x = a.events[k], &y = b.events[k];
    ASSERT_EQ(x.alg, y.alg) << "event " << k;
    ASSERT_EQ(x.line, y.line) << "event " << k;
    ASSERT_EQ(x.kind, y.kind) << "event " << k;
    ASSERT_EQ(x.idx, y.idx) << "event " << k;
    ASSERT_EQ(x.values.size(), y.values.size()) << "event " << k;
    for (size_t i = 0; i < x.values.size(); ++i) {
      EXPECT_EQ(x.values[i].name, y.values[i].name);
      EXPECT_EQ(x.values[i].tokens, y.values[i].tokens);
      EXPECT_TRUE(MatF(x.values[i].m) == MatF(y.values[i].m))
          << "event " << k << " (Algorithm " << x.alg << " line " << x.line << ") value " << x.values[i].name;
    }
  }
}

}  // namespace

TEST(SessionAsync, AnAsyncTraceEqualsTheSynchronousOne) {
  Session sync, async;
  async.async_min_params = 0;  // every model counts as big: the trace runs on a worker thread
  ASSERT_TRUE(sync.jump_to(4, 5, 2, 3));
  ASSERT_TRUE(async.jump_to(4, 5, 2, 3));
  sync.set_prompt("dcab=");
  async.set_prompt("dcab=");
  EXPECT_TRUE(async.tracing());
  EXPECT_FALSE(sync.tracing());
  EXPECT_EQ(async.trace_progress().total, async.model().config.L);  // counted by layer
  EXPECT_EQ(async.trace().tokens_x.size(), 7u);  // until it is done, the old trace ("hello=") is shown
  async.wait_for_trace();
  EXPECT_FALSE(async.tracing());
  EXPECT_EQ(async.trace().tokens_x, async.tokens());
  expect_same_trace(async.trace(), sync.trace());
  EXPECT_EQ(async.cursor(), sync.cursor());  // the cursor kept at Algorithm 4 line 5 (l=2, h=3)
  EXPECT_EQ(ev(async).alg, 4);
  EXPECT_EQ(ev(async).idx.h, 3);
}

TEST(SessionAsync, ANewPromptSupersedesTheRunningTrace) {
  Session s;
  s.async_min_params = 0;
  s.set_prompt("ab");
  s.set_prompt("abc");
  s.set_prompt("dcba=");  // the two before are cancelled or finish unseen
  s.wait_for_trace();
  EXPECT_EQ(s.trace().tokens_x, s.tokens());
  EXPECT_EQ(s.tokens().size(), 6u);
  Session sync;
  sync.set_prompt("dcba=");
  expect_same_trace(s.trace(), sync.trace());
  // poll() finds nothing more to show; the superseded runs are gone.
  EXPECT_FALSE(s.poll());
}

TEST(SessionAsync, GenerationOffTheUiThreadEqualsTheSynchronousOne) {
  Session sync, async;
  async.async_min_params = 0;
  for (Session* s : {&sync, &async}) {
    s->set_prompt("dcab=");
    s->generation().settings.tau = 0;
    s->trace_generate(3, false);
  }
  async.wait_for_trace();
  EXPECT_EQ(async.run_kind(), RunKind::Generate);
  EXPECT_EQ(async.generation().generated(), sync.generation().generated());
  ASSERT_EQ(async.generation().generated().size(), 3u);
  expect_same_trace(async.trace(), sync.trace());
  async.trace_generate(1, true);  // appends to what the async run generated
  async.wait_for_trace();
  EXPECT_EQ(async.generation().generated().size(), 4u);
}

TEST(SessionAsync, ANewModelSupersedesATraceOfTheOldOne) {
  Session s;
  s.async_min_params = 0;
  s.set_prompt("ab=");  // running on the old model, which the run keeps alive
  EXPECT_TRUE(s.tracing());
  s.set_model(small_model("gpt"), "another model");  // traced and shown at once
  EXPECT_FALSE(s.tracing());
  EXPECT_EQ(s.model_label(), "another model");
  EXPECT_EQ(s.trace().tokens_x, s.tokens());
  EXPECT_EQ(ev(s).alg, 10);
  EXPECT_EQ(ev(s).line, 1);
  // The superseded run finishes unseen; the trace views the new model's θ.
  s.wait_for_trace();
  EXPECT_FALSE(s.poll());
  EXPECT_EQ(s.model_label(), "another model");
  const Value* W_e = nullptr;
  for (const Value& v : s.trace().events[0].values)
    if (v.name == "W_e") W_e = &v;
  ASSERT_NE(W_e, nullptr);
  EXPECT_TRUE(MatF(W_e->m) == MatF(s.model().weights().W_e));
}

// --- opening models: files and folders ---

namespace {

namespace fs = std::filesystem;

fs::path temp_dir(const std::string& name) {
  const fs::path d = fs::temp_directory_path() / ("stepformer-session-" + std::to_string(::getpid()) + "-" + name);
  fs::remove_all(d);
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(SessionOpen, AFolderHoldingAStepformerCheckpointOpens) {
  const fs::path dir = temp_dir("sorter");
  fs::copy_file(assets_dir() + "/default.safetensors", dir / "model.safetensors");
  Session s;
  s.set_model(small_model("gpt"), "another model");
  std::string error;
  ASSERT_TRUE(s.load_model(dir.string(), error)) << error;
  EXPECT_EQ(s.model_label(), "stepformer-session-" + std::to_string(::getpid()) + "-sorter");
  EXPECT_EQ(s.origin().layout, Layout::Stepformer);
  EXPECT_EQ(s.origin().path, dir.string());
  ASSERT_FALSE(s.origin().files.empty());
  EXPECT_EQ(fs::path(s.origin().files[0]).filename(), "model.safetensors");
  EXPECT_TRUE(s.origin().provenance.empty());  // its tensors are stored under the paper's names
  EXPECT_EQ(ev(s).alg, 10);
  fs::remove_all(dir);
}

TEST(SessionOpen, ABrokenFolderKeepsTheCurrentModelAndSaysWhy) {
  const fs::path dir = temp_dir("broken");
  std::ofstream(dir / "config.json") << R"({"model_type": "gpt2", "n_layer": 2, "n_head": 2, "n_embd": 8})";
  std::ofstream(dir / "model.safetensors") << "not a safetensors file";
  Session s;
  ASSERT_TRUE(s.jump_to(4, 5, 2, 3));
  const std::string label = s.model_label();
  const size_t cursor = s.cursor(), steps = s.trace().size();
  std::string error;
  EXPECT_FALSE(s.load_model(dir.string(), error));
  EXPECT_NE(error.find("model.safetensors"), std::string::npos) << error;  // the message names the file
  EXPECT_EQ(s.model_label(), label);
  EXPECT_EQ(s.cursor(), cursor);
  EXPECT_EQ(s.trace().size(), steps);
  error.clear();
  EXPECT_FALSE(s.load_model((dir / "nothing-here").string(), error));
  EXPECT_FALSE(error.empty());
  EXPECT_EQ(s.model_label(), label);
  fs::remove_all(dir);
}

namespace {

// tests/data/ecosystem/<layout>: the tiny checkpoints in the ecosystem's layouts (tests/reference/gen_ecosystem*.py).
std::string ecosystem_dir(const std::string& layout) {
  return std::string(STEPFORMER_SOURCE_DIR) + "/tests/data/ecosystem/" + layout;
}

}  // namespace

TEST(SessionOpen, AHuggingFaceGpt2FolderShowsItsPiecesAndWhereItsTensorsCameFrom) {
  const std::string dir = ecosystem_dir("hf-gpt2");
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is not there yet";
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(dir, error)) << error;
  EXPECT_NE(s.model_label().find("(Hugging Face GPT-2 layout)"), std::string::npos) << s.model_label();
  EXPECT_EQ(s.origin().layout, Layout::HfGpt2);
  EXPECT_FALSE(s.origin().provenance.empty());
  EXPECT_EQ(s.tokenizer().kind(), TokenizerKind::Gpt2);
  EXPECT_EQ(s.tokenizer().mask_token(), 0);  // GPT-2 has no mask token
  s.set_prompt("Hello world");
  s.wait_for_trace();
  ASSERT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  EXPECT_EQ(s.tokenizer().decode_text(Tokens(s.tokens().begin() + 1, s.tokens().end())), "Hello world");
  bool space_piece = false;  // GPT-2 writes " world" as "Ġworld": shown "␣world"
  for (int id : s.tokens()) space_piece |= s.tokenizer().label(id).rfind("␣", 0) == 0;
  EXPECT_TRUE(space_piece);
  EXPECT_EQ(s.trace().tokens_x, s.tokens());
  std::string err;
  EXPECT_FALSE(s.toggle_mask(2, err));
  EXPECT_NE(err.find("no mask token"), std::string::npos) << err;
}

TEST(SessionOpen, AHuggingFaceBertFolderFillsItsOwnMask) {
  const std::string dir = ecosystem_dir("hf-bert");
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is not there yet";
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(dir, error)) << error;
  EXPECT_EQ(s.origin().layout, Layout::HfBert);
  EXPECT_EQ(s.arch().output(), OutputKind::FillIn);
  ASSERT_NE(s.tokenizer().mask_token(), 0);
  EXPECT_EQ(s.tokenizer().piece(s.tokenizer().mask_token()), "[MASK]");
  const std::string text = "the cat sat";
  s.set_prompt(text);
  s.wait_for_trace();
  ASSERT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
  // [CLS] the … [SEP]: t = 3 is the second piece; masking puts [MASK] in place of its text.
  const std::vector<TextPiece> pieces = s.tokenizer().tokenize(text);
  ASSERT_GE(pieces.size(), 2u);
  const std::string masked =
      text.substr(0, pieces[1].byte) + "[MASK]" + text.substr(pieces[1].byte + pieces[1].text.size());
  std::string err;
  ASSERT_TRUE(s.toggle_mask(3, err)) << err;
  s.wait_for_trace();
  EXPECT_EQ(s.prompt(), masked);
  EXPECT_EQ(s.tokens()[2], s.tokenizer().mask_token());
  ASSERT_TRUE(s.toggle_mask(3, err)) << err;
  EXPECT_EQ(s.prompt(), text);
  ASSERT_TRUE(s.toggle_mask(3, err)) << err;
  s.fill_in().settings = {0.0, 1, 5};
  const FillResult expect = fill_masks(s.tokens(), s.model(), 0.0, 1, 5);
  ASSERT_EQ(s.fill().positions.size(), 1u) << s.fill_error();
  EXPECT_EQ(s.fill().filled, expect.filled);
}

// --- drawing big matrices: the reduction and the zoom (pure functions) ---

TEST(Downsample, GPT2sVocabularyAxisIsReducedToTheTextureLimit) {
  const AxisReduction a = reduce_axis(50257, 4096);
  EXPECT_EQ(a.factor, 13);   // ⌈50257 / 4096⌉
  EXPECT_EQ(a.texels, 3866);  // ⌈50257 / 13⌉
  const AxisReduction fits = reduce_axis(768, 4096);
  EXPECT_EQ(fits.factor, 1);
  EXPECT_EQ(fits.texels, 768);
  EXPECT_EQ(downsample_caption(a, fits), "50257 rows shown as 3866, each pixel the largest |value| of 13 rows");
  EXPECT_EQ(downsample_caption(fits, fits), "");
  EXPECT_EQ(downsample_caption(fits, reduce_axis(10, 4)),
            "10 columns shown as 4, each pixel the largest |value| of 3 columns");
}

TEST(Downsample, EachTexelIsTheLargestMagnitudeOfItsBlock) {
  MatF m(5, 4);  // (5, 4)
  m << 1, -2, 3, 0,  //
      -7, 1, 1, 0,   //
      2, 2, 2, 9,    //
      0, 0, -INFINITY, 1,  //
      4, 0, 0, -5;
  const Downsampled d = downsample(m, whole(5, 4), 2, 2);  // blocks of 3 rows × 2 columns
  ASSERT_EQ(d.m.rows(), 2);
  ASSERT_EQ(d.m.cols(), 2);
  EXPECT_EQ(d.rows.factor, 3);
  EXPECT_EQ(d.cols.factor, 2);
  EXPECT_EQ(d.m(0, 0), -7.0f);       // rows 1–3, columns 1–2: |−7| is the largest, its sign kept
  EXPECT_EQ(d.m(0, 1), 9.0f);        // rows 1–3, columns 3–4
  EXPECT_EQ(d.m(1, 0), 4.0f);        // rows 4–5 (the last block is short), columns 1–2
  EXPECT_EQ(d.m(1, 1), -INFINITY);   // a masked entry stays visible
  m(4, 0) = NAN;
  EXPECT_TRUE(std::isnan(downsample(m, whole(5, 4), 2, 2).m(1, 0)));
  // A window: rows 2–3, columns 2–4 at full resolution.
  const Downsampled w = downsample(m, MatWindow{1, 3, 1, 4}, 100, 100);
  EXPECT_FALSE(w.reduced());
  EXPECT_TRUE(w.m == m.block(1, 1, 2, 3));
}

TEST(Downsample, ATransposedViewIsReadThroughItsStrides) {
  MatF W(3, 7);  // (3, 7): viewed as Wᵀ (7, 3) without a copy
  for (int i = 0; i < W.size(); ++i) W.data()[i] = static_cast<float>(i % 5) - 2.0f;
  const Eigen::Map<const MatF, 0, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>> Wt(
      W.data(), 7, 3, Eigen::Stride<Eigen::Dynamic, Eigen::Dynamic>(1, 3));
  const Downsampled d = downsample(Wt, whole(7, 3), 7, 3);
  EXPECT_TRUE(d.m == MatF(W.transpose()));
}

TEST(Downsample, ZoomKeepsThePointUnderThePointerAndStaysInside) {
  const MatWindow all = whole(50257, 32);
  const MatWindow z = zoom_window(all, 50257, 32, 0.5, 10000.0, 16.0);
  EXPECT_NEAR(z.rows(), 25128, 1);
  EXPECT_EQ(z.cols(), 32);  // a side of 32 entries or fewer stays whole (P's ℓ columns)
  // The pointer's row keeps its place: 10000 was at 10000/50257 of the way down, and still is.
  // r0 and rows are whole rows, each rounded by ≤ ½: the ratio moves by ≤ 1/rows (4e-5).
  EXPECT_NEAR((10000.0 - z.r0) / z.rows(), 10000.0 / 50257, 1.0 / z.rows());
  MatWindow in = all;
  for (int i = 0; i < 100; ++i) in = zoom_window(in, 50257, 32, 0.5, 50256.0, 31.0);
  EXPECT_EQ(in.rows(), 32);  // at least 32 entries
  EXPECT_EQ(in.r1, 50257);   // kept inside
  const MatWindow w = zoom_window(whole(768, 50257), 768, 50257, 0.1, 100.0, 40000.0);
  EXPECT_NEAR(w.rows(), 77, 1);  // both sides of W_e zoom
  EXPECT_NEAR(w.cols(), 5026, 1);
  EXPECT_EQ(zoom_window(in, 50257, 32, 1e9, 0, 0), all);  // zooming out ends at the whole matrix
  const MatWindow p = pan_window(MatWindow{100, 200, 0, 32}, 50257, 32, -500, 3);
  EXPECT_EQ(p, (MatWindow{0, 100, 0, 32}));  // clamped at the top; the columns cannot move
}

// TokenInput: the prompt x and the context z, as the Session holds them.
namespace {

// Ids 1 … 3 for a, b, c, then mask_token 4, bos_token 5, eos_token 6 (VocabTokenizer's order).
std::unique_ptr<Tokenizer> abc_tokenizer() {
  ModelConfig c;
  c.vocab = {"a", "b", "c"};
  return make_tokenizer(c);
}

}  // namespace

TEST(TokenInput, EncodesWithAndWithoutEos) {
  const auto tok = abc_tokenizer();
  TokenInput x;
  x.text = "abc";
  ASSERT_TRUE(x.encode(*tok, 16));
  EXPECT_EQ(x.tokens, (Tokens{5, 1, 2, 3}));
  EXPECT_FALSE(x.stale);
  EXPECT_TRUE(x.error.empty());
  TokenInput z("context", true);
  z.text = "ca";
  ASSERT_TRUE(z.encode(*tok, 16));
  EXPECT_EQ(z.tokens, (Tokens{5, 3, 1, 6}));
}

TEST(TokenInput, UnknownCharactersAreNamedAndTheLastTokensKept) {
  const auto tok = abc_tokenizer();
  TokenInput x;
  x.text = "ab";
  ASSERT_TRUE(x.encode(*tok, 16));
  x.text = "aXb";
  EXPECT_FALSE(x.encode(*tok, 16));
  EXPECT_TRUE(x.stale);
  EXPECT_EQ(x.tokens, (Tokens{5, 1, 2}));  // still "ab": the trace shown is of them
  ASSERT_EQ(x.unknown.size(), 1u);
  EXPECT_EQ(x.unknown[0].chr, "X");
  EXPECT_EQ(x.unknown[0].position, 2u);
  EXPECT_EQ(x.error, "\"X\" at 2 is not in the vocabulary (a–c). Replace or remove the marked characters (special "
                     "tokens are written [MASK], [BOS], [EOS]); until then the trace is stale: it shows the last "
                     "prompt that could be encoded");
  x.text = "c";  // fixed: fresh tokens, no error, not stale
  ASSERT_TRUE(x.encode(*tok, 16));
  EXPECT_EQ(x.tokens, (Tokens{5, 3}));
  EXPECT_FALSE(x.stale);
  EXPECT_TRUE(x.error.empty());
  EXPECT_TRUE(x.unknown.empty());
}

TEST(TokenInput, LongerThanLMaxIsStale) {
  const auto tok = abc_tokenizer();
  TokenInput x;
  x.text = "ab";
  ASSERT_TRUE(x.encode(*tok, 4));
  x.text = "abca";  // 5 tokens with <bos>
  EXPECT_FALSE(x.encode(*tok, 4));
  EXPECT_TRUE(x.stale);
  EXPECT_TRUE(x.unknown.empty());
  EXPECT_EQ(x.tokens, (Tokens{5, 1, 2}));
  EXPECT_EQ(x.error, "the prompt is 5 tokens with <bos>, but ℓ_max = 4: shorten it (until then the trace is stale: "
                     "it shows the last prompt that fits)");
  TokenInput z("context", true);
  z.text = "abc";  // 5 tokens with <bos> and <eos>
  EXPECT_FALSE(z.encode(*tok, 4));
  EXPECT_TRUE(z.tokens.empty());  // nothing encoded yet: the Session then traces [bos_token, eos_token]
  EXPECT_EQ(z.error, "the context is 5 tokens with <bos> and <eos>, but ℓ_max = 4: shorten it (until then the trace "
                     "is stale: it shows the last context that fits)");
}

TEST(TokenInput, TheSessionHoldsThePromptAndTheContext) {
  Session s;
  EXPECT_STREQ(s.prompt_input().what, "prompt");
  EXPECT_STREQ(s.context_input().what, "context");
  EXPECT_TRUE(s.context_input().with_eos);   // z is [bos_token, characters…, eos_token]
  EXPECT_FALSE(s.prompt_input().with_eos);   // the default model continues text: x has no eos_token
  EXPECT_EQ(s.prompt_input().tokens.front(), s.tokenizer().bos_token());
  EXPECT_EQ(s.prompt_input().tokens.size(), s.prompt().size() + 1);  // "hello=", one character a token
}

}  // namespace test_session
