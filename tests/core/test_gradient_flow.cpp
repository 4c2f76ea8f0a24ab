// The gradient-flow summaries of the Inspector's Gradient flow tab (core/gradients/gradient_flow.hpp),
// against independent computations: the norms recomputed entry by entry from sequence_gradient's
// tensors, and central finite differences of the loss along the gradient's own direction (for a
// token's saliency: a shift of W_p's column t, which adds to X entering layer 1 at t only; for a
// head: a shift of that head's W_q^h, W_k^g or W_v^g).
#include <gtest/gtest.h>

#include <cmath>

#include "core/gradients/gradient_flow.hpp"
#include "test_ed_support.hpp"

namespace test_gradient_flow {

using namespace sf;
using namespace sf::test;

namespace {

const std::vector<std::string> kVocab = {"a", "b", "c", "d"};  // N_V = 7: mask 5, bos 6, eos 7

ModelConfig gpt_config() {
  ModelConfig c;
  c.L = 2;
  c.H = 4;
  c.H_kv = 2;  // two query heads share each key/value head
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 3;
  c.d_mlp = 8;
  c.l_max = 8;
  c.vocab = kVocab;
  return c;
}

// The models: θ spread as N(0, 0.5²) (γ around 1), rounded to float (SpreadModel).
constexpr double kSpread = 0.5;

// ‖∇‖ of θ[offset, offset + n) estimated by a central difference of the loss along u = g/‖g‖, the
// direction of the analytic gradient g of that block: θ± = θ ± ε·u, rounded to float, and
//   (loss(θ+) − loss(θ−)) / (u · (θ+ − θ−)) = ‖g‖ + O(ε²).
// Using the rounded step d = θ+ − θ− exactly (in double) cancels the float rounding of θ±: its
// part across u is orthogonal to g and changes the loss only at second order.
double norm_by_differences(const Model& m, const Batch& b, size_t offset, size_t n, const std::vector<double>& grad) {
  Eigen::Map<const Eigen::VectorXd> g(grad.data() + offset, static_cast<Eigen::Index>(n));
  const Eigen::VectorXd u = g / g.norm();
  const double eps = 1e-3;
  Model plus = m, minus = m;
  double ud = 0;
  for (size_t i = 0; i < n; ++i) {
    plus.theta[offset + i] = static_cast<float>(m.theta[offset + i] + eps * u[static_cast<Eigen::Index>(i)]);
    minus.theta[offset + i] = static_cast<float>(m.theta[offset + i] - eps * u[static_cast<Eigen::Index>(i)]);
    ud += u[static_cast<Eigen::Index>(i)] * (static_cast<double>(plus.theta[offset + i]) - minus.theta[offset + i]);
  }
  return (sequence_gradient(plus, b).loss - sequence_gradient(minus, b).loss) / ud;
}

// The central difference's error is ε²/6 · |∂³loss/∂s³| / |∂loss/∂s| relative (s: the step along u)
// plus the loss's rounding in double (~1e-16 · |loss| / ε ≈ 1e-12 here). With ε = 1e-3 and these
// models' third directional derivatives of the order of their first times 10² at most (weights of
// size 0.5, ℓ ≤ 6), that is ≤ 2e-5 relative; 1e-4 leaves room and still fails a norm off by 0.01%.
constexpr double kDifferenceTol = 1e-4;

// ‖∂loss/∂X_l[:, t]‖ recomputed entry by entry, and ‖∂loss/∂X_l‖_F as √(Σ entries²).
void expect_stream(const StreamFlow& f, const std::vector<MatD>& grads) {
  ASSERT_EQ(f.layer_norms.size(), grads.size());
  ASSERT_EQ(f.token_norms.rows(), static_cast<Eigen::Index>(grads.size()));
  for (size_t l = 0; l < grads.size(); ++l) {
    double all = 0;
    for (Eigen::Index t = 0; t < grads[l].cols(); ++t) {
      double col = 0;
      for (Eigen::Index i = 0; i < grads[l].rows(); ++i) col += grads[l](i, t) * grads[l](i, t);
      all += col;
      // Sums of ≤ 8 squares in another order: a few ulps of the result.
      EXPECT_NEAR(f.token_norms(static_cast<Eigen::Index>(l), t), std::sqrt(col), 1e-14 * std::sqrt(col))
          << "l = " << l + 1 << ", t = " << t + 1;
    }
    EXPECT_NEAR(f.layer_norms[l], std::sqrt(all), 1e-14 * std::sqrt(all)) << "l = " << l + 1;
  }
}

// Σ_h ‖∇W^h‖² = Σ of the squares of the whole tensor's gradient (every head's entries once).
void expect_heads_cover_tensor(const std::vector<double>& norms, const ParamEntry& e, const std::vector<double>& grad) {
  ASSERT_EQ(norms.size(), static_cast<size_t>(e.count)) << e.name;
  double heads = 0, all = 0;
  for (double n : norms) heads += n * n;
  for (size_t i = 0; i < e.size(); ++i) all += grad[e.offset + i] * grad[e.offset + i];
  EXPECT_NEAR(heads, all, 1e-13 * all) << e.name;
}

}  // namespace

TEST(GradientFlow, StreamNormsAreTheColumnNormsOfTheResidualGradients) {
  const Model gpt = SpreadModel(gpt_config(), 1, kSpread).model();
  const Batch x = next_token_batch({}, {6, 1, 3, 2, 1, 7});
  const SequenceGradient g = sequence_gradient(gpt, x);
  const GradientFlow f = gradient_flow(gpt, x);
  EXPECT_EQ(f.loss, g.loss);
  expect_stream(f.x, g.stream.X);
  EXPECT_EQ(f.x.token_norms.rows(), 3) << "L + 1 boundaries";
  EXPECT_EQ(f.x.token_norms.cols(), 6) << "ℓ";
  EXPECT_TRUE(f.z.empty());
  EXPECT_TRUE(f.saliency_z().empty());

  const Model ed = SpreadModel(ed_test_config(2, 1, 2, 8, 4, 3, 8, 8, kVocab), 3, kSpread).model();
  const Batch zx = next_token_batch({6, 2, 4, 7}, {6, 1, 3, 7});
  const SequenceGradient ge = sequence_gradient(ed, zx);
  const GradientFlow fe = gradient_flow(ed, zx);
  expect_stream(fe.x, ge.stream.X);
  expect_stream(fe.z, ge.stream.Z);
  EXPECT_EQ(fe.z.token_norms.rows(), 3) << "L_enc + 1";
  EXPECT_EQ(fe.x.token_norms.rows(), 2) << "L_dec + 1";
  ASSERT_EQ(fe.saliency_z().size(), 4u);
  EXPECT_EQ(fe.saliency_z()[1], fe.z.token_norms(0, 1));
}

TEST(GradientFlow, SaliencyIsTheLossGradientsNormAtEachEmbeddingColumnByDifferences) {
  // X entering layer 1 is e_t + W_p[:, t]: shifting W_p's column t shifts X[:, t] alone, so the
  // loss's slope along that column's gradient is ‖∂loss/∂e_t‖.
  const Model gpt = SpreadModel(gpt_config(), 2, kSpread).model();
  const Batch x = next_token_batch({}, {6, 1, 3, 2, 1, 7});
  const std::vector<double> grad = sequence_gradient(gpt, x).grad;
  const std::vector<double> s = gradient_flow(gpt, x).saliency();
  ASSERT_EQ(s.size(), 6u);
  // The causal mask: no loss term −log P[x[t+1], t] reads the last token (it predicts nothing and
  // no earlier position attends to it), so its saliency is exactly 0.
  EXPECT_EQ(s.back(), 0.0);
  const ParamEntry& W_p = gpt.table.at("W_p");
  for (size_t t = 0; t + 1 < s.size(); ++t) {
    const double fd = norm_by_differences(gpt, x, W_p.offset + t * W_p.rows, static_cast<size_t>(W_p.rows), grad);
    EXPECT_NEAR(s[t], fd, kDifferenceTol * s[t]) << "t = " << t + 1;
  }

  // BERT: only the masked positions carry loss, but every token's embedding gets gradient
  // through the bidirectional mask.
  const Model bert = SpreadModel(bert_test_config(1, 2, 8, 4, 3, 8, 6, 8, kVocab), 4, kSpread).model();
  const Batch xt = masked_batch({6, 1, 3, 2, 7}, {3}, 5);
  const std::vector<double> gb = sequence_gradient(bert, xt).grad;
  const std::vector<double> sb = gradient_flow(bert, xt).saliency();
  const ParamEntry& W_pb = bert.table.at("W_p");
  for (size_t t = 0; t < sb.size(); ++t) {
    EXPECT_GT(sb[t], 0) << "t = " << t + 1;
    const double fd = norm_by_differences(bert, xt, W_pb.offset + t * W_pb.rows, static_cast<size_t>(W_pb.rows), gb);
    EXPECT_NEAR(sb[t], fd, kDifferenceTol * sb[t]) << "t = " << t + 1;
  }
}

TEST(GradientFlow, HeadNormsAreEachHeadsGradientNormByDifferences) {
  const Model gpt = SpreadModel(gpt_config(), 5, kSpread).model();
  const Batch x = next_token_batch({}, {6, 2, 4, 1, 3});
  const std::vector<double> grad = sequence_gradient(gpt, x).grad;
  const std::vector<HeadGradNorms> heads = gradient_flow(gpt, x).heads;
  ASSERT_EQ(heads.size(), 2u);
  for (const HeadGradNorms& b : heads) {
    EXPECT_EQ(b.label, "layer " + std::to_string(b.layer));
    EXPECT_EQ(b.q.size(), 4u) << "H";
    EXPECT_EQ(b.k.size(), 2u) << "H_kv: the key/value heads";
    const std::pair<const char*, const std::vector<double>*> kinds[] = {{"W_q", &b.q}, {"W_k", &b.k}, {"W_v", &b.v}};
    for (const auto& [name, norms] : kinds) {
      const ParamEntry& e = gpt.table.at(b.prefix + name);
      expect_heads_cover_tensor(*norms, e, grad);
      for (size_t h = 0; h < norms->size(); ++h) {
        const double fd = norm_by_differences(gpt, x, e.offset + h * e.matrix_size(), e.matrix_size(), grad);
        EXPECT_NEAR((*norms)[h], fd, kDifferenceTol * (*norms)[h]) << e.name << ", head " << h + 1;
      }
    }
  }
}

TEST(GradientFlow, EncoderDecoderHeadsAreLabelledByStackAndKind) {
  const Model ed = SpreadModel(ed_test_config(1, 1, 2, 8, 4, 3, 8, 8, kVocab), 6, kSpread).model();
  const Batch zx = next_token_batch({6, 2, 4, 7}, {6, 1, 3, 7});
  const std::vector<double> grad = sequence_gradient(ed, zx).grad;
  const std::vector<HeadGradNorms> heads = gradient_flow(ed, zx).heads;
  ASSERT_EQ(heads.size(), 3u);
  EXPECT_EQ(heads[0].label, "encoder layer 1");
  EXPECT_EQ(heads[1].label, "decoder layer 1, self-attention");
  EXPECT_EQ(heads[2].label, "decoder layer 1, cross-attention");
  for (const HeadGradNorms& b : heads)
    for (const char* name : {"W_q", "W_k", "W_v"}) {
      const ParamEntry& e = ed.table.at(b.prefix + name);
      const std::vector<double>& norms = name[2] == 'q' ? b.q : name[2] == 'k' ? b.k : b.v;
      expect_heads_cover_tensor(norms, e, grad);
    }
}

}  // namespace test_gradient_flow
