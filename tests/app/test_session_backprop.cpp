// The app's side of the traced backward (issue 24; Stepformer's backward listings, not in the
// paper), headless, on one traced update of Algorithm 13 with the default model:
//   - the Variables view's pairs: each gradient ∇N beside the forward value N of the matching frame
//     (same algorithm, l, h, t and calling line), and the Tensor view's N ⊙ ∇N;
//   - the Attention tab's ∇S and ∇A per head, masked ∇S cells exactly 0, and ∇S = the softmax's
//     adjoint of ∇A computed here from A;
//   - dependencies on hover for gradient cells ("∇S[3, 5] ← ∇A[:, 5] and A[:, 5]");
//   - predict-then-reveal's gradient questions, their answers computed here from the trace;
//   - stepping: adjoint lines as jump targets and breakpoints; the traced step on a worker thread.
#include <gtest/gtest.h>

#include <chrono>
#include <cmath>
#include <limits>
#include <string>
#include <thread>

#include "app/attention_calls.hpp"
#include "app/logic/gradient_pairs.hpp"
#include "app/logic/quiz.hpp"
#include "app/session.hpp"
#include "core/arch/architecture.hpp"
#include "core/trace/dependencies.hpp"
#include "core/trace/value_keys.hpp"
#include "core/training/training.hpp"

namespace test_session_backprop {

using namespace sf;

namespace {

// One traced update of Algorithm 13 on the session's prompt ("hello=") with the default model
// (L = 2, H = 4): the forward pass nested in line 4, the backward pass nested in line 6.
struct Traced {
  Session s;
  Model model;
  Trace t;
  Traced() : model(s.model()) {
    DTraining alg(1, 1);
    const auto g = architecture(model.config).gradient(model.table);
    Rng rng(1);
    Tracer tr(t);
    alg.step({{{}, s.tokens()}}, model, 0.5f, TrainOptions{}, *g, rng, &tr);
  }
};

const Traced& traced() {
  static const Traced x;
  return x;
}

// The first backward Line event of `line` (an adjoint line) with the given l and h (0: any).
size_t adjoint_line(const Trace& t, LineRef line, int l = 0, int h = 0) {
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind == EventKind::Line && e.ref() == line.adjoint() && (!l || e.idx.l == l) && (!h || e.idx.h == h))
      return k;
  }
  return SIZE_MAX;
}

const GradientPair* pair_named(const std::vector<GradientPair>& pairs, const std::string& grad) {
  for (const GradientPair& p : pairs)
    if (p.grad->name == grad) return &p;
  return nullptr;
}

// ∇S of one column from ∇A and A, the softmax's adjoint (Stepformer's listing, adjoint of line 6):
// ∇S = A ⊙ (∇A − Σ_u A[u] ∇A[u]) / √d_attn, in double.
Eigen::VectorXd softmax_adjoint(const Eigen::VectorXd& A, const Eigen::VectorXd& dA, int d_attn) {
  return A.cwiseProduct(dA.array().matrix() - Eigen::VectorXd::Constant(A.size(), A.dot(dA))) /
         std::sqrt(static_cast<double>(d_attn));
}

}  // namespace

TEST(SessionBackprop, EachGradientIsPairedWithItsForwardValue) {
  const Trace& t = traced().t;
  const size_t k = adjoint_line(t, lines::attention::V_tilde, 2, 4);
  ASSERT_NE(k, SIZE_MAX) << "no traced Attention adjoint (layer 2, head 4)";
  const std::vector<GradientPair> pairs = gradient_pairs(t, k, t.scope(k));
  // The forward call of the same head: its line events bind S (lines 4, 5), V (3) and A (6).
  const std::vector<HeadCall> calls = head_calls(t);
  const HeadCall* call = find_head_call(calls, 10, 6, 2, 4, 1);  // i: Algorithm 13's epoch
  ASSERT_NE(call, nullptr);
  const GradientPair* dA = pair_named(pairs, "∇A");
  ASSERT_NE(dA, nullptr);
  EXPECT_EQ(dA->value, call->A) << "∇A pairs with line 6's softmax(S/√d_attn) of the same head";
  const GradientPair* dS = pair_named(pairs, "∇S");
  ASSERT_NE(dS, nullptr);
  EXPECT_EQ(dS->value, call->S_masked) << "∇S at the adjoint of line 6 is of line 6's input: line 5's S";
  const GradientPair* dVt = pair_named(pairs, "∇Ṽ");
  ASSERT_NE(dVt, nullptr);
  EXPECT_EQ(t.events[dVt->value_event].ref(), lines::attention::V_tilde) << "∇Ṽ pairs with what line 6 returned";
  for (const GradientPair& p : pairs) {
    SCOPED_TRACE(p.grad->name);
    const Event& f = t.events[p.value_event];
    EXPECT_EQ(f.pass, Pass::Forward);
    EXPECT_EQ(f.idx.l, 2);
    EXPECT_EQ(f.idx.h, 4);
    EXPECT_EQ(p.value->m.rows(), p.grad->m.rows());
    EXPECT_EQ(p.value->m.cols(), p.grad->m.cols());
  }
  // At a forward event nothing is paired.
  EXPECT_TRUE(gradient_pairs(t, call->line6, t.scope(call->line6)).empty());
}

