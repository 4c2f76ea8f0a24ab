// BERT against PyTorch (tests/data/bert_reference.json, written by
// tests/reference/gen_bert_reference.py in float64): Algorithm 9's P and every intermediate the
// file holds (float through the trace, double through the untraced and the batched forward), and
// the masked-LM loss of Algorithm 12 with its gradient for every tensor, one sequence with the
// summed loss and three sequences of different lengths (a padded batch with key padding) with
// the mean loss.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/bert.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"
#include "test_bert_support.hpp"

namespace test_bert_reference {

using namespace sf;
using namespace sf::test;

namespace {

struct Reference {
  json doc;
  ModelConfig c;
  ParamTable table;
  std::vector<double> theta;  // the parameters, float32 values, in the table's layout
  std::vector<float> theta_f;
};

ModelConfig config_of(const json& j) {
  ModelConfig c;
  c.arch = j.at("arch").get<std::string>();
  for (const char* k : {"L", "H", "d_e", "d_attn", "d_mid", "d_mlp", "d_f", "l_max"}) *config_int(c, k) = j.at(k).get<int>();
  c.eps = j.at("eps").get<float>();
  c.vocab = j.at("vocab").get<std::vector<std::string>>();
  return c;
}

const Reference& reference() {
  static const Reference r = [] {
    json doc = load_test_json("bert_reference.json");
    const ModelConfig c = config_of(doc.at("config"));
    ParamTable table(c);
    std::vector<double> theta = json_tensors(doc.at("params"), table);
    std::vector<float> theta_f = exact_floats(theta);
    return Reference{std::move(doc), c, std::move(table), std::move(theta), std::move(theta_f)};
  }();
  return r;
}

Tokens tokens_of(const json& j) { return j.get<Tokens>(); }

// max |a − b| / max(1, |b|) over the entries.
double gap(const MatD& a, const MatD& b) {
  if (a.rows() != b.rows() || a.cols() != b.cols()) return INFINITY;
  return ((a - b).array().abs() / b.array().abs().max(1.0)).maxCoeff();
}

// The value `name` of the first event (kind, alg, line) with layer l and head h (0: not in force).
MatD traced(const Trace& tr, EventKind kind, int alg, int line, int l, int h, const std::string& name,
            int nth = 0) {
  for (const Event& e : tr.events)
    if (e.kind == kind && e.alg == alg && e.line == line && e.idx.l == l && e.idx.h == h)
      if (const Value* v = find_value(e, name))
        if (nth-- == 0) return v->m.cast<double>();
  throw std::runtime_error("no traced " + name);
}

}  // namespace

TEST(BertReference, TheFileMatchesTheTable) {
  const Reference& r = reference();
  EXPECT_EQ(r.c.N_V(), 13);
  EXPECT_EQ(r.table.at("W_u").shape(), (std::vector<int64_t>{13, 6}));
  EXPECT_EQ(r.doc.at("forward").at("tokens").get<Tokens>(), (Tokens{12, 1, 11, 3, 10, 2, 13}));
}

TEST(BertReference, ForwardInFloatMatchesEveryTracedIntermediate) {
  const Reference& r = reference();
  const json& f = r.doc.at("forward");
  const Tokens x = tokens_of(f.at("tokens"));
  Trace trace;
  Tracer tr(trace);
  const MatF P = etransformer<float>(x, r.c, bind_bert<const float>(r.table, r.theta_f.data()), &tr);
  const double tol = kRefFloat;
  EXPECT_LT(gap(P.cast<double>(), json_matrix(f.at("P"))), tol) << "P";
  const EventKind L = EventKind::Line, S = EventKind::SubStep;
  EXPECT_LT(gap(traced(trace, L, 9, 3, 0, 0, "X"), json_matrix(f.at("X0"))), tol) << "X0";
  for (int l = 1; l <= r.c.L; ++l) {
    const json& layer = f.at("layers").at(l - 1);
    const std::string at = " of layer " + std::to_string(l);
    for (int h = 1; h <= r.c.H; ++h) {
      const json& head = layer.at("heads").at(h - 1);
      const std::string ah = at + ", head " + std::to_string(h);
      EXPECT_LT(gap(traced(trace, L, 4, 1, l, h, "Q"), json_matrix(head.at("Q"))), tol) << "Q" << ah;
      EXPECT_LT(gap(traced(trace, L, 4, 2, l, h, "K"), json_matrix(head.at("K"))), tol) << "K" << ah;
      EXPECT_LT(gap(traced(trace, L, 4, 3, l, h, "V"), json_matrix(head.at("V"))), tol) << "V" << ah;
      EXPECT_LT(gap(traced(trace, L, 4, 4, l, h, "S"), json_matrix(head.at("S"))), tol) << "S" << ah;
      EXPECT_LT(gap(traced(trace, L, 4, 6, l, h, "softmax(S/√d_attn)"), json_matrix(head.at("A"))), tol) << "A" << ah;
      EXPECT_LT(gap(traced(trace, L, 4, 6, l, h, "Ṽ"), json_matrix(head.at("Y"))), tol) << "Y^h" << ah;
    }
    EXPECT_LT(gap(traced(trace, L, 5, 3, l, 0, "Y"), json_matrix(layer.at("Y"))), tol) << "Y" << at;
    EXPECT_LT(gap(traced(trace, L, 5, 4, l, 0, "Ṽ"), json_matrix(layer.at("mha"))), tol) << "mha" << at;
    EXPECT_LT(gap(traced(trace, L, 9, 5, l, 0, "X"), json_matrix(layer.at("X_after_attn"))), tol) << "line 5" << at;
    EXPECT_LT(gap(traced(trace, L, 9, 6, l, 0, "X"), json_matrix(layer.at("X_ln1"))), tol) << "line 6" << at;
    EXPECT_LT(gap(traced(trace, S, 9, 7, l, 0, "W_mlp1 X + b_mlp1 1ᵀ"), json_matrix(layer.at("mlp_pre"))), tol)
        << "mlp_pre" << at;
    EXPECT_LT(gap(traced(trace, S, 9, 7, l, 0, "GELU(…)"), json_matrix(layer.at("mlp_gelu"))), tol) << "GELU" << at;
    EXPECT_LT(gap(traced(trace, L, 9, 7, l, 0, "X"), json_matrix(layer.at("X_after_mlp"))), tol) << "line 7" << at;
    EXPECT_LT(gap(traced(trace, L, 9, 8, l, 0, "X"), json_matrix(layer.at("X_ln2"))), tol) << "line 8" << at;
  }
  EXPECT_LT(gap(traced(trace, S, 9, 10, 0, 0, "W_f X + b_f 1ᵀ"), json_matrix(f.at("head_pre"))), tol) << "head_pre";
  EXPECT_LT(gap(traced(trace, L, 9, 10, 0, 0, "X"), json_matrix(f.at("head_gelu"))), tol) << "line 10";
  EXPECT_LT(gap(traced(trace, L, 9, 11, 0, 0, "X"), json_matrix(f.at("X_final"))), tol) << "line 11";
  EXPECT_LT(gap(traced(trace, S, 9, 12, 0, 0, "W_u X"), json_matrix(f.at("logits"))), tol) << "logits";
}

TEST(BertReference, ForwardInDoubleMatchesPAndTheBatchedIntermediates) {
  const Reference& r = reference();
  const json& f = r.doc.at("forward");
  const Tokens x = tokens_of(f.at("tokens"));
  const BertW<const double> W = bind_bert<const double>(r.table, r.theta.data());
  const double tol = kRefDouble;
  EXPECT_LT(gap(etransformer<double>(x, r.c, W), json_matrix(f.at("P"))), tol) << "P, Algorithm 9";
  // The batched forward of the gradients keeps the line outputs: one sequence, no padding.
  Batch b;
  b.B = 1;
  b.l = static_cast<int>(x.size());
  b.tokens = x;
  b.lengths = {b.l};
  b.targets.assign(x.size(), 0);
  BertCache<double> cache;
  etransformer_forward<double>(r.c, W, b, 1.0, cache);
  EXPECT_LT(gap(cache.loss.P, json_matrix(f.at("P"))), tol) << "P, batched";
  EXPECT_LT(gap(cache.layers[0].attn_ln.X, json_matrix(f.at("X0"))), tol) << "X0";
  for (int l = 1; l <= r.c.L; ++l) {
    const json& layer = f.at("layers").at(l - 1);
    const LayerCache<double>& lc = cache.layers[l - 1];
    EXPECT_LT(gap(lc.mlp_ln.X, json_matrix(layer.at("X_ln1"))), tol) << "line 6, layer " << l;
    EXPECT_LT(gap(lc.mlp.H_pre, json_matrix(layer.at("mlp_pre"))), tol) << "mlp_pre, layer " << l;
    EXPECT_LT(gap(lc.mlp.H_act, json_matrix(layer.at("mlp_gelu"))), tol) << "GELU, layer " << l;
    const MatD& next = l < r.c.L ? cache.layers[l].attn_ln.X : cache.X;
    EXPECT_LT(gap(next, json_matrix(layer.at("X_ln2"))), tol) << "line 8, layer " << l;
  }
  EXPECT_LT(gap(cache.F_pre, json_matrix(f.at("head_pre"))), tol) << "head_pre";
  EXPECT_LT(gap(cache.F_act, json_matrix(f.at("head_gelu"))), tol) << "line 10";
  EXPECT_LT(gap(cache.X_f, json_matrix(f.at("X_final"))), tol) << "line 11";
}

namespace {

// A case of "grads" as a Batch padded to the longest sequence (key padding = the lengths).
Batch batch_of(const json& g) {
  const std::vector<Tokens> seqs = g.at("sequences").get<std::vector<Tokens>>();
  const std::vector<std::vector<int>> tgts = g.at("targets").get<std::vector<std::vector<int>>>();
  Batch b;
  b.B = static_cast<int>(seqs.size());
  for (const Tokens& s : seqs) b.l = std::max(b.l, static_cast<int>(s.size()));
  std::vector<const Tokens*> ptrs;
  for (const Tokens& s : seqs) ptrs.push_back(&s);
  pad_sequences(ptrs, b.l, 1, "a sequence", b.tokens, b.lengths);
  b.targets.assign(b.tokens.size(), 0);
  for (size_t s = 0; s < tgts.size(); ++s)
    for (size_t t = 0; t < tgts[s].size(); ++t) b.targets[s * b.l + t] = tgts[s][t];
  return b;
}

template <class T>
void check_gradient_case(const std::string& name, double tol) {
  const Reference& r = reference();
  const json& g = r.doc.at("grads").at(name);
  const Batch b = batch_of(g);
  const bool mean = g.at("reduction").get<std::string>() == "mean";
  if (name == "batch") {
    EXPECT_TRUE(mean);
    EXPECT_EQ(b.lengths, (std::vector<int>{3, 5, 7}));  // padded to 7, keys masked
  }
  const T w = mean ? T(1) / static_cast<T>(b.n_targets()) : T(1);
  std::vector<T> theta(r.theta.begin(), r.theta.end());
  BertGradient<T> grad(r.table);
  const T loss = grad.loss_and_gradient(r.c, bind_bert<const T>(r.table, theta.data()), b, w);
  const double want_loss = g.at("loss").get<double>();
  EXPECT_NEAR(loss, want_loss, tol * std::abs(want_loss)) << name;
  const std::vector<double> want = json_tensors(g.at("grads"), r.table);
  const Eigen::Map<const Vec<double>> all(want.data(), want.size());
  for (const ParamEntry& e : r.table.entries()) {
    const Eigen::Map<const MatD> ref(want.data() + e.offset, e.rows, e.cols * e.count);
    const MatD got = Eigen::Map<const Mat<T>>(grad.grad.data() + e.offset, e.rows, e.cols * e.count).template cast<double>();
    if (zero_by_softmax_shift(e.name)) {  // ∂loss/∂b_k = 0: both sides are rounding noise
      EXPECT_LT(got.norm(), tol * all.norm()) << name << ": " << e.name;
      EXPECT_LT(ref.norm(), tol * all.norm()) << name << ": " << e.name;
      continue;
    }
    EXPECT_LT(relative_error(got, ref), tol) << name << ": " << e.name;
  }
}

}  // namespace

TEST(BertReference, GradientOfOneSequenceSummedLossDouble) { check_gradient_case<double>("single", kRefDoubleGradient); }
TEST(BertReference, GradientOfAPaddedBatchMeanLossDouble) { check_gradient_case<double>("batch", kRefDoubleGradient); }
TEST(BertReference, GradientOfOneSequenceSummedLossFloat) { check_gradient_case<float>("single", kRefFloatGradient); }
TEST(BertReference, GradientOfAPaddedBatchMeanLossFloat) { check_gradient_case<float>("batch", kRefFloatGradient); }

}  // namespace test_bert_reference
