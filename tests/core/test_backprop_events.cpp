// The traced backward's events (core/backprop/): the exact sequence of a small GPT's backward, the
// stepping a debugger does on it (call stack, step over / out / back, breakpoints on backward lines),
// and the masks' exact zeros in ∇S.
#include <gtest/gtest.h>

#include <tuple>

#include "core/backprop/traced_backward.hpp"
#include "core/trace/value_keys.hpp"
#include "test_backprop_support.hpp"

namespace test_backprop_events {

using namespace sf;
using namespace sf::test;

namespace {

using B = Pass;

// One event as the test states it: kind, alg, line, pass, depth, and the indices l, h, t.
struct Ev {
  EventKind kind;
  int alg, line;
  Pass pass;
  int depth, l, h, t;
  bool operator==(const Ev&) const = default;
};
std::ostream& operator<<(std::ostream& o, const Ev& e) {
  const char* k = e.kind == EventKind::Enter ? "Enter" : e.kind == EventKind::Line ? "Line" : "Sub";
  return o << k << " " << e.alg << ":" << e.line << (e.pass == Pass::Backward ? "̄" : "") << " d" << e.depth
           << " l" << e.l << " h" << e.h << " t" << e.t;
}
Ev of(const Event& e) { return {e.kind, e.alg, e.line, e.pass, e.depth, e.idx.l, e.idx.h, e.idx.t}; }

// A 1-layer, 2-head GPT (the paper's variants) and its traced backward on 3 tokens.
struct OneLayer {
  Model m;
  Trace trace;
  explicit OneLayer(ModelConfig c = small_gpt()) : m(init(c)) {
    Tracer tracer(trace);
    traced_backward<double>(m, dtraining_batch({1, 2, 3}, m.config), &tracer);
  }
  static Model init(ModelConfig c) {
    c.L = 1;
    return spread_model(c, 5);
  }
};

// The events of the backward listings as the contract (core/backprop/adjoints.hpp) orders them.
std::vector<Ev> expected_one_layer() {
  const EventKind En = EventKind::Enter, Li = EventKind::Line, Su = EventKind::SubStep;
  const Pass b = Pass::Backward;
  std::vector<Ev> v;
  auto add = [&](EventKind k, int alg, int line, int d, int l = 0, int h = 0, int t = 0) {
    v.push_back({k, alg, line, b, d, l, h, t});
  };
  auto layer_norm = [&](int l, int t) {  // Algorithm 6's adjoint, one column: 3̄ (5 sub-steps), 2̄, 1̄
    add(En, 6, 0, 1, l, 0, t);
    for (int s = 0; s < 5; ++s) add(Su, 6, 3, 2, l, 0, t);
    add(Li, 6, 3, 1, l, 0, t);
    add(Li, 6, 2, 1, l, 0, t);
    add(Li, 6, 1, 1, l, 0, t);
  };
  add(En, 10, 0, 0);
  add(Li, 13, 5, 0);  // the loss line's adjoint: ∇P
  for (int t = 1; t <= 3; ++t) {  // 11̄: Algorithm 7's adjoint per column
    add(En, 7, 0, 1, 0, 0, t);
    add(Su, 7, 1, 2, 0, 0, t);
    add(Su, 7, 1, 2, 0, 0, t);
    add(Li, 7, 1, 1, 0, 0, t);
  }
  add(Li, 10, 11, 0);
  for (int t = 1; t <= 3; ++t) layer_norm(0, t);  // 10̄
  add(Li, 10, 10, 0);
  add(Li, 10, 4, 0, 1);  // for l = L, …, 1
  for (int s = 0; s < 4; ++s) add(Su, 10, 8, 1, 1);  // 8̄: the MLP's sub-steps
  add(Li, 10, 8, 0, 1);
  for (int t = 1; t <= 3; ++t) layer_norm(1, t);  // 7̄
  add(Li, 10, 7, 0, 1);
  add(En, 5, 0, 1, 1);  // 6̄: Algorithm 5's adjoint
  add(Li, 5, 4, 1, 1);
  add(Li, 5, 3, 1, 1);
  for (int h = 2; h >= 1; --h) {
    add(Li, 5, 1, 1, 1, h);
    add(En, 4, 0, 2, 1, h);  // Algorithm 4's adjoint: 6̄ (3 sub-steps), 5̄, 4̄, 3̄, 2̄, 1̄
    for (int s = 0; s < 3; ++s) add(Su, 4, 6, 3, 1, h);
    for (int line = 6; line >= 1; --line) add(Li, 4, line, 2, 1, h);
    add(Li, 5, 2, 1, 1, h);
  }
  add(Li, 10, 6, 0, 1);
  for (int t = 1; t <= 3; ++t) layer_norm(1, t);  // 5̄
  add(Li, 10, 5, 0, 1);
  add(Li, 10, 3, 0);
  for (int t = 1; t <= 3; ++t) {  // 2̄: Algorithms 1 and 2's adjoints per position
    add(En, 1, 0, 1, 0, 0, t);
    add(Li, 1, 1, 1, 0, 0, t);
    add(En, 2, 0, 1, 0, 0, t);
    add(Li, 2, 1, 1, 0, 0, t);
  }
  add(Li, 10, 2, 0);
  return v;
}

}  // namespace

TEST(BackpropEvents, OneLayerTwoHeadGptOnThreeTokensHasTheListingsSequence) {
  const OneLayer run;
  const std::vector<Ev> want = expected_one_layer();
  std::vector<Ev> got;
  for (const Event& e : run.trace.events) got.push_back(of(e));
  ASSERT_EQ(got.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) EXPECT_EQ(got[k], want[k]) << "event " << k;
}

TEST(BackpropEvents, BackwardValuesAreNamedWithNabla) {
  const OneLayer run;
  const Trace& tr = run.trace;
  const size_t s6 = find_event(tr, lines::attention::V_tilde.adjoint(), EventKind::Line, 1, 2);
  ASSERT_LT(s6, tr.size());
  for (const char* name : {"∇V", "∇A", "∇S"}) EXPECT_NE(bound(tr, s6, name), nullptr) << name;
  EXPECT_EQ(bound(tr, s6, "∇A")->note.find("softmax(S/√d_attn)") != std::string::npos, true);
  const size_t s4 = find_event(tr, lines::attention::S.adjoint(), EventKind::Line, 1, 2);
  EXPECT_NE(bound(tr, s4, "∇Q"), nullptr);
  EXPECT_NE(bound(tr, s4, "∇K"), nullptr);
  const size_t s1 = find_event(tr, lines::attention::Q.adjoint(), EventKind::Line, 1, 1);
  for (const char* name : {"∇W_q", "∇b_q", "∇X"}) EXPECT_NE(bound(tr, s1, name), nullptr) << name;
  // a partial gradient says which path it holds
  const size_t s3 = find_event(tr, lines::attention::V.adjoint(), EventKind::Line, 1, 1);
  ASSERT_NE(bound(tr, s3, "∇Z"), nullptr);
  EXPECT_NE(bound(tr, s3, "∇Z")->note.find("Partial"), std::string::npos);
  const size_t ln3 = find_event(tr, lines::layer_norm::e_hat.adjoint(), EventKind::Line, 1, 0, 2);
  for (const char* name : {"∇γ", "∇β", "∇e", "∇v", "∇m"}) EXPECT_NE(bound(tr, ln3, name), nullptr) << name;
  const size_t loss = find_event(tr, lines::d_training::loss.adjoint());
  ASSERT_NE(bound(tr, loss, "∇P"), nullptr);
}

TEST(BackpropEvents, CallStackMirrorsTheForward) {
  const OneLayer run;
  const Trace& tr = run.trace;
  const size_t k = find_event(tr, lines::attention::V_tilde.adjoint(), EventKind::Line, 1, 2);
  ASSERT_LT(k, tr.size());
  const std::vector<size_t> stack = tr.call_stack(k);
  ASSERT_EQ(stack.size(), 3u);
  // DTransformer adjoint line 6 (l=1) › MHAttention adjoint line 2 (h=2) › Attention adjoint line 6 (h=2)
  EXPECT_EQ(tr.events[stack[0]].ref(), lines::d_transformer::attention.adjoint());
  EXPECT_EQ(tr.events[stack[0]].idx.l, 1);
  EXPECT_EQ(tr.events[stack[1]].ref(), lines::mh_attention::Y_h.adjoint());
  EXPECT_EQ(tr.events[stack[1]].idx.h, 2);
  EXPECT_EQ(stack[2], k);
  EXPECT_EQ(tr.caller_ref(k), lines::mh_attention::Y_h.adjoint());
  EXPECT_EQ(tr.outer_caller_ref(k), lines::d_transformer::attention.adjoint());
}

TEST(BackpropEvents, SteppingWorksOnBackwardLines) {
  const OneLayer run;
  const Trace& tr = run.trace;
  const size_t loop = find_event(tr, lines::d_transformer::loop.adjoint(), EventKind::Line, 1);
  const size_t mlp = find_event(tr, lines::d_transformer::mlp.adjoint());
  ASSERT_LT(mlp, tr.size());
  EXPECT_EQ(tr.step_over(loop), mlp);  // over the MLP's sub-steps
  EXPECT_EQ(tr.step_into(loop), loop + 1);
  const size_t norm2 = find_event(tr, lines::d_transformer::norm2.adjoint());
  EXPECT_EQ(tr.step_over(mlp), norm2);  // over line 7̄'s nested Algorithm 6 frames (3 columns × 9 events)
  EXPECT_EQ(norm2, mlp + 28);
  EXPECT_EQ(tr.step_back_over(norm2), mlp);
  EXPECT_EQ(tr.step_into(mlp), mlp + 1);  // into column 1's Algorithm 6 adjoint frame
  EXPECT_EQ(tr.events[mlp + 1].kind, EventKind::Enter);
  EXPECT_EQ(tr.step_over(mlp + 1), mlp + 7);  // inside the frame: over line 3̄'s five sub-steps to 3̄ itself
  EXPECT_EQ(tr.events[mlp + 7].ref(), lines::layer_norm::e_hat.adjoint());
  EXPECT_EQ(tr.step_out(mlp + 1), norm2);  // out of the frame: to its calling line
  // step out of an Attention adjoint line: to Algorithm 5's line 2 of the same head
  const size_t a4 = find_event(tr, lines::attention::S.adjoint(), EventKind::Line, 1, 1);
  const size_t y2 = find_event(tr, lines::mh_attention::Y_h.adjoint(), EventKind::Line, 1, 1);
  EXPECT_EQ(tr.step_out(a4), y2);
  EXPECT_EQ(tr.step_back(a4), a4 - 1);
  EXPECT_EQ(tr.events[tr.step_back(a4)].ref(), lines::attention::mask.adjoint());  // 5̄ runs before 4̄
}

TEST(BackpropEvents, BreakpointsOnBackwardLinesStopOnlyThere) {
  const OneLayer run;
  const Trace& tr = run.trace;
  const size_t first = tr.continue_to(0, {lines::attention::V_tilde.adjoint()});
  EXPECT_EQ(tr.events[first].ref(), lines::attention::V_tilde.adjoint());
  EXPECT_EQ(tr.events[first].idx.h, 2);  // heads run H, …, 1
  const size_t second = tr.continue_to(first, {lines::attention::V_tilde.adjoint()});
  EXPECT_EQ(tr.events[second].idx.h, 1);
  // A forward breakpoint on the same line never stops in a backward trace: continue runs to the end
  EXPECT_EQ(tr.continue_to(0, {lines::attention::V_tilde}), tr.size() - 1);
  // find_matching keeps a backward cursor on the backward line
  const Event& e = tr.events[second];
  EXPECT_EQ(tr.find_matching(e, tr.caller_ref(second)), second);
}

TEST(BackpropEvents, MaskedScoresHaveExactlyZeroGradient) {
  for (const MaskKind mask : {MaskKind::Causal, MaskKind::Prefix}) {
    ModelConfig c = small_gpt();
    c.mask = mask;
    const Model m = spread_model(c, 9);
    const Tokens x = sample_x();  // "=" at position 3: prefix p = 3
    const Mask M = mask == MaskKind::Prefix ? prefix_mask(7, 3) : unidirectional_mask(7, 7);
    Trace trace;
    Tracer tracer(trace);
    traced_backward<double>(m, dtraining_batch(x, c), &tracer);
    int masked = 0, nonzero = 0;
    for (size_t k = 0; k < trace.size(); ++k) {
      const Event& e = trace.events[k];
      if (e.kind != EventKind::Line || e.pass != Pass::Backward || e.alg != 4 || (e.line != 5 && e.line != 6)) continue;
      const Value* dS = bound(trace, k, "∇S");
      ASSERT_NE(dS, nullptr);
      for (Eigen::Index tz = 0; tz < M.rows(); ++tz)
        for (Eigen::Index tx = 0; tx < M.cols(); ++tx)
          if (!M(tz, tx)) {
            EXPECT_EQ(dS->m(tz, tx), 0.0f) << "line " << e.line << " masked (" << tz + 1 << ", " << tx + 1 << ")";
            ++masked;
          } else {
            nonzero += dS->m(tz, tx) != 0.0f;
          }
    }
    EXPECT_GT(masked, 0);
    EXPECT_GT(nonzero, 0);  // the unmasked entries do carry gradient
  }
}

}  // namespace test_backprop_events
