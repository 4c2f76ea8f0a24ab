// Predict, then reveal (headless): from a trace and the event the cursor is about to reach, a
// question whose answer is in that event's values, its grading and the score. Questions are
// seeded by (seed, event): the same seed asks the same questions.
//   - MostAttention: the event binds softmax(S/√d_attn) (Algorithm 4 line 6) or α_t (Algorithm 3
//     line 4): for a chosen query t_x, which unmasked key t_z gets the largest weight;
//   - CellSign: any other matrix: a chosen finite cell is negative, about zero (|x| < 0.05·max|·|
//     over the value's finite cells) or positive;
//   - NextToken: Algorithm 14 line 5 / Algorithm 15 line 6 (the sampled y), or the forward pass's
//     P (the argmax of its last column): which token;
//   - BiggestUpdate: the update line of Algorithms 11–13: which parameter tensor changes most,
//     by ‖Δθ‖ = ‖θ_after − θ_before‖ (Frobenius);
// and about the traced backward (issue 24; Stepformer's backward listings, not in the paper):
//   - GradientSign: a gradient ∇N a backward line binds: is a chosen cell ∂loss/∂N[i, j] negative,
//     about zero or positive (as CellSign);
//   - BiggestEmbeddingGradient: the adjoint of the embedding line (X = [e_1, …, e_ℓ]) binds ∇e_t:
//     which token's embedding gets the largest gradient ‖∇e_t[:, t]‖;
//   - BiggestHeadUpdate: the update line, asked instead of BiggestUpdate half of the time: which
//     head's W_q the update changes most, by ‖ΔW_q^h‖ = ‖W_q^h after − W_q^h before‖.
#pragma once
#include <cstdint>
#include <functional>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

enum class QuestionKind {
  MostAttention, CellSign, NextToken, BiggestUpdate, GradientSign, BiggestEmbeddingGradient, BiggestHeadUpdate
};
// "attention", "sign", "next token", "update", "gradient sign", "embedding gradient", "head update"
const char* question_kind_name(QuestionKind k);

struct Question {
  QuestionKind kind = QuestionKind::CellSign;
  size_t event = 0;       // the event whose values answer it
  std::string value;      // the value asked about, as bound
  int row = -1, col = -1;  // the highlighted cell (0-based); MostAttention: col is t_x, row the answer's t_z
  std::string text;       // the question, in the paper's notation
  std::vector<std::string> choices;
  // per choice: t_z (0-based), the sign (−1, 0, 1), the token id, the tensor's row, the position t
  // (0-based), or the head's index among the W_q heads (in table order, heads 1 … H of each tensor)
  std::vector<int> ids;
  int answer = 0;         // index into choices
  std::string reveal;     // the true value, in words
};

struct GuessRecord {
  std::string question, guess, answer;
  QuestionKind kind;
  bool right = false, skipped = false;
};

struct QuizScore {
  int asked = 0, right = 0, skipped = 0;
  std::map<QuestionKind, std::pair<int, int>> by_kind;  // (asked, right)
};

class Quiz {
 public:
  // `label` names a token id for the choices ("<bos>", "h"); defaults to "#id".
  explicit Quiz(uint64_t seed = 1, std::function<std::string(int)> label = {});
  // The question event k of `trace` asks (nullopt: k binds no matrix, or only values already
  // bound by the sub-steps just before it).
  std::optional<Question> question_for(const Trace& trace, size_t k) const;
  // Grades choice (0-based) and scores it; true when right. A choice outside the list throws
  // nothing and counts as wrong.
  bool grade(const Question& q, int choice);
  void skip(const Question& q);
  const QuizScore& score() const { return score_; }
  const std::vector<GuessRecord>& history() const { return history_; }
  void reset();
  uint64_t seed() const { return seed_; }

 private:
  uint64_t seed_;
  std::function<std::string(int)> label_;
  QuizScore score_;
  std::vector<GuessRecord> history_;
};

}  // namespace sf