TEST(SessionBackprop, ValueTimesGradientIsZeroAtMaskedScores) {
  const Trace& t = traced().t;
  const size_t k = adjoint_line(t, lines::attention::V_tilde, 1, 1);
  ASSERT_NE(k, SIZE_MAX);
  const std::vector<GradientPair> pairs = gradient_pairs(t, k, t.scope(k));
  const GradientPair* dS = pair_named(pairs, "∇S");
  ASSERT_NE(dS, nullptr);
  const Value prod = pair_view(*dS, PairView::Product);
  EXPECT_EQ(prod.name, "S ⊙ ∇S");
  int masked = 0;
  for (Eigen::Index j = 0; j < prod.m.cols(); ++j)
    for (Eigen::Index i = 0; i < prod.m.rows(); ++i) {
      const float x = dS->value->m(i, j), g = dS->grad->m(i, j);
      if (std::isinf(x)) {
        ++masked;
        EXPECT_EQ(g, 0.0f) << "a masked score's gradient is exactly 0";
        EXPECT_EQ(prod.m(i, j), 0.0f);
      } else {
        EXPECT_EQ(prod.m(i, j), x * g);
      }
    }
  EXPECT_GT(masked, 0) << "the causal mask hides the keys after each query";
  EXPECT_EQ(pair_view(*dS, PairView::Value).name, "S");
  EXPECT_EQ(pair_view(*dS, PairView::Gradient).name, "∇S");
}

TEST(SessionBackprop, AttentionTabGradientsAreTheSoftmaxAdjointOfEachHead) {
  const Trace& t = traced().t;
  const std::vector<HeadCall> calls = head_calls(t);
  ASSERT_EQ(calls.size(), 8u);  // L = 2 layers × H = 4 heads, the forward pass's only
  const int d_attn = traced().model.config.d_attn;
  for (const HeadCall& c : calls) {
    SCOPED_TRACE("l = " + std::to_string(c.idx.l) + ", h = " + std::to_string(c.idx.h));
    ASSERT_NE(c.dS, nullptr);
    ASSERT_NE(c.dA, nullptr);
    EXPECT_EQ(t.events[c.back_enter].pass, Pass::Backward);
    EXPECT_EQ(t.events[c.dS_event].ref(), lines::attention::mask.adjoint()) << "the last ∇S: masked cells zeroed";
    for (Eigen::Index j = 0; j < c.dS->m.cols(); ++j) {
      const Eigen::VectorXd want =
          softmax_adjoint(c.A->m.col(j).cast<double>(), c.dA->m.col(j).cast<double>(), d_attn);
      // Float: each entry is a few products and one sum over ℓ ≤ 8 keys of terms no larger than
      // max|A·∇A|, so it is within about 16 float roundings of that size.
      const double tol = 16 * std::numeric_limits<float>::epsilon() *
                         std::max(1e-30, static_cast<double>((c.A->m.col(j).cwiseProduct(c.dA->m.col(j))).cwiseAbs().maxCoeff()));
      for (Eigen::Index i = 0; i < c.dS->m.rows(); ++i) {
        if (c.mask->m(i, j) == 0.0f) EXPECT_EQ(c.dS->m(i, j), 0.0f) << "masked ∇S[" << i + 1 << ", " << j + 1 << "]";
        EXPECT_NEAR(c.dS->m(i, j), want(i), tol) << "∇S[" << i + 1 << ", " << j + 1 << "]";
      }
    }
  }
}

