// Finite-difference checks, in double precision, of every forward/backward pair of
// core/grad_*.cpp: for a random upstream gradient R, the scalar f = Σ R ⊙ output has
// ∂f/∂input = backward(R); central differences must agree to kGradCheckRelative = 1e-6 (typically
// 1e-9 – 1e-11; grad_check.hpp derives the differences' own error, ≈ 3e-11).
#include <gtest/gtest.h>

#include "core/algorithms/algorithms.hpp"
#include "core/gradients/grad.hpp"
#include "grad_check.hpp"

namespace test_grad_blocks {

using namespace sf;
using namespace sf::test;

namespace {

const double kTol = kGradCheckRelative;  // grad_check.hpp: the differences' error, with its margin

// A block's batched forward against core's Algorithm on one sequence, both in double: the same sums,
// maybe in other orders, each within γ_n·Σ|terms| on either side. Here ≤ 3 sums deep (scores, the
// weighted values, W_o; or the MLP's two products), n ≤ 16 terms, each a product of entries of
// random_matrix (N(0, 1), so Σ|terms| ≲ 16·16): 2·3·γ_16·256 ≈ 1.7e-12.
const double kBlockDouble = 2 * 3 * double_gamma(16) * 256;

double dot(const MatD& a, const MatD& b) { return (a.array() * b.array()).sum(); }

TEST(GradBlocks, Linear) {
  Rng rng(1);
  MatD X = random_matrix(rng, 5, 7), W = random_matrix(rng, 4, 5), b = random_matrix(rng, 4, 1);
  const MatD R = random_matrix(rng, 4, 7);
  MatD Y(4, 7);
  auto f = [&] {
    linear_forward<double>(X, W, b, Y);
    return dot(R, Y);
  };
  MatD dW(4, 5), db(4, 1), dX(5, 7);
  f();
  linear_backward<double>(R, X, W, dW, db, dX);
  EXPECT_LT(relative_error(dW, numeric_gradient(W, f)), kTol);
  EXPECT_LT(relative_error(db, numeric_gradient(b, f)), kTol);
  EXPECT_LT(relative_error(dX, numeric_gradient(X, f)), kTol);
}

TEST(GradBlocks, TokenAndPositionalEmbedding) {
  Rng rng(2);
  const int l = 4;
  const Tokens tokens{3, 1, 3, 5, 2, 3, 4, 4};  // B = 2 sequences of ℓ = 4; token 3 used thrice
  MatD W_e = random_matrix(rng, 6, 5), W_p = random_matrix(rng, 6, 7);  // N_V = 5, ℓ_max = 7
  const MatD R = random_matrix(rng, 6, 8);
  MatD X;
  auto f = [&] {
    embedding_forward<double>(tokens, l, W_e, W_p, X);
    return dot(R, X);
  };
  f();
  EXPECT_EQ(X.col(5), W_e.col(2) + W_p.col(1));  // sequence 2, t = 2: W_e[:, 3] + W_p[:, 2]
  MatD dW_e(6, 5), dW_p(6, 7);
  embedding_backward<double>(tokens, l, R, dW_e, dW_p);
  EXPECT_LT(relative_error(dW_e, numeric_gradient(W_e, f)), kTol);
  EXPECT_LT(relative_error(dW_p, numeric_gradient(W_p, f)), kTol);
  EXPECT_EQ(dW_p.rightCols(3).norm(), 0.0);  // positions past ℓ get nothing
}

TEST(GradBlocks, LayerNormWithEpsilon) {
  Rng rng(3);
  MatD X = random_matrix(rng, 8, 6), gamma = random_matrix(rng, 8, 1), beta = random_matrix(rng, 8, 1);
  X.col(2).setConstant(0.7);  // a constant column: v = 0, finite only because of ε
  const MatD R = random_matrix(rng, 8, 6);
  const double eps = 1e-5;
  LayerNormCache<double> cache;
  MatD Y;
  auto f = [&] {
    layer_norm_forward<double>(X, gamma, beta, eps, cache, Y);
    return dot(R, Y);
  };
  f();
  // The same values as Algorithm 6, column by column.
  const MapV<const double> g(gamma.data(), 8), be(beta.data(), 8);
  EXPECT_LT((Y - layer_norm_columns<double>(X, g, be, eps)).cwiseAbs().maxCoeff(), kBlockDouble);
  MatD dX = MatD::Constant(8, 6, 0.25), dgamma(8, 1), dbeta(8, 1);  // backward ADDS into dX
  layer_norm_backward<double>(R, gamma, cache, dX, dgamma, dbeta);
  dX.array() -= 0.25;
  // The constant column's gradient is large (1/√ε); check its direction and the rest tightly. h = 1e-8,
  // not 1e-5: that column's f‴ grows like |γ·R|·ε^{−3/2} ≈ 3e7·10, and h²·|f‴|/6 must stay small (5e-9
  // here, 500 at h = 1e-5). At this h the step's own rounding dominates (step_rounding: u·|x|/h ≈
  // 3e-8 relative); the differences' error adds √48 entries' central_difference_error against ‖dX‖,
  // ×10 because f‴ is an estimate. (Measured: 8e-9.)
  const double fd_error = std::sqrt(48.0) * central_difference_error(1e-8, f(), 10 * std::pow(eps, -1.5));
  EXPECT_LT(relative_error(dX, numeric_gradient(X, f, 1e-8)),
            step_rounding(X.cwiseAbs().maxCoeff(), 1e-8) + 10 * fd_error / dX.norm());
  X.col(2) = random_matrix(rng, 8, 1);
  f();
  dX.setZero();
  layer_norm_backward<double>(R, gamma, cache, dX, dgamma, dbeta);
  EXPECT_LT(relative_error(dX, numeric_gradient(X, f)), kTol);
  EXPECT_LT(relative_error(dgamma, numeric_gradient(gamma, f)), kTol);
  EXPECT_LT(relative_error(dbeta, numeric_gradient(beta, f)), kTol);
}

TEST(GradBlocks, MaskedAttentionHeadGivesMaskedScoresZeroGradient) {
  Rng rng(4);
  const int d_attn = 3, d_mid = 2, l_x = 5, l_z = 6;
  MatD Q = random_matrix(rng, d_attn, l_x), K = random_matrix(rng, d_attn, l_z), V = random_matrix(rng, d_mid, l_z);
  Mask mask(l_z, l_x);  // random, with column 4 masked everywhere
  for (int tx = 0; tx < l_x; ++tx)
    for (int tz = 0; tz < l_z; ++tz) mask(tz, tx) = tx == 3 ? 0 : rng.uniform() < 0.6;
  mask(0, 0) = 1;
  K.col(5) *= 40;  // a large masked score must not overflow into NaN
  const MatD R = random_matrix(rng, d_mid, l_x);
  MatD A(l_z, l_x), Vt(d_mid, l_x);
  auto f = [&] {
    attention_forward<double>(Q, K, V, mask.cast<double>(), A, Vt);
    return dot(R, Vt);
  };
  f();
  // The weights are Algorithm 4's: softmax of the masked, scaled scores (masked: exactly 0).
  MatD S = K.transpose() * Q / std::sqrt(double(d_attn));
  S = (mask.array() != 0).select(S, neg_inf<double>());
  EXPECT_LT((A - softmax_columns<double>(S)).cwiseAbs().maxCoeff(), kBlockDouble);
  for (int tx = 0; tx < l_x; ++tx)
    for (int tz = 0; tz < l_z; ++tz)
      if (!mask(tz, tx)) {
        EXPECT_EQ(A(tz, tx), 0.0);
      }
  EXPECT_TRUE(Vt.allFinite());
  MatD dS(l_z, l_x), dQ(d_attn, l_x), dK(d_attn, l_z), dV(d_mid, l_z);
  attention_backward<double>(R, Q, K, V, A, dS, dQ, dK, dV);
  for (int tx = 0; tx < l_x; ++tx)
    for (int tz = 0; tz < l_z; ++tz)
      if (!mask(tz, tx)) {
        EXPECT_EQ(dS(tz, tx), 0.0) << "masked (−∞) score at " << tz << ", " << tx;
      }
  EXPECT_EQ(dQ.col(3).norm(), 0.0);  // a query that sees nothing gets no gradient
  EXPECT_LT(relative_error(dQ, numeric_gradient(Q, f)), kTol);
  EXPECT_LT(relative_error(dK, numeric_gradient(K, f)), kTol);
  EXPECT_LT(relative_error(dV, numeric_gradient(V, f)), kTol);
}

// The parameters of one multi-head attention layer (d_attn ≠ d_mid), as views of a double θ.
struct AttentionLayer {
  ModelConfig config;
  ParamTable table;
  std::vector<double> theta, grad;
  GptW<const double> W;
  GptW<double> dW;
  AttentionLayer()
      : config(make_config()),
        table(config),
        theta(table.total()),
        grad(table.total()),
        W(bind_gpt<const double>(table, theta.data())),
        dW(bind_gpt<double>(table, grad.data())) {
    Rng rng(5);
    for (double& v : theta) v = 0.5 * rng.normal();
  }
  static ModelConfig make_config() {
    ModelConfig c;
    c.L = 1;
    c.H = 3;
    c.d_e = 6;
    c.d_attn = 4;
    c.d_mid = 2;
    c.d_mlp = 4;
    c.l_max = 8;
    c.vocab = {"a", "b"};
    return c;
  }
  const MHAttentionW<const double>& attn() const { return W.layers[0].attn; }
  MHAttentionW<double>& dattn() { return dW.layers[0].attn; }

