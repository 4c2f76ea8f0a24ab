// The trace of Algorithm 10 on a 1-layer, 2-head model and 3 tokens, event by event, and the
// debugger-style navigation (step over/into/out/back, breakpoints, call stack, scope) over it.
#include <gtest/gtest.h>

#include <cmath>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "float_bounds.hpp"

namespace test_trace {

using namespace sf;
using namespace sf::test;

namespace {

ModelConfig trace_config() {
  ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.d_e = 4;
  c.d_attn = 2;
  c.d_mid = 2;
  c.d_mlp = 8;
  c.l_max = 8;
  c.vocab = {"a", "b", "c"};  // N_V = 6
  return c;
}

const Tokens kX{6, 1, 3};  // <bos> a c

struct Traced {
  Model model;
  Trace trace;
  MatF P;
};

Traced run(const Tokens& x) {
  Traced r{Model::initialised(trace_config(), 7), {}, {}};
  Tracer tr(r.trace);
  r.P = dtransformer<float>(x, r.model.config, r.model.weights(), &tr);
  return r;
}

struct Ev {
  EventKind kind;
  int alg, line, depth, l, h, t;
};
constexpr EventKind E = EventKind::Enter, L = EventKind::Line, S = EventKind::SubStep;

// (kind, algorithm, line, depth, l, h, t); the index of each event is in the comment.
const std::vector<Ev> kExpected = {
      // DTransformer is entered; line 1: ℓ ← length(x)
      {E, 10,  0, 0, 0, 0, 0},  // 0
      {L, 10,  1, 0, 0, 0, 0},  // 1
      // line 2, for t ∈ [ℓ]: Algorithm 1 (W_e[:, x[t]]) and Algorithm 2 (W_p[:, t]) for t = 1, 2, 3
      {E,  1,  0, 1, 0, 0, 1},  // 2
      {L,  1,  1, 1, 0, 0, 1},  // 3
      {E,  2,  0, 1, 0, 0, 1},  // 4
      {L,  2,  1, 1, 0, 0, 1},  // 5
      {E,  1,  0, 1, 0, 0, 2},  // 6
      {L,  1,  1, 1, 0, 0, 2},  // 7
      {E,  2,  0, 1, 0, 0, 2},  // 8
      {L,  2,  1, 1, 0, 0, 2},  // 9
      {E,  1,  0, 1, 0, 0, 3},  // 10
      {L,  1,  1, 1, 0, 0, 3},  // 11
      {E,  2,  0, 1, 0, 0, 3},  // 12
      {L,  2,  1, 1, 0, 0, 3},  // 13
      // line 2 done, line 3: X ← [e_1, e_2, e_3]; line 4: for l = 1
      {L, 10,  2, 0, 0, 0, 0},  // 14
      {L, 10,  3, 0, 0, 0, 0},  // 15
      {L, 10,  4, 0, 1, 0, 0},  // 16
      // line 5: layer_norm(X[:, t] | γ¹_1, β¹_1) for t = 1, 2, 3 (nested, before line 5's event)
      {E,  6,  0, 1, 1, 0, 1},  // 17
      {L,  6,  1, 1, 1, 0, 1},  // 18
      {L,  6,  2, 1, 1, 0, 1},  // 19
      {L,  6,  3, 1, 1, 0, 1},  // 20
      {E,  6,  0, 1, 1, 0, 2},  // 21
      {L,  6,  1, 1, 1, 0, 2},  // 22
      {L,  6,  2, 1, 1, 0, 2},  // 23
      {L,  6,  3, 1, 1, 0, 2},  // 24
      {E,  6,  0, 1, 1, 0, 3},  // 25
      {L,  6,  1, 1, 1, 0, 3},  // 26
      {L,  6,  2, 1, 1, 0, 3},  // 27
      {L,  6,  3, 1, 1, 0, 3},  // 28
      // line 5 done; line 6 calls MHAttention (nested, before line 6's event)
      {L, 10,  5, 0, 1, 0, 0},  // 29
      {E,  5,  0, 1, 1, 0, 0},  // 30
      //   MHAttention line 1, h = 1; Attention for head 1 (depth 2): lines 1–5, line 6's three sub-steps, line 6
      {L,  5,  1, 1, 1, 1, 0},  // 31
      {E,  4,  0, 2, 1, 1, 0},  // 32
      {L,  4,  1, 2, 1, 1, 0},  // 33
      {L,  4,  2, 2, 1, 1, 0},  // 34
      {L,  4,  3, 2, 1, 1, 0},  // 35
      {L,  4,  4, 2, 1, 1, 0},  // 36
      {L,  4,  5, 2, 1, 1, 0},  // 37
      {S,  4,  6, 3, 1, 1, 0},  // 38
      {S,  4,  6, 3, 1, 1, 0},  // 39
      {S,  4,  6, 3, 1, 1, 0},  // 40
      {L,  4,  6, 2, 1, 1, 0},  // 41
      //   MHAttention line 2 (Y^1); line 1, h = 2; Attention for head 2
      {L,  5,  2, 1, 1, 1, 0},  // 42
      {L,  5,  1, 1, 1, 2, 0},  // 43
      {E,  4,  0, 2, 1, 2, 0},  // 44
      {L,  4,  1, 2, 1, 2, 0},  // 45
      {L,  4,  2, 2, 1, 2, 0},  // 46
      {L,  4,  3, 2, 1, 2, 0},  // 47
      {L,  4,  4, 2, 1, 2, 0},  // 48
      {L,  4,  5, 2, 1, 2, 0},  // 49
      {S,  4,  6, 3, 1, 2, 0},  // 50
      {S,  4,  6, 3, 1, 2, 0},  // 51
      {S,  4,  6, 3, 1, 2, 0},  // 52
      {L,  4,  6, 2, 1, 2, 0},  // 53
      //   MHAttention line 2 (Y^2), line 3 (Y ← [Y^1; Y^2]), line 4 (W_o Y + b_o 1ᵀ)
      {L,  5,  2, 1, 1, 2, 0},  // 54
      {L,  5,  3, 1, 1, 0, 0},  // 55
      {L,  5,  4, 1, 1, 0, 0},  // 56
      // line 6 done; line 7: layer_norm(X[:, t] | γ²_1, β²_1) for t = 1, 2, 3
      {L, 10,  6, 0, 1, 0, 0},  // 57
      {E,  6,  0, 1, 1, 0, 1},  // 58
      {L,  6,  1, 1, 1, 0, 1},  // 59
      {L,  6,  2, 1, 1, 0, 1},  // 60
      {L,  6,  3, 1, 1, 0, 1},  // 61
      {E,  6,  0, 1, 1, 0, 2},  // 62
      {L,  6,  1, 1, 1, 0, 2},  // 63
      {L,  6,  2, 1, 1, 0, 2},  // 64
      {L,  6,  3, 1, 1, 0, 2},  // 65
      {E,  6,  0, 1, 1, 0, 3},  // 66
      {L,  6,  1, 1, 1, 0, 3},  // 67
      {L,  6,  2, 1, 1, 0, 3},  // 68
      {L,  6,  3, 1, 1, 0, 3},  // 69
      // line 7 done; line 8's two sub-steps (W_mlp1 X̃ + b_mlp1 1ᵀ, GELU) then line 8
      {L, 10,  7, 0, 1, 0, 0},  // 70
      {S, 10,  8, 1, 1, 0, 0},  // 71
      {S, 10,  8, 1, 1, 0, 0},  // 72
      {L, 10,  8, 0, 1, 0, 0},  // 73
      // (loop over l ends: l is no longer in force) line 10: layer_norm(X[:, t] | γ, β) for t = 1, 2, 3
      {E,  6,  0, 1, 0, 0, 1},  // 74
      {L,  6,  1, 1, 0, 0, 1},  // 75
      {L,  6,  2, 1, 0, 0, 1},  // 76
      {L,  6,  3, 1, 0, 0, 1},  // 77
      {E,  6,  0, 1, 0, 0, 2},  // 78
      {L,  6,  1, 1, 0, 0, 2},  // 79
      {L,  6,  2, 1, 0, 0, 2},  // 80
      {L,  6,  3, 1, 0, 0, 2},  // 81
      {E,  6,  0, 1, 0, 0, 3},  // 82
      {L,  6,  1, 1, 0, 0, 3},  // 83
      {L,  6,  2, 1, 0, 0, 3},  // 84
      {L,  6,  3, 1, 0, 0, 3},  // 85
      // line 10 done; line 11's sub-step (W_u X) and line 11 (P)
      {L, 10, 10, 0, 0, 0, 0},  // 86
      {S, 10, 11, 1, 0, 0, 0},  // 87
      {L, 10, 11, 0, 0, 0, 0},  // 88
};

// Named indices into kExpected, used by the navigation tests.
constexpr size_t kLine4 = 16;        // DTransformer line 4 (l = 1)
constexpr size_t kLN1t1Enter = 17;   // layer_norm Enter, l = 1, t = 1
constexpr size_t kLN1t2Enter = 21;   // layer_norm Enter, l = 1, t = 2
constexpr size_t kLN1t2Line2 = 23;   // layer_norm line 2, l = 1, t = 2
constexpr size_t kLine5 = 29;        // DTransformer line 5
constexpr size_t kMHEnter = 30;      // MHAttention Enter
constexpr size_t kMHLine1h1 = 31;    // MHAttention line 1, h = 1
constexpr size_t kAttnEnterH1 = 32;  // Attention Enter, h = 1
constexpr size_t kAttnL1h1 = 33;     // Attention line 1, h = 1
constexpr size_t kAttnL5h1 = 37;     // Attention line 5, h = 1
constexpr size_t kAttnSub1h1 = 38;   // Attention line 6, first sub-step, h = 1
constexpr size_t kAttnL6h1 = 41;     // Attention line 6, h = 1
constexpr size_t kMHLine2h1 = 42;    // MHAttention line 2, h = 1
constexpr size_t kAttnL4h2 = 48;     // Attention line 4, h = 2
constexpr size_t kAttnL5h2 = 49;     // Attention line 5, h = 2
constexpr size_t kMHLine2h2 = 54;    // MHAttention line 2, h = 2
constexpr size_t kLine6 = 57;        // DTransformer line 6
constexpr size_t kLine7 = 70;        // DTransformer line 7
constexpr size_t kLine8 = 73;        // DTransformer line 8
constexpr size_t kLine11 = 88;       // DTransformer line 11

std::vector<std::string> names(const std::vector<const Value*>& vs) {
  std::vector<std::string> out;
  for (const Value* v : vs) out.push_back(v->name);
  return out;
}

const Value* value(const Event& e, const std::string& name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace

TEST(Trace, ExactEventSequence) {
  const Traced r = run(kX);
  const Trace& tr = r.trace;
  ASSERT_EQ(kExpected.size(), 89u);
  EXPECT_EQ(tr.size(), kExpected.size());
  for (size_t k = 0; k < std::min(tr.size(), kExpected.size()); ++k) {
    const Event& e = tr.events[k];
    const Ev& w = kExpected[k];
    EXPECT_EQ(e.kind, w.kind) << "event " << k;
    EXPECT_EQ(e.alg, w.alg) << "event " << k;
    EXPECT_EQ(e.line, w.line) << "event " << k;
    EXPECT_EQ(e.depth, w.depth) << "event " << k;
    EXPECT_EQ(e.idx.l, w.l) << "event " << k;
    EXPECT_EQ(e.idx.h, w.h) << "event " << k;
    EXPECT_EQ(e.idx.t, w.t) << "event " << k;
    EXPECT_EQ(e.idx.i, 0) << "event " << k;
    EXPECT_EQ(e.idx.n, 0) << "event " << k;
    EXPECT_EQ(e.label.empty(), e.kind != EventKind::SubStep) << "event " << k;
  }
  EXPECT_EQ(tr.tokens_x, kX);
}

TEST(Trace, ValuesBoundByLines) {
  const Traced r = run(kX);
  const Trace& tr = r.trace;
  ASSERT_EQ(tr.size(), kExpected.size());
  const auto W = r.model.weights();
  // Enter of DTransformer binds x and the top-level parameters.
  EXPECT_EQ(tr.changed(0), (std::vector<std::string>{"x", "W_e", "W_p", "γ", "β", "W_u"}));
  EXPECT_EQ(tr.events[0].values[0].tokens, kX);
  EXPECT_EQ(tr.events[1].values[0].m(0, 0), 3.0f);  // ℓ = 3
  // Algorithm 1 for t = 2 binds v = x[2] = 1 and e = W_e[:, 1].
  EXPECT_EQ(value(tr.events[6], "v")->m(0, 0), 1.0f);
  EXPECT_TRUE(value(tr.events[7], "e")->m == MatF(W.W_e.col(0)));
  // Algorithm 2 for t = 3 binds ℓ = 3 and e_p = W_p[:, 3].
  EXPECT_EQ(value(tr.events[12], "ℓ")->m(0, 0), 3.0f);
  EXPECT_TRUE(value(tr.events[13], "e_p")->m == MatF(W.W_p.col(2)));
  // Line 3: X[:, t] = W_e[:, x[t]] + W_p[:, t].
  const MatF& X = value(tr.events[15], "X")->m;
  for (int t = 0; t < 3; ++t) EXPECT_TRUE(X.col(t) == W.W_e.col(kX[t] - 1) + W.W_p.col(t)) << "column " << t + 1;
  // Line 4 binds l = 1; line 11 binds P, the returned P.
  EXPECT_EQ(value(tr.events[kLine4], "l")->m(0, 0), 1.0f);
  EXPECT_TRUE(value(tr.events[kLine11], "P")->m == r.P);
  // Substep labels of Attention line 6 and DTransformer lines 8 and 11.
  EXPECT_EQ(tr.events[38].label, "S / √d_attn");
  EXPECT_EQ(tr.events[39].label, "softmax(S / √d_attn), column by column");
  EXPECT_EQ(tr.events[40].label, "Ṽ = V · softmax(S / √d_attn)");
  EXPECT_EQ(tr.events[71].label, "W_mlp1 X̃ + b_mlp1 1ᵀ");
  EXPECT_EQ(tr.events[72].label, "GELU(…)");
  EXPECT_EQ(tr.events[87].label, "W_u X");
  // Line 8's sub-steps: GELU of the pre-activation, elementwise.
  const MatF& pre = tr.events[71].values[0].m;
  const MatF& act = tr.events[72].values[0].m;
  ASSERT_EQ(pre.rows(), 8);
  ASSERT_EQ(pre.cols(), 3);
  for (int i = 0; i < 8; ++i)
    for (int t = 0; t < 3; ++t)
      // GELU(x) = x·½(1 + erf(x/√2)) in float against double: erf's error is absolute, k·u (1 + erf
      // cancels for x < 0, so it is not relative to GELU), the scaling, the halving, the sum and the
      // product round once each: |x|·γ_{k+3}.
      EXPECT_NEAR(act(i, t), pre(i, t) * 0.5 * (1 + std::erf(pre(i, t) / std::sqrt(2.0))),
                  std::abs(pre(i, t)) * float_gamma(kFunctionRoundings + 3));
}

TEST(Trace, StepOverAndInto) {
  const Trace tr = run(kX).trace;
  // Over DTransformer line 4 → line 5 (the nested layer_norm calls are skipped).
  EXPECT_EQ(tr.step_over(kLine4), kLine5);
  EXPECT_EQ(tr.events[tr.step_over(kLine4)].line, 5);
  // Into → the first nested layer_norm Enter (t = 1).
  const size_t in = tr.step_into(kLine4);
  EXPECT_EQ(in, kLN1t1Enter);
  EXPECT_EQ(tr.events[in].kind, EventKind::Enter);
  EXPECT_EQ(tr.events[in].alg, 6);
  EXPECT_EQ(tr.events[in].idx.t, 1);
  // Over line 5 → line 6 (all of MHAttention skipped); over line 6 → line 7; 7 → 8.
  EXPECT_EQ(tr.step_over(kLine5), kLine6);
  EXPECT_EQ(tr.step_over(kLine6), kLine7);
  EXPECT_EQ(tr.step_over(kLine7), kLine8);
  // Inside MHAttention: over line 1 (h = 1) → line 2 (h = 1), skipping head 1's Attention.
  EXPECT_EQ(tr.step_over(kMHLine1h1), kMHLine2h1);
  // Inside Attention: over line 5 → line 6, skipping line 6's sub-steps; into → the first sub-step.
  EXPECT_EQ(tr.step_over(kAttnL5h1), kAttnL6h1);
  EXPECT_EQ(tr.step_into(kAttnL5h1), kAttnSub1h1);
  // Over the last line of a frame → the caller's line.
  EXPECT_EQ(tr.step_over(kAttnL6h1), kMHLine2h1);
  EXPECT_EQ(tr.step_over(20), kLN1t2Enter);  // layer_norm t = 1, line 3 → layer_norm t = 2 Enter
  // At the end, nothing moves.
  EXPECT_EQ(tr.step_over(kLine11), kLine11);
  EXPECT_EQ(tr.step_into(kLine11), kLine11);
  EXPECT_EQ(tr.step_back(0), 0u);
  EXPECT_EQ(tr.step_back(kLine5), kLine5 - 1);
}

TEST(Trace, StepOut) {
  const Trace tr = run(kX).trace;
  // From inside layer_norm (l = 1, t = 2, line 2) → DTransformer line 5.
  EXPECT_EQ(tr.step_out(kLN1t2Line2), kLine5);
  EXPECT_EQ(tr.step_out(kLN1t1Enter), kLine5);
  // From Attention (h = 1) → MHAttention line 2 (h = 1); from there → DTransformer line 6.
  EXPECT_EQ(tr.step_out(kAttnL5h1), kMHLine2h1);
  EXPECT_EQ(tr.step_out(kAttnSub1h1), kMHLine2h1);  // a sub-step belongs to its line's frame
  EXPECT_EQ(tr.step_out(kMHLine2h1), kLine6);
  EXPECT_EQ(tr.step_out(kMHEnter), kLine6);
  // From the final layer_norm (t = 2) → line 10; from a top-level line there is no caller:
  // the last event.
  EXPECT_EQ(tr.step_out(80), 86u);
  EXPECT_EQ(tr.step_out(kLine4), kLine11);
  EXPECT_EQ(tr.frame_start(kLN1t2Line2), kLN1t2Enter);
  EXPECT_EQ(tr.frame_start(kAttnSub1h1), kAttnEnterH1);
  EXPECT_EQ(tr.frame_start(kLine6), 0u);
  EXPECT_EQ(tr.caller_line(kLN1t2Line2), kLine5);
  EXPECT_EQ(tr.caller_line(kLine6), tr.size());
}

TEST(Trace, StepBackOver) {
  const Trace tr = run(kX).trace;
  EXPECT_EQ(tr.step_back_over(kLine6), kLine5);  // skips MHAttention's events
  EXPECT_EQ(tr.step_back_over(kLine5), kLine4);  // skips the layer_norm calls
  EXPECT_EQ(tr.step_back_over(kMHLine2h1), kMHLine1h1);
  EXPECT_EQ(tr.step_back_over(kAttnL6h1), kAttnL5h1);  // skips line 6's sub-steps
  EXPECT_EQ(tr.step_back_over(kLN1t1Enter), kLine4);   // from a frame's Enter → the line before the call
  EXPECT_EQ(tr.step_back_over(0), 0u);
  EXPECT_EQ(tr.step_back_over(1), 0u);
}

TEST(Trace, ContinueToBreakpoint) {
  const Trace tr = run(kX).trace;
  const std::vector<LineRef> bp{lines::attention::mask};  // (Algorithm 4, line 5)
  const size_t a = tr.continue_to(0, bp);
  EXPECT_EQ(a, kAttnL5h1);
  EXPECT_EQ(tr.events[a].idx.h, 1);
  const size_t b = tr.continue_to(a, bp);
  EXPECT_EQ(b, kAttnL5h2);
  EXPECT_EQ(tr.events[b].idx.h, 2);
  EXPECT_EQ(tr.continue_to(b, bp), kLine11);  // no more hits: the last event
  // Several breakpoints: the first hit in trace order.
  EXPECT_EQ(tr.continue_to(0, {lines::d_transformer::norm2, lines::layer_norm::v}), 19u);
  EXPECT_EQ(tr.continue_to(kLine6, {lines::d_transformer::norm2, lines::layer_norm::v}), 60u);
  // Sub-steps are not stops: (4, 6) stops at the line event, not its first sub-step.
  EXPECT_EQ(tr.continue_to(kAttnL5h1, {lines::attention::V_tilde}), kAttnL6h1);
  EXPECT_EQ(tr.continue_to(0, {lines::d_transformer::P}), kLine11);
  EXPECT_EQ(tr.continue_to(0, {}), kLine11);
}

TEST(Trace, CallStack) {
  const Trace tr = run(kX).trace;
  // Inside Attention line 5 of head 2: [DTransformer line 6, MHAttention line 2, Attention line 5].
  const std::vector<size_t> cs = tr.call_stack(kAttnL5h2);
  ASSERT_EQ(cs, (std::vector<size_t>{kLine6, kMHLine2h2, kAttnL5h2}));
  EXPECT_EQ(tr.events[cs[0]].alg, 10);
  EXPECT_EQ(tr.events[cs[0]].line, 6);
  EXPECT_EQ(tr.events[cs[0]].idx, (Indices{1, 0, 0, 0, 0}));
  EXPECT_EQ(tr.events[cs[1]].alg, 5);
  EXPECT_EQ(tr.events[cs[1]].line, 2);
  EXPECT_EQ(tr.events[cs[1]].idx, (Indices{1, 2, 0, 0, 0}));
  EXPECT_EQ(tr.events[cs[2]].alg, 4);
  EXPECT_EQ(tr.events[cs[2]].line, 5);
  EXPECT_EQ(tr.events[cs[2]].idx, (Indices{1, 2, 0, 0, 0}));
  EXPECT_EQ(tr.call_stack(kAttnL5h1), (std::vector<size_t>{kLine6, kMHLine2h1, kAttnL5h1}));
  EXPECT_EQ(tr.call_stack(kAttnSub1h1), (std::vector<size_t>{kLine6, kMHLine2h1, kAttnSub1h1}));
  EXPECT_EQ(tr.call_stack(kLN1t2Line2), (std::vector<size_t>{kLine5, kLN1t2Line2}));
  EXPECT_EQ(tr.call_stack(3), (std::vector<size_t>{14, 3}));  // Algorithm 1 inside line 2
  EXPECT_EQ(tr.call_stack(kLine4), (std::vector<size_t>{kLine4}));
  EXPECT_TRUE(tr.call_stack(tr.size()).empty());
}

TEST(Trace, ScopeAtAttentionLine5) {
  const Trace tr = run(kX).trace;
  const auto sc = tr.scope(kAttnL5h2);
  EXPECT_EQ(names(sc), (std::vector<std::string>{"X", "Z", "W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "Mask", "Q",
                                                 "K", "V", "S"}));
  // S is line 5's (masked) S: exactly −∞ below the diagonal, line 4's values elsewhere.
  const Value* S = sc.back();
  EXPECT_EQ(S, &tr.events[kAttnL5h2].values[0]);
  const MatF& raw = tr.events[kAttnL4h2].values[0].m;
  ASSERT_EQ(S->m.rows(), 3);
  ASSERT_EQ(S->m.cols(), 3);
  for (int tz = 0; tz < 3; ++tz)
    for (int tx = 0; tx < 3; ++tx)
      if (tz > tx) {
        EXPECT_TRUE(std::isinf(S->m(tz, tx)) && std::signbit(S->m(tz, tx)));
      } else {
        EXPECT_EQ(S->m(tz, tx), raw(tz, tx));
      }
  // Mask is the unidirectional one; X = Z = X̃ of line 5; W_q is head 2's.
  EXPECT_EQ(sc[8]->kind, ValueKind::Mask);
  EXPECT_TRUE(sc[8]->m == unidirectional_mask(3, 3).cast<float>());
  EXPECT_TRUE(sc[0]->m == tr.events[kLine5].values[0].m);
  const Traced r = run(kX);
  EXPECT_TRUE(sc[2]->m == MatF(r.model.weights().layers[0].attn.heads[1].W_q));
  EXPECT_FALSE(sc[2]->m == MatF(r.model.weights().layers[0].attn.heads[0].W_q));
  // At line 1 only Q is new; head 1's values do not leak into head 2's frame.
  EXPECT_EQ(names(tr.scope(kAttnL1h1)).back(), "Q");
  EXPECT_EQ(tr.scope(kAttnL1h1).size(), 10u);
}

TEST(Trace, ScopeInOtherFrames) {
  const Traced r = run(kX);
  const Trace& tr = r.trace;
  // layer_norm (l = 1, t = 2) at line 2: its inputs, m and v — nothing from the t = 1 frame.
  const auto ln = tr.scope(kLN1t2Line2);
  EXPECT_EQ(names(ln), (std::vector<std::string>{"e", "γ", "β", "ε", "m", "v"}));
  const MatF& X = tr.events[15].values[0].m;  // X of line 3, the input of layer 1
  EXPECT_TRUE(ln[0]->m == MatF(X.col(1)));
  // Both are float means of the same d_e = 4 entries, maybe summed in another order: 2·γ_4·Σ|e|/d_e.
  EXPECT_NEAR(ln[4]->m(0, 0), X.col(1).mean(), 2 * float_gamma(4) * X.col(1).cwiseAbs().mean());
  EXPECT_FALSE(ln[3]->note.empty());  // ε carries the note that the paper has none
  // DTransformer at line 6: X rebound by line 6 (latest binding wins, first-binding order).
  const auto top = tr.scope(kLine6);
  EXPECT_EQ(names(top), (std::vector<std::string>{"x", "W_e", "W_p", "γ", "β", "W_u", "ℓ", "e_t", "X", "l", "X̃",
                                                  "Mask"}));
  EXPECT_EQ(top[8], &tr.events[kLine6].values[1]);
  // At line 8, X̃ is line 7's.
  const auto top8 = tr.scope(kLine8);
  EXPECT_EQ(top8[10], &tr.events[kLine7].values[0]);
  // A sub-step's own value is in scope at that sub-step.
  EXPECT_EQ(names(tr.scope(71)).back(), "W_mlp1 X̃ + b_mlp1 1ᵀ");
  EXPECT_TRUE(tr.scope(tr.size()).empty());
}

TEST(Trace, Changed) {
  const Trace tr = run(kX).trace;
  EXPECT_EQ(tr.changed(kAttnL1h1), std::vector<std::string>{"Q"});
  EXPECT_EQ(tr.changed(kAttnL5h1), std::vector<std::string>{"S"});
  EXPECT_EQ(tr.changed(kAttnL6h1), (std::vector<std::string>{"softmax(S/√d_attn)", "Ṽ"}));
  EXPECT_EQ(tr.changed(kLine6), (std::vector<std::string>{"Mask", "X"}));
  EXPECT_EQ(tr.changed(kMHLine2h1), std::vector<std::string>{"Y^1"});
  EXPECT_EQ(tr.changed(kMHLine2h2), std::vector<std::string>{"Y^2"});
  EXPECT_EQ(tr.changed(kAttnEnterH1),
            (std::vector<std::string>{"X", "Z", "W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "Mask"}));
  EXPECT_EQ(tr.changed(kMHEnter), (std::vector<std::string>{"X", "Z", "Mask", "W_o", "b_o"}));
  EXPECT_EQ(tr.changed(kLine11), std::vector<std::string>{"P"});
  EXPECT_TRUE(tr.changed(tr.size()).empty());
}

TEST(Trace, FindMatching) {
  const Trace a = run(kX).trace;
  const Trace b = run({6, 1, 3, 2}).trace;  // one more token: every index after line 1 moves
  ASSERT_GT(b.size(), a.size());
  // Attention line 5 of head 2 is found at its new index, with the same indices.
  const size_t j = b.find_matching(a.events[kAttnL5h2]);
  EXPECT_NE(j, kAttnL5h2);
  EXPECT_EQ(b.events[j].kind, EventKind::Line);
  EXPECT_EQ(b.events[j].alg, 4);
  EXPECT_EQ(b.events[j].line, 5);
  EXPECT_EQ(b.events[j].idx, (Indices{1, 2, 0, 0, 0}));
  // DTransformer line 11 → line 11.
  EXPECT_EQ(b.find_matching(a.events[kLine11]), b.size() - 1);
  // An event of b with t = 4 has no counterpart in a: the closest is the same algorithm and line.
  size_t k4 = 0;
  for (size_t k = 0; k < b.size(); ++k)
    if (b.events[k].alg == 6 && b.events[k].line == 2 && b.events[k].idx.t == 4) {
      k4 = k;
      break;
    }
  ASSERT_NE(k4, 0u);
  const size_t m = a.find_matching(b.events[k4]);
  EXPECT_EQ(a.events[m].alg, 6);
  EXPECT_EQ(a.events[m].line, 2);
  EXPECT_EQ(a.events[m].idx.l, b.events[k4].idx.l);
  // Every event of a is matched in a by one with the same kind, algorithm, line, depth, indices.
  for (size_t k = 0; k < a.size(); ++k) {
    const Event& e = a.events[k];
    const Event& f = a.events[a.find_matching(e)];
    EXPECT_EQ(f.kind, e.kind) << k;
    EXPECT_EQ(f.alg, e.alg) << k;
    EXPECT_EQ(f.line, e.line) << k;
    EXPECT_EQ(f.depth, e.depth) << k;
    EXPECT_EQ(f.idx, e.idx) << k;
  }
}

}  // namespace test_trace