TEST(SessionBackprop, DependenciesOfGradientCells) {
  const Trace& t = traced().t;
  const size_t k6 = adjoint_line(t, lines::attention::V_tilde, 2, 4);
  ASSERT_NE(k6, SIZE_MAX);
  // ∇S[3, 5] (0-based 2, 4): a causal mask lets query 5 see key 3.
  CellDependencies d = cell_dependencies(t, k6, "∇S", 2, 4);
  ASSERT_TRUE(d.rule) << d.reason;
  EXPECT_EQ(d.summary(), "← ∇A[:, 5] and A[:, 5]");
  ASSERT_EQ(d.sources.size(), 2u);
  EXPECT_EQ(t.events[d.sources[1].event].pass, Pass::Forward) << "A is the forward pass's";
  // A masked cell: key 5 after query 3.
  d = cell_dependencies(t, k6, "∇S", 4, 2);
  ASSERT_TRUE(d.rule);
  EXPECT_NE(d.reason.find("exactly 0"), std::string::npos) << d.reason;
  d = cell_dependencies(t, k6, "∇A", 1, 3);
  EXPECT_EQ(d.summary(), "← V[:, 2] and ∇Ṽ[:, 4]");
  const size_t k4 = adjoint_line(t, lines::attention::S, 2, 4);
  ASSERT_NE(k4, SIZE_MAX);
  EXPECT_EQ(cell_dependencies(t, k4, "∇Q", 0, 2).summary(), "← K[1, :] and ∇S[:, 3]");
  EXPECT_EQ(cell_dependencies(t, k4, "∇K", 0, 2).summary(), "← Q[1, :] and ∇S[3, :]");
  const size_t k1 = adjoint_line(t, lines::attention::Q, 2, 4);
  ASSERT_NE(k1, SIZE_MAX);
  EXPECT_EQ(cell_dependencies(t, k1, "∇W_q", 0, 1).summary(), "← ∇Q[1, :] and X[2, :]");
}

TEST(SessionBackprop, GradientSignQuestionsAskAboutGradients) {
  const Trace& t = traced().t;
  const Quiz quiz(7);
  int asked = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    if (t.events[k].pass != Pass::Backward) continue;
    const auto q = quiz.question_for(t, k);
    if (!q || q->kind != QuestionKind::GradientSign) continue;
    const Value* v = event_value(t.events[k], q->value);
    ASSERT_NE(v, nullptr) << q->text;
    ASSERT_EQ(v->name.rfind("∇", 0), 0u) << q->text;
    const float x = v->m(q->row, q->col);
    float top = 0;
    for (Eigen::Index i = 0; i < v->m.size(); ++i) top = std::max(top, std::abs(v->m(i % v->m.rows(), i / v->m.rows())));
    ASSERT_GT(top, 0.0f) << "an all-zero gradient asks nothing: " << q->text;
    EXPECT_EQ(q->ids[q->answer], std::abs(x) <= 0.05f * top ? 0 : (x > 0 ? 1 : -1)) << q->text;
    ++asked;
  }
  EXPECT_GT(asked, 20);
}

TEST(SessionBackprop, EmbeddingGradientQuestionIsTheLargestColumn) {
  const Trace& t = traced().t;
  const size_t k = adjoint_line(t, lines::d_transformer::X);
  ASSERT_NE(k, SIZE_MAX) << "no adjoint of Algorithm 10 line 3";
  const Value* de = event_value(t.events[k], "∇e_t");
  ASSERT_NE(de, nullptr);
  Eigen::Index best = 0;
  de->m.colwise().norm().maxCoeff(&best);
  for (uint64_t seed = 1; seed <= 5; ++seed) {
    const auto q = Quiz(seed).question_for(t, k);
    ASSERT_TRUE(q);
    ASSERT_EQ(q->kind, QuestionKind::BiggestEmbeddingGradient);
    EXPECT_EQ(q->ids[q->answer], best) << q->text;
    EXPECT_EQ(q->choices.size(), static_cast<size_t>(std::min<Eigen::Index>(6, de->m.cols())));
  }
}

TEST(SessionBackprop, HeadUpdateQuestionIsTheLargestWqChange) {
  const Trace& t = traced().t;
  const size_t update = t.size() - 1;
  ASSERT_EQ(t.events[update].ref(), lines::d_training::update);
  // ‖ΔW_q^h‖ = η‖∇W_q^h‖: from each head's Attention adjoint (its adjoint of line 1), independently
  // of the update line's before/after values the question reads.
  std::string best;
  double most = -1;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind != EventKind::Line || e.ref() != lines::attention::Q.adjoint()) continue;
    const double n = MatF(event_value(e, "∇W_q")->m).norm();
    if (n > most) most = n, best = "layer" + std::to_string(e.idx.l) + ".attn.W_q, h = " + std::to_string(e.idx.h);
  }
  int asked = 0;
  for (uint64_t seed = 1; seed <= 12; ++seed) {
    const auto q = Quiz(seed).question_for(t, update);
    ASSERT_TRUE(q);
    if (q->kind != QuestionKind::BiggestHeadUpdate) continue;
    EXPECT_EQ(q->choices[q->answer], best) << q->text;
    ++asked;
  }
  EXPECT_GT(asked, 0) << "asked half of the time";
}

