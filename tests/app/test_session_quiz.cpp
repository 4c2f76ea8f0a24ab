// Predict, then reveal (app/logic/quiz.hpp), headless: every question is about the event it is
// asked for; its answer equals the argmax / sign / token / largest update computed here from the
// values that event reveals; grading keeps the score; the same seed asks the same questions;
// lines that bind no matrix ask nothing.
#include <gtest/gtest.h>

#include <cmath>

#include "app/logic/quiz.hpp"
#include "app/session.hpp"
#include "core/arch/architecture.hpp"
#include "core/training/training.hpp"

namespace test_session_quiz {

using namespace sf;

namespace {

const Value* bound(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

std::map<QuestionKind, int> kinds_in(const Trace& t, const Quiz& quiz) {
  std::map<QuestionKind, int> n;
  for (size_t k = 0; k < t.size(); ++k)
    if (auto q = quiz.question_for(t, k)) ++n[q->kind];
  return n;
}

}  // namespace

TEST(SessionQuiz, AttentionAndSignAnswersComeFromTheRevealedValues) {
  Session s;
  const Trace& t = s.trace();
  const Quiz quiz(3);
  int attention = 0, sign = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const auto q = quiz.question_for(t, k);
    if (!q) continue;
    ASSERT_EQ(q->event, k);
    ASSERT_EQ(q->choices.size(), q->ids.size());
    ASSERT_GE(q->answer, 0);
    ASSERT_LT(q->answer, static_cast<int>(q->choices.size()));
    const Value* v = bound(t.events[k], q->value);
    ASSERT_NE(v, nullptr) << q->text;  // the question is about a value this very event binds
    if (q->kind == QuestionKind::MostAttention) {
      // The largest weight of column t_x (masked keys weigh exactly 0, so no mask is needed here).
      Eigen::Index best = 0;
      v->m.col(q->col).maxCoeff(&best);
      EXPECT_EQ(q->ids[q->answer], best) << q->text;
      for (int t_z : q->ids) EXPECT_GT(v->m(t_z, q->col), 0.0f) << "a masked key offered: " << q->text;
      ++attention;
    } else if (q->kind == QuestionKind::CellSign) {
      const float x = v->m(q->row, q->col);
      ASSERT_TRUE(std::isfinite(x)) << "a −∞ cell asked: " << q->text;
      float top = 0;
      for (Eigen::Index i = 0; i < v->m.size(); ++i)
        if (std::isfinite(v->m(i % v->m.rows(), i / v->m.rows())))
          top = std::max(top, std::abs(v->m(i % v->m.rows(), i / v->m.rows())));
      const int expected = std::abs(x) <= 0.05f * top ? 0 : (x > 0 ? 1 : -1);
      EXPECT_EQ(q->ids[q->answer], expected) << q->text << " x = " << x;
      ++sign;
    }
  }
  EXPECT_GT(attention, 0);
  EXPECT_GT(sign, 10);
}

TEST(SessionQuiz, NextTokenIsTheSampledOrArgmaxToken) {
  Session s;
  s.generation().settings.tau = 0;  // argmax
  s.trace_generate(3, false);
  const Trace& t = s.trace();
  const Quiz quiz(5, [&](int id) { return s.tokenizer().label(id); });
  int asked = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.alg != 14 || e.line != 5) continue;
    const auto q = quiz.question_for(t, k);
    ASSERT_TRUE(q);
    ASSERT_EQ(q->kind, QuestionKind::NextToken);
    const int y = static_cast<int>(bound(e, "y")->m(0, 0));
    EXPECT_EQ(q->ids[q->answer], y);
    EXPECT_EQ(q->choices[q->answer], "'" + s.tokenizer().label(y) + "'");
    // τ = 0: y is the argmax of p (line 4's), so the answer is too.
    Eigen::Index best = 0;
    bound(t.events[k - 1], "p")->m.col(0).maxCoeff(&best);
    EXPECT_EQ(q->ids[q->answer], best + 1);
    ++asked;
  }
  EXPECT_EQ(asked, 3);
  // The Forward run's P: the argmax of its last column.
  s.trace_forward();
  const size_t last = s.trace().size() - 1;
  const auto q = quiz.question_for(s.trace(), last);
  ASSERT_TRUE(q);
  EXPECT_EQ(q->kind, QuestionKind::NextToken);
  Eigen::Index best = 0;
  const Value* P = bound(s.trace().events[last], "P");
  P->m.col(P->m.cols() - 1).maxCoeff(&best);
  EXPECT_EQ(q->ids[q->answer], best + 1);
}

