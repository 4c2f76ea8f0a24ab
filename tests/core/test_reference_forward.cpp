// Algorithm 10 against an independent PyTorch float64 implementation, tensor by tensor.
//
// The data, tests/data/forward_reference.json, is made by tests/reference/gen_forward_reference.py.
// To regenerate it (needs torch and numpy), from the repository root:
//     /usr/bin/python3 tests/reference/gen_forward_reference.py
// It holds the config (core/config.hpp's to_json keys), the 1-based input tokens, every
// parameter under its ParamTable checkpoint name (row-major nested lists in the paper's shapes;
// per-head tensors [H, rows, cols]) and every intermediate of the forward pass, matrices
// rows × columns with tokens as columns, −∞ written as the string "-inf". The parameters are
// float32 values, so the float θ here holds them exactly and the double run can match to 1e-10.
#include <gtest/gtest.h>

#include <cmath>
#include <set>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/config.hpp"
#include "reference_json.hpp"

namespace test_reference_forward {

using namespace sf;
using sf::test::json;
using sf::test::kRefDouble;
using sf::test::kRefFloat;

namespace {

using MatD = Mat<double>;
const auto& matrix = sf::test::json_matrix;

// The model of the reference: θ in float (exact: the reference's parameters are float32
// values) and the same θ in double.
struct Reference {
  json j;
  ModelConfig config;
  Model model{ModelConfig{}};
  std::vector<double> theta_d;
  Tokens x;
};

Reference build() {
  Reference r;
  r.j = sf::test::load_test_json("forward_reference.json");
  r.config = config_from_json(r.j.at("config").dump());
  r.model = Model(r.config);
  r.theta_d = sf::test::json_tensors(r.j.at("params"), r.model.table);
  r.model.theta = sf::test::exact_floats(r.theta_d);
  r.x = r.j.at("tokens").get<Tokens>();
  return r;
}

// The value `name` of the unique event (kind, alg, line) with indices l and h (any t).
const Value* find_value(const Trace& tr, EventKind kind, int alg, int line, int l, int h, const std::string& name) {
  const Value* found = nullptr;
  int hits = 0;
  for (const Event& e : tr.events) {
    if (e.kind != kind || e.alg != alg || e.line != line || e.idx.l != l || e.idx.h != h) continue;
    for (const Value& v : e.values)
      if (v.name == name) {
        found = &v;
        ++hits;
      }
  }
  EXPECT_EQ(hits, 1) << "alg " << alg << " line " << line << " l " << l << " h " << h << " " << name;
  return hits == 1 ? found : nullptr;
}

// got (float, from the trace) against want (float64), −∞ exactly where want is −∞.
::testing::AssertionResult close(const MatF& got, const MatD& want, double tol) {
  if (got.rows() != want.rows() || got.cols() != want.cols())
    return ::testing::AssertionFailure() << "shape " << got.rows() << "×" << got.cols() << ", want " << want.rows()
                                         << "×" << want.cols();
  for (Eigen::Index i = 0; i < want.rows(); ++i)
    for (Eigen::Index c = 0; c < want.cols(); ++c) {
      const double g = got(i, c), w = want(i, c);
      if (std::isinf(w)) {
        if (!(std::isinf(g) && std::signbit(g)))
          return ::testing::AssertionFailure() << "[" << i + 1 << "," << c + 1 << "] = " << g << ", want −∞";
      } else if (!(std::abs(g - w) <= tol)) {
        return ::testing::AssertionFailure() << "[" << i + 1 << "," << c + 1 << "] = " << g << ", want " << w
                                             << " (|diff| " << std::abs(g - w) << " > " << tol << ")";
      }
    }
  return ::testing::AssertionSuccess();
}
::testing::AssertionResult close_d(const MatD& got, const MatD& want, double tol) {
  if (got.rows() != want.rows() || got.cols() != want.cols()) return ::testing::AssertionFailure() << "shape";
  for (Eigen::Index i = 0; i < want.rows(); ++i)
    for (Eigen::Index c = 0; c < want.cols(); ++c) {
      const double g = got(i, c), w = want(i, c);
      if (std::isinf(w) ? !(std::isinf(g) && std::signbit(g)) : !(std::abs(g - w) <= tol))
        return ::testing::AssertionFailure() << "[" << i + 1 << "," << c + 1 << "] = " << g << ", want " << w;
    }
  return ::testing::AssertionSuccess();
}

// Derived in reference_json.hpp (this model's intermediates reach 12: ≲ 7e-7 relative, 8e-6; kTolF
// is 12σ, where the other reference tests hold their intermediates to kRefFloat).
constexpr double kTolF = 1e-4;          // float intermediates
constexpr double kTolPF = kRefFloat;    // float P
constexpr double kTolD = kRefDouble;    // double

}  // namespace

TEST(ReferenceForward, DataMatchesTheParameterTable) {
  const Reference r = build();
  EXPECT_EQ(r.config.L, 2);
  EXPECT_EQ(r.config.H, 2);
  EXPECT_EQ(r.config.d_e, 8);
  EXPECT_EQ(r.config.d_attn, 4);
  EXPECT_EQ(r.config.d_mid, 3);
  EXPECT_EQ(r.config.d_mlp, 16);
  EXPECT_EQ(r.config.N_V(), 13);
  EXPECT_EQ(r.x.size(), 6u);
  // Every parameter of the table is in the file and nothing else.
  std::set<std::string> table, file;
  for (const auto& e : r.model.table.entries()) table.insert(e.name);
  for (auto it = r.j.at("params").begin(); it != r.j.at("params").end(); ++it) file.insert(it.key());
  EXPECT_EQ(table, file);
  // Spot checks of the layout: W_e[2, 5] (row-major in the file) is W_e(1, 4) in the view;
  // per-head W_v of layer 2, head 2, element [3, 7].
  const auto W = r.model.weights();
  EXPECT_EQ(W.W_e(1, 4), static_cast<float>(r.j["params"]["W_e"]["data"][1][4].get<double>()));
  EXPECT_EQ(W.layers[1].attn.heads[1].W_v(2, 6),
            static_cast<float>(r.j["params"]["layer2.attn.W_v"]["data"][1][2][6].get<double>()));
  EXPECT_EQ(W.layers[0].attn.heads[1].b_q(3),
            static_cast<float>(r.j["params"]["layer1.attn.b_q"]["data"][1][3].get<double>()));
}

TEST(ReferenceForward, FloatTraceMatchesEveryIntermediate) {
  const Reference r = build();
  const json& j = r.j;
  Trace tr;
  Tracer tracer(tr);
  const MatF P = dtransformer<float>(r.x, r.config, r.model.weights(), &tracer);
  const EventKind Ln = EventKind::Line, Sub = EventKind::SubStep;

  EXPECT_TRUE(close(find_value(tr, Ln, 10, 3, 0, 0, "X")->m, matrix(j["X0"]), kTolF)) << "X (line 3)";
  for (int l = 1; l <= r.config.L; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const json& ref = j["layers"][l - 1];
    EXPECT_TRUE(close(find_value(tr, Ln, 10, 5, l, 0, "X̃")->m, matrix(ref["X_tilde1"]), kTolF)) << "X̃ (line 5)";
    for (int h = 1; h <= r.config.H; ++h) {
      SCOPED_TRACE("head " + std::to_string(h));
      const json& hr = ref["heads"][h - 1];
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 1, l, h, "Q")->m, matrix(hr["Q"]), kTolF)) << "Q";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 2, l, h, "K")->m, matrix(hr["K"]), kTolF)) << "K";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 3, l, h, "V")->m, matrix(hr["V"]), kTolF)) << "V";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 4, l, h, "S")->m, matrix(hr["S"]), kTolF)) << "S";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 5, l, h, "S")->m, matrix(hr["S_masked"]), kTolF)) << "masked S";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 6, l, h, "softmax(S/√d_attn)")->m, matrix(hr["A"]), kTolF)) << "A";
      EXPECT_TRUE(close(find_value(tr, Ln, 4, 6, l, h, "Ṽ")->m, matrix(hr["Y"]), kTolF)) << "Ṽ";
      EXPECT_TRUE(close(find_value(tr, Ln, 5, 2, l, h, "Y^" + std::to_string(h))->m, matrix(hr["Y"]), kTolF)) << "Y^h";
    }
    EXPECT_TRUE(close(find_value(tr, Ln, 5, 3, l, 0, "Y")->m, matrix(ref["Y"]), kTolF)) << "Y";
    EXPECT_TRUE(close(find_value(tr, Ln, 5, 4, l, 0, "Ṽ")->m, matrix(ref["mha"]), kTolF)) << "MHAttention";
    EXPECT_TRUE(close(find_value(tr, Ln, 10, 6, l, 0, "X")->m, matrix(ref["X_after_attn"]), kTolF)) << "X (line 6)";
    EXPECT_TRUE(close(find_value(tr, Ln, 10, 7, l, 0, "X̃")->m, matrix(ref["X_tilde2"]), kTolF)) << "X̃ (line 7)";
    EXPECT_TRUE(close(find_value(tr, Sub, 10, 8, l, 0, "W_mlp1 X̃ + b_mlp1 1ᵀ")->m, matrix(ref["mlp_pre"]), kTolF))
        << "MLP pre-activation";
    EXPECT_TRUE(close(find_value(tr, Sub, 10, 8, l, 0, "GELU(…)")->m, matrix(ref["mlp_gelu"]), kTolF)) << "GELU";
    EXPECT_TRUE(close(find_value(tr, Ln, 10, 8, l, 0, "X")->m, matrix(ref["X_after_mlp"]), kTolF)) << "X (line 8)";
    // The per-column layer_norm calls of line 5 (t = 1 … ℓ) each give one column of X̃.
    const MatD Xt = matrix(ref["X_tilde1"]);
    int cols = 0;
    for (const Event& e : tr.events)
      if (e.alg == 6 && e.line == 3 && e.idx.l == l && cols < static_cast<int>(r.x.size()) && e.idx.t == cols + 1) {
        EXPECT_TRUE(close(e.values.at(0).m, Xt.col(cols), kTolF)) << "ê, t = " << cols + 1;
        ++cols;
      }
    EXPECT_EQ(cols, static_cast<int>(r.x.size()));
  }
  EXPECT_TRUE(close(find_value(tr, Ln, 10, 10, 0, 0, "X")->m, matrix(j["X_final"]), kTolF)) << "X (line 10)";
  EXPECT_TRUE(close(find_value(tr, Sub, 10, 11, 0, 0, "W_u X")->m, matrix(j["logits"]), kTolF)) << "W_u X";
  EXPECT_TRUE(close(find_value(tr, Ln, 10, 11, 0, 0, "P")->m, matrix(j["P"]), kTolPF)) << "P (trace)";
  EXPECT_TRUE(close(P, matrix(j["P"]), kTolPF)) << "P";
}

