// The vision transformer against PyTorch (tests/data/vit_reference.json, written by
// tests/reference/gen_vit_reference.py in float64): line 2's X from the patches and P of the traced
// Algorithm 9 on an image (float and double), and the class-token loss with its gradient for every
// tensor over a batch of three images (double and float), for patch 4 and patch 2. The tolerances
// are reference_json.hpp's (same model sizes: d_e = 8, H = 2, L = 2; ℓ_x ≤ 17 columns adds no sum
// longer than its n ≤ 16 terms per dot product).
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <string>

#include "core/arch/vit.hpp"
#include "core/gradients/grad_vit.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"

namespace test_vit_reference {

using namespace sf;
using namespace sf::test;

namespace {

struct Reference {
  ModelConfig c;
  ParamTable table;
  std::vector<double> theta;
  json forward, grads;
};

ModelConfig config_of(const json& j) {
  ModelConfig c;
  c.arch = j.at("arch").get<std::string>();
  for (const char* k : {"patch", "L", "H", "d_e", "d_attn", "d_mid", "d_mlp", "d_f", "l_max"})
    *config_int(c, k) = j.at(k).get<int>();
  c.eps = j.at("eps").get<float>();
  c.vocab = j.at("vocab").get<std::vector<std::string>>();
  return c;
}

const json& document() {
  static const json doc = load_test_json("vit_reference.json");
  return doc;
}

Reference reference(int patch) {
  const json& d = patch == 4 ? document() : document().at("patch2");
  ModelConfig c = config_of(d.at("config"));
  EXPECT_EQ(validate(c), "");
  ParamTable table(c);
  std::vector<double> theta = json_tensors(d.at("params"), table);
  return Reference{c, std::move(table), std::move(theta), d.at("forward"), d.at("grads")};
}

std::vector<Tokens> images() { return document().at("images").get<std::vector<Tokens>>(); }
std::vector<int> labels() { return document().at("labels").get<std::vector<int>>(); }

template <class T>
void check_forward(int patch, double tol) {
  const Reference r = reference(patch);
  const std::vector<T> theta(r.theta.begin(), r.theta.end());  // float32 values: exact in float too
  const VitW<const T> W = bind_vit<const T>(r.table, theta.data());
  const Tokens image = images().at(0);
  const MatD X0 = vit_embed<T>(image_patches<T>(image, patch), W).template cast<double>();
  EXPECT_LT((X0 - json_matrix(r.forward.at("X0"))).cwiseAbs().maxCoeff(), tol) << "patch " << patch;
  Trace trace;
  Tracer tr(trace);
  const MatD P = vit_etransformer<T>(image, r.c, W, &tr).template cast<double>();
  EXPECT_LT((P - json_matrix(r.forward.at("P"))).cwiseAbs().maxCoeff(), tol) << "patch " << patch;
  // Stepping works as for text: Algorithm 9's line 2 binds X from the patches, with the note that it
  // replaces Algorithm 1's W_e[:, x[t]]; line 12 binds P. The trace keeps float copies (a double
  // run's values rounded to float, ≤ 2⁻²⁴ relative of values ≤ 5): kRefFloat for them.
  const double traced_tol = std::max(tol, kRefFloat);
  bool line2 = false, line12 = false;
  for (const Event& e : trace.events) {
    if (e.kind != EventKind::Line || e.alg != 9) continue;
    for (const Value& v : e.values) {
      if (e.line == lines::e_transformer::embed.line && v.name == "X") {
        line2 = true;
        EXPECT_LT((v.m.cast<double>() - json_matrix(r.forward.at("X0"))).cwiseAbs().maxCoeff(), traced_tol);
        EXPECT_NE(v.note.find("replaces Algorithm 1's W_e[:, x[t]]"), std::string::npos) << v.note;
      }
      if (e.line == lines::e_transformer::P.line && v.name == "P") line12 = (v.m - P.cast<float>()).cwiseAbs().maxCoeff() == 0;
    }
  }
  EXPECT_TRUE(line2);
  EXPECT_TRUE(line12);
}

template <class T>
void check_gradient(int patch, double tol) {
  const Reference r = reference(patch);
  std::vector<T> theta(r.theta.begin(), r.theta.end());
  const std::vector<Tokens> xs = images();
  const std::vector<int> ys = labels();
  Batch b;
  b.B = static_cast<int>(xs.size());
  b.l = kImagePixels;
  b.lengths.assign(b.B, kImagePixels);
  for (size_t s = 0; s < xs.size(); ++s) {
    b.tokens.insert(b.tokens.end(), xs[s].begin(), xs[s].end());
    b.targets.resize(b.tokens.size(), 0);
    b.targets[s * kImagePixels] = ys[s];
  }
  VitGradient<T> g(r.table);
  const T loss = g.loss_and_gradient(r.c, bind_vit<const T>(r.table, theta.data()), b, T(1));
  const double want_loss = r.grads.at("loss").get<double>();
  EXPECT_NEAR(loss, want_loss, tol * std::abs(want_loss));
  const std::vector<double> want = json_tensors(r.grads.at("grads"), r.table);
  const Eigen::Map<const Vec<double>> all(want.data(), static_cast<Eigen::Index>(want.size()));
  for (const ParamEntry& e : r.table.entries()) {
    const Eigen::Map<const MatD> ref(want.data() + e.offset, e.rows, e.cols * e.count);
    const MatD got = Eigen::Map<const Mat<T>>(g.grad.data() + e.offset, e.rows, e.cols * e.count).template cast<double>();
    if (zero_by_softmax_shift(e.name)) {  // ∂loss/∂b_k = 0: both sides are rounding noise
      EXPECT_LT(got.norm(), tol * all.norm()) << e.name;
      continue;
    }
    EXPECT_LT(relative_error(got, ref), tol) << "patch " << patch << ": " << e.name;
  }
}

}  // namespace

TEST(VitReference, ForwardDoublePatch4) { check_forward<double>(4, kRefDouble); }
TEST(VitReference, ForwardDoublePatch2) { check_forward<double>(2, kRefDouble); }
TEST(VitReference, ForwardFloatPatch4) { check_forward<float>(4, kRefFloat); }
TEST(VitReference, GradientDoublePatch4) { check_gradient<double>(4, kRefDoubleGradient); }
TEST(VitReference, GradientDoublePatch2) { check_gradient<double>(2, kRefDoubleGradient); }
TEST(VitReference, GradientFloatPatch4) { check_gradient<float>(4, kRefFloatGradient); }

}  // namespace test_vit_reference