TEST(SessionQuiz, BiggestUpdateIsTheLargestChange) {
  Session s;
  Model model = s.model();
  const Tokens x = s.tokens();
  DTraining alg(1, 1);
  const auto g = architecture(model.config).gradient(model.table);
  Rng rng(1);
  Trace t;
  Tracer tr(t);
  alg.step({{{}, x}}, model, 0.5f, TrainOptions{}, *g, rng, &tr);
  const size_t update = t.size() - 1;
  ASSERT_EQ(t.events[update].line, 6);
  // Half of the seeds ask instead which head's W_q changes most (test_session_backprop.cpp).
  std::optional<Question> q;
  for (uint64_t seed = 1; seed <= 12 && !(q && q->kind == QuestionKind::BiggestUpdate); ++seed)
    q = Quiz(seed).question_for(t, update);
  ASSERT_TRUE(q);
  ASSERT_EQ(q->kind, QuestionKind::BiggestUpdate);
  std::string best;
  double most = -1;
  for (const Value& v : t.events[update].values)
    if (v.name.size() > 8 && v.name.ends_with(" (after)")) {
      const std::string W = v.name.substr(0, v.name.size() - 8);
      const double d = (MatF(v.m) - MatF(bound(t.events[update], W + " (before)")->m)).norm();
      if (d > most) most = d, best = W;
    }
  EXPECT_EQ(q->choices[q->answer], best);
  EXPECT_GE(q->choices.size(), 2u);
}

TEST(SessionQuiz, ScoringKeepsAskedRightAndKinds) {
  Session s;
  Quiz quiz(1);
  std::vector<Question> qs;
  for (size_t k = 0; k < s.trace().size() && qs.size() < 4; ++k)
    if (auto q = quiz.question_for(s.trace(), k)) qs.push_back(*q);
  ASSERT_EQ(qs.size(), 4u);
  EXPECT_TRUE(quiz.grade(qs[0], qs[0].answer));
  EXPECT_FALSE(quiz.grade(qs[1], (qs[1].answer + 1) % static_cast<int>(qs[1].choices.size())));
  EXPECT_TRUE(quiz.grade(qs[2], qs[2].answer));
  quiz.skip(qs[3]);
  EXPECT_EQ(quiz.score().asked, 3);
  EXPECT_EQ(quiz.score().right, 2);
  EXPECT_EQ(quiz.score().skipped, 1);
  int by_kind = 0;
  for (const auto& [kind, ar] : quiz.score().by_kind) by_kind += ar.first;
  EXPECT_EQ(by_kind, 3);
  ASSERT_EQ(quiz.history().size(), 4u);
  EXPECT_TRUE(quiz.history()[0].right);
  EXPECT_FALSE(quiz.history()[1].right);
  EXPECT_TRUE(quiz.history()[3].skipped);
  EXPECT_FALSE(quiz.grade(qs[0], 99));  // a choice outside the list is wrong, not a crash
  quiz.reset();
  EXPECT_EQ(quiz.score().asked, 0);
}

TEST(SessionQuiz, SeededQuestionsRepeat) {
  Session s;
  const Trace& t = s.trace();
  const Quiz a(7), b(7), c(8);
  int differ = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const auto qa = a.question_for(t, k), qb = b.question_for(t, k), qc = c.question_for(t, k);
    ASSERT_EQ(qa.has_value(), qb.has_value());
    if (!qa) continue;
    EXPECT_EQ(qa->text, qb->text);
    EXPECT_EQ(qa->choices, qb->choices);
    EXPECT_EQ(qa->answer, qb->answer);
    differ += qa->text != qc->text || qa->choices != qc->choices;
  }
  EXPECT_GT(differ, 0);  // another seed asks other cells and orders
  EXPECT_EQ(kinds_in(t, a), kinds_in(t, b));
}

TEST(SessionQuiz, NoQuestionWithoutAMatrix) {
  Session s;
  const Trace& t = s.trace();
  const Quiz quiz(1);
  int none = 0;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    const bool matrix = std::any_of(e.values.begin(), e.values.end(),
                                    [](const Value& v) { return v.kind == ValueKind::Matrix; });
    if (e.kind == EventKind::Enter || !matrix) {
      EXPECT_FALSE(quiz.question_for(t, k)) << "Algorithm " << e.alg << " line " << e.line;
      ++none;
    }
  }
  EXPECT_GT(none, 5);  // Enter events, ℓ ← length(x), for l, for h …
  // Line 6 of Algorithm 4 rebinds what its sub-steps showed just before: asked once, at the sub-step.
  ASSERT_TRUE(s.jump_to(4, 6, 1, 1));
  EXPECT_FALSE(quiz.question_for(t, s.cursor()));
}

}  // namespace test_session_quiz