TEST(SessionBackprop, AdjointLinesAreJumpTargetsAndBreakpoints) {
  Session s;
  Trace t = traced().t;
  const size_t want = adjoint_line(t, lines::attention::V_tilde);
  s.show_trace(std::move(t), "one update");
  EXPECT_TRUE(s.jump_to(lines::attention::V_tilde.adjoint(), 2, 4));
  EXPECT_EQ(s.current().pass, Pass::Backward);
  EXPECT_EQ(s.current().idx.h, 4);
  s.restart();
  s.toggle_breakpoint(lines::attention::V_tilde.adjoint());
  EXPECT_TRUE(s.has_breakpoint(lines::attention::V_tilde.adjoint()));
  EXPECT_FALSE(s.has_breakpoint(lines::attention::V_tilde));
  s.continue_run();
  EXPECT_EQ(s.cursor(), want);
}

TEST(SessionBackprop, TrainingStepTracesOnAWorkerThreadForABigModel) {
  Session s;
  s.async_min_params = 0;  // every model counts as big
  auto model = std::make_shared<Model>(s.model());
  const Tokens x = s.tokens();
  auto step = [model, x](Tracer& tr) {
    DTraining alg(1, 1);
    const auto g = architecture(model->config).gradient(model->table);
    Rng rng(1);
    alg.step({{{}, x}}, *model, 0.5f, TrainOptions{}, *g, rng, &tr);
  };
  bool shown = false;
  s.trace_training(step, "one update", model, [&] { shown = true; });
  EXPECT_TRUE(s.tracing());
  EXPECT_EQ(s.trace_progress().what, "one update");
  for (int i = 0; i < 6000 && !s.poll(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(5));
  ASSERT_TRUE(shown);
  EXPECT_EQ(s.run_kind(), RunKind::Training);
  EXPECT_EQ(s.trace_label(), "one update");
  EXPECT_EQ(s.trace().size(), traced().t.size()) << "the same step as traced at once";
}

// What lesson 11's notes say about the Attention adjoint holds in every head: each column of ∇S
// sums to 0, so ∇b_k = ∇K 1 = Q ∇Sᵀ 1 is 0 up to rounding; ∇Z at the adjoint of line 2 is
// W_kᵀ ∇K + W_vᵀ ∇V.
TEST(SessionBackprop, LessonElevenClaimsHoldInEveryHead) {
  const Trace& t = traced().t;
  int heads = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind != EventKind::Line || e.ref() != lines::attention::K.adjoint()) continue;
    SCOPED_TRACE("l = " + std::to_string(e.idx.l) + ", h = " + std::to_string(e.idx.h));
    ++heads;
    const std::vector<const Value*> scope = t.scope(k);
    auto get = [&](const std::string& n) -> MatF {
      for (const Value* v : scope)
        if (v->name == n) return MatF(v->m);
      ADD_FAILURE() << n << " not in scope";
      return MatF();
    };
    const MatF dS = get("∇S"), dA = get("∇A"), Q = get("Q"), dK = get("∇K"), dV = get("∇V"), W_k = get("W_k"),
               W_v = get("W_v");
    const float eps = std::numeric_limits<float>::epsilon();
    const auto l = static_cast<float>(dS.rows());
    // ∇S[:, t] = A ⊙ (∇A − Σ_u A[u] ∇A[u]) / √d_attn: each entry is within a few roundings of
    // max|∇A| (A ≤ 1; the subtraction cancels), so a column's sum of ℓ entries is within 4ℓ of them.
    const float entry_err = 4.0f * eps * dA.cwiseAbs().maxCoeff();
    EXPECT_LE(dS.colwise().sum().cwiseAbs().maxCoeff(), l * entry_err);
    // ∇b_k = Σ_{t_x} Q[:, t_x] (Σ_{t_z} ∇S[t_z, t_x]) up to the order of the sums: ℓ column sums,
    // each within ℓ · entry_err, times |Q|.
    const MatF db_k = get("∇b_k");
    EXPECT_LE(db_k.cwiseAbs().maxCoeff(), 2.0f * l * l * entry_err * Q.cwiseAbs().maxCoeff());
    EXPECT_GT(get("∇b_v").cwiseAbs().maxCoeff(), 1e3f * db_k.cwiseAbs().maxCoeff()) << "∇b_v has no such cancellation";
    // ∇Z, complete for this head: both paths, in float (d_attn + d_mid terms a row).
    const MatF dZ = get("∇Z"), want = W_k.transpose() * dK + W_v.transpose() * dV;
    EXPECT_LE((dZ - want).cwiseAbs().maxCoeff(), 1e-5f * std::max(1e-30f, want.cwiseAbs().maxCoeff()));
  }
  EXPECT_EQ(heads, 8);
}

}  // namespace test_session_backprop