TEST(ReferenceForward, DoubleMatchesTo1e10) {
  const Reference r = build();
  const GptW<const double> W = bind_gpt<const double>(r.model.table, r.theta_d.data());
  const MatD P = dtransformer<double>(r.x, r.config, W);
  EXPECT_TRUE(close_d(P, matrix(r.j["P"]), kTolD)) << "P (double)";
  // Untraced float agrees too.
  EXPECT_TRUE(close(dtransformer<float>(r.x, r.config, r.model.weights()), matrix(r.j["P"]), kTolPF));
}

TEST(ReferenceForward, DoubleAlgorithmsMatchEachStage) {
  // Each stage of Algorithm 10 in double, fed the reference's own input for that stage.
  const Reference r = build();
  const json& j = r.j;
  const GptW<const double> W = bind_gpt<const double>(r.model.table, r.theta_d.data());
  const double eps = static_cast<double>(r.config.eps);
  const int n = static_cast<int>(r.x.size());
  const Mask mask = unidirectional_mask(n, n);
  MatD X = matrix(j["X0"]);
  for (int l = 1; l <= r.config.L; ++l) {
    SCOPED_TRACE("layer " + std::to_string(l));
    const json& ref = j["layers"][l - 1];
    const LayerW<const double>& Wl = W.layers[l - 1];
    EXPECT_TRUE(close_d(layer_norm_columns<double>(X, Wl.gamma1, Wl.beta1, eps), matrix(ref["X_tilde1"]), kTolD));
    const MatD Xt = matrix(ref["X_tilde1"]);
    std::vector<AttentionRecord<double>> recs;
    const MatD mha = mh_attention<double>(Xt, Xt, Wl.attn, mask, nullptr, &recs);
    EXPECT_TRUE(close_d(mha, matrix(ref["mha"]), kTolD)) << "MHAttention";
    ASSERT_EQ(static_cast<int>(recs.size()), r.config.H);
    for (int h = 0; h < r.config.H; ++h) {
      const json& hr = ref["heads"][h];
      EXPECT_TRUE(close_d(recs[h].Q, matrix(hr["Q"]), kTolD)) << "Q, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].K, matrix(hr["K"]), kTolD)) << "K, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].V, matrix(hr["V"]), kTolD)) << "V, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].S, matrix(hr["S"]), kTolD)) << "S, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].S_masked, matrix(hr["S_masked"]), kTolD)) << "masked S, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].A, matrix(hr["A"]), kTolD)) << "A, h = " << h + 1;
      EXPECT_TRUE(close_d(recs[h].Vt, matrix(hr["Y"]), kTolD)) << "Y^h, h = " << h + 1;
    }
    X = matrix(ref["X_after_attn"]);
    const MatD Xt2 = layer_norm_columns<double>(X, Wl.gamma2, Wl.beta2, eps);
    EXPECT_TRUE(close_d(Xt2, matrix(ref["X_tilde2"]), kTolD));
    EXPECT_TRUE(close_d(gelu<double>(matrix(ref["mlp_pre"])), matrix(ref["mlp_gelu"]), kTolD));
    X = matrix(ref["X_after_mlp"]);
  }
  const MatD Xf = layer_norm_columns<double>(X, W.gamma, W.beta, eps);
  EXPECT_TRUE(close_d(Xf, matrix(j["X_final"]), kTolD));
  // Algorithm 7 on each column of the final X gives the column of P.
  const MatD P = matrix(j["P"]);
  for (int t = 0; t < n; ++t) {
    const Vec<double> p = unembedding<double>(matrix(j["X_final"]).col(t), W.W_u);
    EXPECT_TRUE(close_d(p, P.col(t), kTolD)) << "unembedding, t = " << t + 1;
  }
}

}  // namespace test_reference_forward