  // grad (written by a backward) against central differences of f for every tensor of the layer.
  // ∂f/∂b_k is exactly 0 (zero_by_softmax_shift): checked by size against `scale`.
  void expect_gradients_match(const std::function<double()>& f, double scale) {
    for (const ParamEntry& e : table.entries()) {
      if (e.name.rfind("layer1.attn.", 0) != 0) continue;
      const MatD num = numeric_gradient(theta.data() + e.offset, e.rows, e.cols * e.count, f);
      const Eigen::Map<const MatD> ana(grad.data() + e.offset, e.rows, e.cols * e.count);
      if (zero_by_softmax_shift(e.name)) {
        // As in check_every_tensor (grad_check.hpp), at this h = 1e-6: u·|f|/h ≈ 1.1e-9 per entry (|f| ≤ 10),
        // ≤ 10 entries, against a scale ≳ 1.
        EXPECT_LT(ana.norm(), 10 * double_gamma(1000) * scale) << e.name;
        EXPECT_LT(num.norm(), 10 * central_difference_error(1e-6, 10, 0) * std::max(scale, 1.0)) << e.name;
      } else {
        EXPECT_LT(relative_error(ana, num), kTol) << e.name;
      }
    }
  }
};

// The weights A of sequence b, head h (ℓ_z, ℓ_x): exactly 0 on the keys past keys_b, and each
// column a distribution over the real keys (or all 0 when there are none).
void expect_padded_keys_get_zero_weight(const MatD& A, int B, int H, int l_x, const std::vector<int>& keys) {
  for (int b = 0; b < B; ++b)
    for (int h = 0; h < H; ++h) {
      const MatD A_h = A.middleCols((b * H + h) * l_x, l_x);
      const int n = keys[b];
      EXPECT_EQ(A_h.bottomRows(A_h.rows() - n).norm(), 0.0) << "sequence " << b + 1 << ", head " << h + 1;
      const MatD sums = A_h.colwise().sum();
      // A softmax's column sums to 1 within γ_{2n−1} (test_algorithms.cpp, Softmax.ColumnsHandComputed).
      EXPECT_LT((sums.array() - (n > 0 ? 1.0 : 0.0)).abs().maxCoeff(), double_gamma(2.0 * A_h.rows()))
          << "sequence " << b + 1;
    }
}

TEST(GradBlocks, MultiHeadAttentionWithOutputProjectionOverABatch) {
  AttentionLayer p;
  const ModelConfig& c = p.config;
  const int B = 2, l = 5;
  Rng rng(6);
  MatD Xt = random_matrix(rng, c.d_e, B * l);
  const MatD X0 = random_matrix(rng, c.d_e, B * l), R = random_matrix(rng, c.d_e, B * l);
  const Mask mask = unidirectional_mask(l, l);
  MHAttentionCache<double> cache;
  MatD X;
  auto f = [&] {
    X = X0;
    mh_attention_forward<double>(Xt, p.attn(), B, l, mask, cache, X);
    return dot(R, X);
  };
  f();
  // Each sequence's columns are Algorithm 5 on that sequence alone.
  for (int b = 0; b < B; ++b) {
    const MatD Xb = Xt.middleCols(b * l, l);
    const MatD want = X0.middleCols(b * l, l) + mh_attention<double>(Xb, Xb, p.attn(), mask);
    EXPECT_LT((X.middleCols(b * l, l) - want).cwiseAbs().maxCoeff(), kBlockDouble) << "sequence " << b + 1;
  }
  MHAttentionWorkspace<double> ws;
  MatD dXt(c.d_e, B * l);
  mh_attention_backward<double>(R, Xt, p.attn(), B, l, cache, ws, p.dattn(), dXt);
  EXPECT_LT(relative_error(dXt, numeric_gradient(Xt, f)), kTol);
  p.expect_gradients_match(f, dXt.norm());
}

// BERT (Alg. 9 L5) and the encoder (Alg. 8 L5): bidirectional self-attention over sequences of
// different lengths padded to ℓ, the padded keys masked.
TEST(GradBlocks, SelfAttentionWithKeyPaddingOverABatch) {
  AttentionLayer p;
  const ModelConfig& c = p.config;
  const int B = 3, l = 5;
  const std::vector<int> lengths{5, 2, 4};
  Rng rng(9);
  MatD Xt = random_matrix(rng, c.d_e, B * l);
  const MatD X0 = random_matrix(rng, c.d_e, B * l), R = random_matrix(rng, c.d_e, B * l);
  const Mask mask = bidirectional_mask(l, l);
  MHAttentionCache<double> cache;
  MHAttentionWorkspace<double> ws;
  MatD X, dXt(c.d_e, B * l);
  auto f = [&] {
    X = X0;
    mh_attention_forward<double>(Xt, p.attn(), B, l, mask, cache, X, &lengths);
    return dot(R, X);
  };
  // An earlier, unpadded step of the same shape leaves its values in the cache and the
  // workspace: none may leak into the padded step.
  X = X0;
  mh_attention_forward<double>(Xt, p.attn(), B, l, mask, cache, X);
  mh_attention_backward<double>(R, Xt, p.attn(), B, l, cache, ws, p.dattn(), dXt);
  f();
  // The real columns of each sequence are Algorithm 5 on that sequence alone, unpadded.
  for (int b = 0; b < B; ++b) {
    const int n = lengths[b];
    const MatD Xb = Xt.middleCols(b * l, n);
    const MatD want = X0.middleCols(b * l, n) + mh_attention<double>(Xb, Xb, p.attn(), bidirectional_mask(n, n));
    EXPECT_LT((X.middleCols(b * l, n) - want).cwiseAbs().maxCoeff(), kBlockDouble) << "sequence " << b + 1;
  }
  expect_padded_keys_get_zero_weight(cache.A, B, c.H, l, lengths);

  mh_attention_backward<double>(R, Xt, p.attn(), B, l, cache, ws, p.dattn(), dXt);
  EXPECT_LT(relative_error(dXt, numeric_gradient(Xt, f)), kTol);
  p.expect_gradients_match(f, dXt.norm());

  // With a gradient on the real columns only, the padding gets exactly none: the real columns
  // never see it.
  MatD R_real = R;
  for (int b = 0; b < B; ++b) R_real.middleCols(b * l + lengths[b], l - lengths[b]).setZero();
  mh_attention_backward<double>(R_real, Xt, p.attn(), B, l, cache, ws, p.dattn(), dXt);
  for (int b = 0; b < B; ++b)
    EXPECT_EQ(dXt.middleCols(b * l + lengths[b], l - lengths[b]).norm(), 0.0) << "sequence " << b + 1;
}

// Alg. 8 L16 over a batch: X ← X + MHAttention(X̃, Z | W^ed_l, Mask ≡ 1), queries ℓ_x = 4, contexts
// ℓ_z = 6 with Z's padding masked; the third context is empty (every key masked).
TEST(GradBlocks, CrossAttentionWithKeyPaddingOverABatch) {
  AttentionLayer p;
  const ModelConfig& c = p.config;
  const int B = 3, l_x = 4, l_z = 6;
  const std::vector<int> z_lengths{6, 3, 0};
  Rng rng(10);
  MatD Xt = random_matrix(rng, c.d_e, B * l_x), Z = random_matrix(rng, c.d_e, B * l_z);
  const MatD X0 = random_matrix(rng, c.d_e, B * l_x), R = random_matrix(rng, c.d_e, B * l_x);
  MHCrossAttentionCache<double> cache;
  MHCrossAttentionWorkspace<double> ws;
  MatD X, dXt(c.d_e, B * l_x), dZ(c.d_e, B * l_z);
  auto f = [&] {
    X = X0;
    mh_cross_attention_forward<double>(Xt, Z, p.attn(), B, l_x, l_z, cache, X, &z_lengths);
    return dot(R, X);
  };
  // An earlier, unpadded step of the same shape leaves its values in the cache and the
  // workspace: none may leak into the padded step.
  X = X0;
  mh_cross_attention_forward<double>(Xt, Z, p.attn(), B, l_x, l_z, cache, X);
  mh_cross_attention_backward<double>(R, Xt, Z, p.attn(), B, l_x, l_z, cache, ws, p.dattn(), dXt, dZ);
  f();
  // Pair b's columns are Algorithm 5 on (X̃_b, Z_b without its padding); with no keys, Y = 0.
  for (int b = 0; b < B; ++b) {
    const int n = z_lengths[b];
    const MatD Xb = Xt.middleCols(b * l_x, l_x), Zb = Z.middleCols(b * l_z, n);
    const MatD want = n > 0 ? MatD(X0.middleCols(b * l_x, l_x) +
                                   mh_attention<double>(Xb, Zb, p.attn(), bidirectional_mask(n, l_x)))
                            : MatD(X0.middleCols(b * l_x, l_x).colwise() + p.attn().b_o);
    EXPECT_LT((X.middleCols(b * l_x, l_x) - want).cwiseAbs().maxCoeff(), kBlockDouble) << "pair " << b + 1;
  }
  expect_padded_keys_get_zero_weight(cache.A, B, c.H, l_x, z_lengths);

  mh_cross_attention_backward<double>(R, Xt, Z, p.attn(), B, l_x, l_z, cache, ws, p.dattn(), dXt, dZ);
  EXPECT_LT(relative_error(dXt, numeric_gradient(Xt, f)), kTol);
  EXPECT_LT(relative_error(dZ, numeric_gradient(Z, f)), kTol);
  p.expect_gradients_match(f, dXt.norm());
  // Z's padding gets exactly no gradient; the empty context's queries none either.
  for (int b = 0; b < B; ++b)
    EXPECT_EQ(dZ.middleCols(b * l_z + z_lengths[b], l_z - z_lengths[b]).norm(), 0.0) << "pair " << b + 1;
  EXPECT_EQ(dXt.middleCols(2 * l_x, l_x).norm(), 0.0);
}

// One unpadded pair (B = 1, no key lengths) is exactly core's Algorithm 5, MHAttention(X̃, Z | W, 1).
TEST(GradBlocks, CrossAttentionOfOnePairIsAlgorithm5) {
  AttentionLayer p;
  const int l_x = 3, l_z = 7;
  Rng rng(11);
  const MatD Xt = random_matrix(rng, p.config.d_e, l_x), Z = random_matrix(rng, p.config.d_e, l_z);
  MHCrossAttentionCache<double> cache;
  MatD X = MatD::Zero(p.config.d_e, l_x);
  mh_cross_attention_forward<double>(Xt, Z, p.attn(), 1, l_x, l_z, cache, X);
  const MatD want = mh_attention<double>(Xt, Z, p.attn(), bidirectional_mask(l_z, l_x));
  EXPECT_LT((X - want).cwiseAbs().maxCoeff(), kBlockDouble);
}

void check_mlp(Activation act) {
  Rng rng(7);
  const int d_e = 5, d_mlp = 9, N = 6;
  MatD Xt = random_matrix(rng, d_e, N), W1 = random_matrix(rng, d_mlp, d_e), b1 = random_matrix(rng, d_mlp, 1);
  MatD W2 = random_matrix(rng, d_e, d_mlp), b2 = random_matrix(rng, d_e, 1);
  const MatD X0 = random_matrix(rng, d_e, N), R = random_matrix(rng, d_e, N);
  MlpCache<double> cache;
  MatD X, none;  // no W_gate, b_gate (not SwiGLU)
  auto f = [&] {
    X = X0;
    mlp_forward<double>(Xt, W1, b1, W2, b2, none, none, act, cache, X);
    return dot(R, X);
  };
  f();
  const MatD pre = (W1 * Xt).colwise() + b1.col(0);
  const MatD want =
      X0 + ((W2 * (act == Activation::GELU ? gelu<double>(pre) : relu<double>(pre))).colwise() + b2.col(0));
  EXPECT_LT((X - want).cwiseAbs().maxCoeff(), kBlockDouble);
  MlpWorkspace<double> ws;
  MatD dW1(d_mlp, d_e), db1(d_mlp, 1), dW2(d_e, d_mlp), db2(d_e, 1), dXt(d_e, N);
  mlp_backward<double>(R, Xt, W1, W2, none, act, cache, ws, dW1, db1, dW2, db2, none, none, dXt);
  EXPECT_LT(relative_error(dXt, numeric_gradient(Xt, f)), kTol);
  EXPECT_LT(relative_error(dW1, numeric_gradient(W1, f)), kTol);
  EXPECT_LT(relative_error(db1, numeric_gradient(b1, f)), kTol);
  EXPECT_LT(relative_error(dW2, numeric_gradient(W2, f)), kTol);
  EXPECT_LT(relative_error(db2, numeric_gradient(b2, f)), kTol);
}

TEST(GradBlocks, MlpWithExactGelu) { check_mlp(Activation::GELU); }
TEST(GradBlocks, MlpWithRelu) { check_mlp(Activation::ReLU); }

TEST(GradBlocks, GeluDerivativeIsPhiPlusXTimesDensity) {
  // One hidden unit with W_mlp1 = 1, b = 0, W_mlp2 = 1: ∂X/∂X̃ is GELU′ itself.
  for (double x : {-3.0, -1.0, -0.2, 0.0, 0.5, 2.0}) {
    MatD Xt = MatD::Constant(1, 1, x), one = MatD::Ones(1, 1), zero = MatD::Zero(1, 1), X = zero;
    MlpCache<double> cache;
    MatD none;
    mlp_forward<double>(Xt, one, zero, one, zero, none, none, Activation::GELU, cache, X);
    MlpWorkspace<double> ws;
    MatD dW1(1, 1), db1(1, 1), dW2(1, 1), db2(1, 1), dXt(1, 1);
    mlp_backward<double>(one, Xt, one, one, none, Activation::GELU, cache, ws, dW1, db1, dW2, db2, none, none, dXt);
    const double Phi = 0.5 * (1 + std::erf(x / std::sqrt(2.0))), phi = std::exp(-x * x / 2) / std::sqrt(2 * M_PI);
    // Φ + xφ on either side: erf or exp (k), a few products and sums (6): γ_{k+6}·(1 + |x|·φ ≤ 1.25).
    EXPECT_NEAR(dXt(0, 0), Phi + x * phi, 2 * double_gamma(kFunctionRoundings + 6) * 1.25) << "x = " << x;
  }
}

TEST(GradBlocks, UnembeddingSoftmaxAndLogLoss) {
  Rng rng(8);
  const int d_e = 4, N_V = 7, N = 5;
  MatD X = random_matrix(rng, d_e, N), W_u = random_matrix(rng, N_V, d_e, 2.0);
  const std::vector<int> targets{3, 7, 0, 1, 3};  // position 3 has no target
  Vec<double> weights(N);
  weights << 0.5, 1.0, 0.0, 2.0, 1.5;
  LossCache<double> cache;
  MatD no_bias;  // the paper's line: no b_u (the bias is tests/core/test_extras.cpp's)
  auto f = [&] { return loss_forward<double>(X, W_u, no_bias, targets, weights, cache); };
  const double loss = f();
  // The loss is Σ_t w_t · (−log softmax(W_u X)[y_t, t]).
  const MatD P = softmax_columns<double>(W_u * X);
  double want = 0;
  for (int t = 0; t < N; ++t)
    if (targets[t]) want -= weights(t) * std::log(P(targets[t] - 1, t));
  // The logits W_u X of d_e = 4 terms, summed maybe in another order: δz ≤ 2γ_4·Σ|terms|; each p then
  // moves by ≤ 2δz relative, plus the two softmaxes' own γ_{2k+N_V}; −log p by as much, plus the log's k·u.
  const double dz = 2 * double_gamma(d_e) * (W_u.cwiseAbs() * X.cwiseAbs()).maxCoeff();
  const double dp = 2 * dz + 2 * double_gamma(2 * kFunctionRoundings + N_V);
  const double dlog = dp + kFunctionRoundings * kDoubleU * (-P.array().log()).maxCoeff();
  EXPECT_NEAR(loss, want, weights.sum() * dlog);
  EXPECT_LT((cache.P - P).cwiseAbs().maxCoeff(), dp);
  EXPECT_EQ(cache.losses(2), 0.0);
  MatD dlogits, dW_u(N_V, d_e), dX(d_e, N);
  loss_backward<double>(X, W_u, targets, weights, cache, dlogits, dW_u, no_bias, dX);
  EXPECT_LT(relative_error(dW_u, numeric_gradient(W_u, f)), kTol);
  EXPECT_LT(relative_error(dX, numeric_gradient(X, f)), kTol);
  EXPECT_EQ(dX.col(2).norm(), 0.0);  // no target: no gradient
}

}  // namespace

}  // namespace test_grad_blocks
