// Predict, then reveal: the questions, read off the values of the event about to be shown.
#include "app/logic/quiz.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>
#include <optional>

#include "core/model/rng.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

namespace {

std::string num(double x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.4g", x);
  return b;
}
std::string I(int i0) { return std::to_string(i0 + 1); }

const Value* find(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

const Value* in_scope(const Trace& t, size_t k, const std::string& name) {
  for (const Value* v : t.scope(k))
    if (v->name == name) return v;
  return nullptr;
}

// Fisher–Yates with the question's generator; `answer` follows its choice.
void shuffle(Question& q, Rng& rng) {
  for (size_t i = q.choices.size(); i > 1; --i) {
    const size_t j = rng.below(i);
    std::swap(q.choices[i - 1], q.choices[j]);
    std::swap(q.ids[i - 1], q.ids[j]);
    if (q.answer == static_cast<int>(i - 1))
      q.answer = static_cast<int>(j);
    else if (q.answer == static_cast<int>(j))
      q.answer = static_cast<int>(i - 1);
  }
}

// `keep` of `pool` chosen by rng, `must` among them (pool order kept).
std::vector<int> pick(std::vector<int> pool, int must, size_t keep, Rng& rng) {
  std::vector<int> out{must};
  pool.erase(std::remove(pool.begin(), pool.end(), must), pool.end());
  while (out.size() < keep && !pool.empty()) {
    const size_t j = rng.below(pool.size());
    out.push_back(pool[j]);
    pool.erase(pool.begin() + static_cast<long>(j));
  }
  return out;
}

std::string where(const Event& e) {
  std::string s = "Algorithm " + std::to_string(e.alg) + (e.pass == Pass::Backward ? " adjoint of line " : " line ") +
                  std::to_string(e.line);
  if (e.idx.l) s += ", layer " + std::to_string(e.idx.l);
  if (e.idx.h) s += ", head " + std::to_string(e.idx.h);
  return s;
}

// The index of the largest of `x`.
int argmax(const std::vector<double>& x) {
  return static_cast<int>(std::max_element(x.begin(), x.end()) - x.begin());
}

// Each head's ‖ΔW_q^h‖ at an update line that binds "W (before)" and "W (after)" for each tensor:
// W_q tensors hold their H heads side by side, d_e columns each (d_e: W_e's rows).
struct HeadDelta {
  std::string label;  // "layer1.attn.W_q, h = 2"
  double norm = 0;
};
std::vector<HeadDelta> head_deltas(const Event& e) {
  std::vector<HeadDelta> out;
  const Value* W_e = find(e, update_value_name("W_e", UpdateValue::Before));
  if (!W_e || W_e->m.rows() == 0) return out;
  const Eigen::Index d_e = W_e->m.rows();
  for (const Value& after : e.values) {
    const std::optional<UpdateValueKey> u = parse_update_value(after.name);
    if (!u || u->which != UpdateValue::After || u->tensor.size() < 3 ||
        u->tensor.compare(u->tensor.size() - 3, 3, "W_q") != 0)
      continue;
    const Value* before = find(e, update_value_name(u->tensor, UpdateValue::Before));
    if (!before || after.m.cols() % d_e != 0) continue;
    const MatF delta = MatF(after.m) - MatF(before->m);
    for (Eigen::Index h = 0; h < after.m.cols() / d_e; ++h)
      out.push_back({u->tensor + ", h = " + std::to_string(h + 1), delta.middleCols(h * d_e, d_e).norm()});
  }
  return out;
}

// A multiple-choice question for the largest of `sizes` (labels as `labels`), up to `keep` choices.
void largest_of(Question& q, const std::vector<std::string>& labels, const std::vector<double>& sizes, size_t keep,
                Rng& rng) {
  const int best = argmax(sizes);
  std::vector<int> all(sizes.size());
  for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
  q.ids = pick(all, best, keep, rng);
  for (int i : q.ids) q.choices.push_back(labels[static_cast<size_t>(i)]);
  q.answer = 0;
  q.row = best;
  shuffle(q, rng);
}

}  // namespace

const char* question_kind_name(QuestionKind k) {
  switch (k) {
    case QuestionKind::MostAttention: return "attention";
    case QuestionKind::CellSign: return "sign";
    case QuestionKind::NextToken: return "next token";
    case QuestionKind::BiggestUpdate: return "update";
    case QuestionKind::GradientSign: return "gradient sign";
    case QuestionKind::BiggestEmbeddingGradient: return "embedding gradient";
    case QuestionKind::BiggestHeadUpdate: return "head update";
  }
  return "";
}

Quiz::Quiz(uint64_t seed, std::function<std::string(int)> label) : seed_(seed), label_(std::move(label)) {
  if (!label_) label_ = [](int id) { return "#" + std::to_string(id); };
}

void Quiz::reset() {
  score_ = {};
  history_.clear();
}

std::optional<Question> Quiz::question_for(const Trace& trace, size_t k) const {
  if (k >= trace.size()) return std::nullopt;
  const Event& e = trace.events[k];
  if (e.kind == EventKind::Enter) return std::nullopt;
  // The matrices this event binds first (not already shown by its line's sub-steps just before).
  std::vector<const Value*> fresh;
  for (const Value& v : e.values) {
    if (v.kind != ValueKind::Matrix || v.m.size() == 0) continue;
    bool shown = false;
    for (size_t j = k; j-- > 0 && trace.events[j].kind == EventKind::SubStep && trace.events[j].alg == e.alg &&
                       trace.events[j].line == e.line && e.kind == EventKind::Line;)
      shown = shown || find(trace.events[j], v.name);
    if (!shown) fresh.push_back(&v);
  }
  if (fresh.empty()) return std::nullopt;
  Rng rng(seed_ * 0x100000001B3ULL + k * 0x9E3779B97F4A7C15ULL + 1);
  Question q;
  q.event = k;
  const std::string at = where(e);
  auto token = [&](Axis a, int t) {
    const Tokens* ts = trace.axis_tokens(k, a);
    return ts && t < static_cast<int>(ts->size()) ? " '" + label_((*ts)[t]) + "'" : std::string();
  };

  // Which head's W_q will the update change most? (Half of the time, when the update binds θ.)
  if (e.alg >= 11 && e.alg <= 13 && find(e, keys::tensor_grad_norms.symbol) && rng.below(2) == 0) {
    const std::vector<HeadDelta> heads = head_deltas(e);
    if (heads.size() >= 2) {
      std::vector<std::string> labels;
      std::vector<double> sizes;
      for (const HeadDelta& h : heads) labels.push_back(h.label), sizes.push_back(h.norm);
      q.kind = QuestionKind::BiggestHeadUpdate;
      q.value = keys::tensor_grad_norms.symbol;
      largest_of(q, labels, sizes, 6, rng);
      q.text = "θ ← θ − η · ∇loss(θ) (" + at + "): which head's W_q does the update change most (the largest "
               "‖ΔW_q^h‖ = η ‖∇W_q^h‖)?";
      const HeadDelta& best = heads[static_cast<size_t>(q.row)];
      q.reveal = best.label + ": ‖ΔW_q^h‖ = " + num(best.norm) + ", the largest of " + std::to_string(heads.size()) +
                 " heads' W_q";
      return q;
    }
  }

  // Which parameters will the update change most?
  if (e.alg >= 11 && e.alg <= 13 && find(e, "‖∇loss(θ)‖ per tensor")) {
    std::vector<std::pair<std::string, double>> delta;  // (tensor, ‖after − before‖)
    for (const Value& v : e.values) {
      const auto n = v.name.size();
      if (n <= 8 || v.name.compare(n - 8, 8, " (after)") != 0) continue;
      const std::string W = v.name.substr(0, n - 8);
      if (const Value* before = find(e, W + " (before)"))
        delta.push_back({W, (MatF(v.m) - MatF(before->m)).norm()});
    }
    if (delta.size() >= 2) {
      q.kind = QuestionKind::BiggestUpdate;
      q.value = "‖∇loss(θ)‖ per tensor";
      int best = 0;
      for (int i = 1; i < static_cast<int>(delta.size()); ++i)
        if (delta[i].second > delta[best].second) best = i;
      std::vector<int> all(delta.size());
      for (size_t i = 0; i < all.size(); ++i) all[i] = static_cast<int>(i);
      q.ids = pick(all, best, 5, rng);
      for (int i : q.ids) q.choices.push_back(delta[i].first);
      q.answer = 0;
      q.row = best;
      q.text = "θ ← θ − η · ∇loss(θ) (" + at + "): which parameter tensor changes most (the largest ‖Δθ‖ = ‖θ_after − θ_before‖)?";
      q.reveal = "‖Δ" + delta[best].first + "‖ = " + num(delta[best].second) + ", the largest of " +
                 std::to_string(delta.size()) + " tensors";
      shuffle(q, rng);
      return q;
    }
  }

  // Which token comes next?
  const bool sample_line = e.ref() == lines::d_inference::sample || e.ref() == lines::ed_inference::sample;
  const Value* P = (e.alg == 8 || e.alg == 10) && e.kind == EventKind::Line ? find(e, "P") : nullptr;
  if (sample_line || P) {
    VecF p;
    int y = 0;
    if (sample_line) {
      const Value* pv = in_scope(trace, k, "p");
      const Value* yv = find(e, "y");
      if (pv && yv) p = pv->m.col(0), y = static_cast<int>(yv->m(0, 0));
    } else {
      p = P->m.col(P->m.cols() - 1);
      p.maxCoeff(&y);
      ++y;  // 1-based id
    }
    if (y >= 1 && y <= p.size() && p.size() >= 2) {
      q.kind = QuestionKind::NextToken;
      q.value = sample_line ? "y" : "P";
      q.col = sample_line ? -1 : static_cast<int>(P->m.cols()) - 1;
      q.row = y - 1;
      std::vector<int> order(p.size());
      for (int i = 0; i < p.size(); ++i) order[i] = i + 1;
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return p(a - 1) > p(b - 1); });
      std::vector<int> top(order.begin(), order.begin() + std::min<size_t>(3, order.size()));
      std::vector<int> rest(order.begin() + static_cast<long>(top.size()), order.end());
      q.ids = pick(top, y, 4, rng);  // the answer and the top tokens
      for (int id : pick(rest, rest.empty() ? 0 : rest[0], 2, rng))
        if (id && std::find(q.ids.begin(), q.ids.end(), id) == q.ids.end() && q.ids.size() < 6) q.ids.push_back(id);
      for (int id : q.ids) q.choices.push_back("'" + label_(id) + "'");
      q.answer = 0;
      q.text = sample_line ? "Which token y will line " + std::to_string(e.line) + " draw from q ∝ p^{1/τ}? (" + at + ")"
                           : "Which token does P[:, " + I(q.col) + "] rank first, the most likely after x[" + I(q.col) +
                                 "]" + token(Axis::TokenX, q.col) + "? (" + at + ")";
      q.reveal = (sample_line ? "y = '" : "argmax P[:, " + I(q.col) + "] = '") + label_(y) + "' (p = " + num(p(y - 1)) + ")";
      shuffle(q, rng);
      return q;
    }
  }

  // Which token's embedding gets the largest gradient? (the adjoint of X = [e_1, …, e_ℓ])
  if (const Value* de = e.pass == Pass::Backward ? find(e, "∇e_t") : nullptr; de && de->m.cols() >= 2) {
    std::vector<std::string> labels;
    std::vector<double> sizes;
    for (int t = 0; t < de->m.cols(); ++t) {
      labels.push_back("t = " + I(t) + token(de->cols, t));
      sizes.push_back(de->m.col(t).cast<double>().norm());
    }
    q.kind = QuestionKind::BiggestEmbeddingGradient;
    q.value = de->name;
    largest_of(q, labels, sizes, 6, rng);
    q.col = q.row;
    q.row = -1;
    q.text = "Which token's embedding e_t gets the largest gradient ‖∇e_t‖ = ‖∂loss/∂e_t‖? (" + at + ")";
    q.reveal = "‖∇e_t[:, " + I(q.col) + "]‖ = " + num(sizes[static_cast<size_t>(q.col)]) + ", the largest of " +
               std::to_string(sizes.size()) + " tokens";
    return q;
  }

  // Which key gets the most attention?
  for (const Value* v : fresh) {
    if (!keys::attention_weights.names(*v) && v->name != "α_t") continue;
    const Value* mask = v->name == "α_t" ? nullptr : in_scope(trace, k, "Mask");
    auto keys_of = [&](int t_x) {
      std::vector<int> keys;
      for (int t_z = 0; t_z < v->m.rows(); ++t_z)
        if (!mask || mask->m(t_z, t_x) != 0.0f) keys.push_back(t_z);
      return keys;
    };
    std::vector<int> queries;
    for (int t_x = 0; t_x < v->m.cols(); ++t_x)
      if (keys_of(t_x).size() >= 2) queries.push_back(t_x);
    if (queries.empty()) break;
    const int t_x = queries[rng.below(queries.size())];
    const std::vector<int> keys = keys_of(t_x);
    int best = keys[0];
    for (int t_z : keys)
      if (v->m(t_z, t_x) > v->m(best, t_x)) best = t_z;
    q.kind = QuestionKind::MostAttention;
    q.value = v->name;
    q.col = t_x;
    q.row = best;
    q.ids = pick(keys, best, 6, rng);
    std::sort(q.ids.begin(), q.ids.end());
    q.answer = static_cast<int>(std::find(q.ids.begin(), q.ids.end(), best) - q.ids.begin());
    for (int t_z : q.ids) q.choices.push_back("t_z = " + I(t_z) + token(Axis::TokenZ, t_z));
    q.text = "Which key t_z gets the most attention from the query t_x = " + I(t_x) + token(Axis::TokenX, t_x) + " in " +
             v->name + "? (" + at + ")";
    q.reveal = v->name + "[" + I(best) + ", " + I(t_x) + "] = " + num(v->m(best, t_x)) + ", the largest of column " + I(t_x);
    return q;
  }

  // The sign or rough size of a highlighted cell (at a backward line: of a gradient, if it binds one).
  std::vector<const Value*> grads;
  if (e.pass == Pass::Backward)
    for (const Value* v : fresh)
      if (v->name.rfind("∇", 0) == 0) grads.push_back(v);
  const std::vector<const Value*>& pool = grads.empty() ? fresh : grads;
  const Value* v = pool[rng.below(pool.size())];
  std::vector<Eigen::Index> finite;
  float top = 0;
  for (Eigen::Index j = 0; j < v->m.cols(); ++j)
    for (Eigen::Index i = 0; i < v->m.rows(); ++i)
      if (std::isfinite(v->m(i, j))) {
        finite.push_back(j * v->m.rows() + i);
        top = std::max(top, std::abs(v->m(i, j)));
      }
  if (finite.empty()) return std::nullopt;  // −∞ cells are never asked
  const Eigen::Index cell = finite[rng.below(finite.size())];
  q.kind = grads.empty() ? QuestionKind::CellSign : QuestionKind::GradientSign;
  q.value = v->name;
  q.row = static_cast<int>(cell % v->m.rows());
  q.col = static_cast<int>(cell / v->m.rows());
  const float x = v->m(q.row, q.col), small = 0.05f * top;
  const std::string name = v->name + "[" + I(q.row) + (v->m.cols() > 1 ? ", " + I(q.col) : "") + "]";
  q.choices = {"negative (below −" + num(small) + ")", "about zero (|x| < 0.05·max|·| = " + num(small) + ")",
               "positive (above " + num(small) + ")"};
  q.ids = {-1, 0, 1};
  q.answer = std::abs(x) < small ? 1 : x < 0 ? 0 : 2;
  q.text = "After " + at + ", is " + name + " negative, about zero or positive? (max |" + v->name + "| = " + num(top) + ")";
  if (q.kind == QuestionKind::GradientSign)
    q.text += " It is ∂loss/∂" + v->name.substr(std::string("∇").size()) + ": positive means a small increase of that "
              "entry raises the loss.";
  q.reveal = name + " = " + num(x);
  return q;
}

bool Quiz::grade(const Question& q, int choice) {
  const bool right = choice == q.answer;
  ++score_.asked;
  score_.right += right;
  auto& [asked, r] = score_.by_kind[q.kind];
  ++asked;
  r += right;
  const bool valid = choice >= 0 && choice < static_cast<int>(q.choices.size());
  history_.push_back({q.text, valid ? q.choices[choice] : "(none)", q.choices.at(q.answer), q.kind, right, false});
  return right;
}

void Quiz::skip(const Question& q) {
  ++score_.skipped;
  history_.push_back({q.text, "(skipped)", q.choices.at(q.answer), q.kind, false, true});
}

}  // namespace sf
