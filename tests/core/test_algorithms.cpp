// Algorithms 1–7 (and the pieces they use: softmax, GELU, masks, sampling, the tokenizer and
// the configuration) against values worked out by hand on tiny inputs. Every expected number
// below comes from the arithmetic written in the comment next to it, not from running the code.
// Tolerances count the roundings of what each test computes (float_bounds.hpp: γ_n, the softmax's
// γ_{2k+n}, a double stored as float); the chains of the attention tests share kHandDouble.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <new>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/config.hpp"
#include "core/model/error.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/tokenizers/tokenizer.hpp"
#include "float_bounds.hpp"

namespace test_algorithms {

using namespace sf;
using namespace sf::test;

namespace {

using MatD = Mat<double>;
using VecD = Vec<double>;

MatD mat(int r, int c, std::initializer_list<double> row_major) {
  MatD m(r, c);
  auto it = row_major.begin();
  for (int i = 0; i < r; ++i)
    for (int j = 0; j < c; ++j) m(i, j) = *it++;
  return m;
}
VecD vec(std::initializer_list<double> v) {
  VecD out(static_cast<Eigen::Index>(v.size()));
  Eigen::Index i = 0;
  for (double x : v) out(i++) = x;
  return out;
}

// Storage for one head's W_qkv plus const views over it (the form the algorithms take).
struct HeadStore {
  MatD W_q, W_k, W_v;
  VecD b_q, b_k, b_v;
  AttentionHeadW<const double> view() const {
    return AttentionHeadW<const double>{MapM<const double>(W_q.data(), W_q.rows(), W_q.cols()),
                                        MapV<const double>(b_q.data(), b_q.size()),
                                        MapM<const double>(W_k.data(), W_k.rows(), W_k.cols()),
                                        MapV<const double>(b_k.data(), b_k.size()),
                                        MapM<const double>(W_v.data(), W_v.rows(), W_v.cols()),
                                        MapV<const double>(b_v.data(), b_v.size())};
  }
};

// Hand-worked values in double (u = 2⁻⁵³): each is a chain of at most about 20 roundings (a softmax
// of ≤ 3 is 2k + 3 = 11 of them with k = kFunctionRoundings, the scores' √2 and the weighted sums a
// few more) on values ≤ 16, so within γ_20·16 ≈ 4e-14 of exact; the test's own formula for the
// expected value rounds as much again.
const double kHandDouble = 2 * 16 * double_gamma(20);

MapM<const double> cmap(const MatD& m) { return MapM<const double>(m.data(), m.rows(), m.cols()); }
MapV<const double> cvec(const VecD& v) { return MapV<const double>(v.data(), v.size()); }

void expect_mat_near(const MatD& got, const MatD& want, double tol, const char* what) {
  ASSERT_EQ(got.rows(), want.rows()) << what;
  ASSERT_EQ(got.cols(), want.cols()) << what;
  for (Eigen::Index i = 0; i < want.rows(); ++i)
    for (Eigen::Index j = 0; j < want.cols(); ++j)
      EXPECT_NEAR(got(i, j), want(i, j), tol) << what << "[" << i + 1 << "," << j + 1 << "]";
}

// The (only) event of `tr` with this kind, algorithm and line.
const Event& find_event(const Trace& tr, EventKind kind, int alg, int line) {
  for (const auto& e : tr.events)
    if (e.kind == kind && e.alg == alg && e.line == line) return e;
  ADD_FAILURE() << "no event alg " << alg << " line " << line;
  static Event none;
  return none;
}
const Value* find_value(const Event& e, const std::string& name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  ADD_FAILURE() << "event alg " << e.alg << " line " << e.line << " has no value " << name;
  return nullptr;
}

bool is_neg_inf(double x) { return std::isinf(x) && std::signbit(x); }

}  // namespace

// ---------------------------------------------------------------------------------------------
// Algorithm 1 and 2: pick the 1-based column.

TEST(TokenEmbedding, PicksOneBasedColumn) {
  // W_e ∈ ℝ^{2×3}: column v is (v, 10v).
  const MatD W_e = mat(2, 3, {1, 2, 3,  //
                              10, 20, 30});
  for (int v = 1; v <= 3; ++v) {
    const VecD e = token_embedding<double>(v, cmap(W_e));
    ASSERT_EQ(e.size(), 2);
    EXPECT_EQ(e(0), v);       // W_e[1, v] = v
    EXPECT_EQ(e(1), 10 * v);  // W_e[2, v] = 10v
  }
}

TEST(TokenEmbedding, TraceHasEnterAndLine1) {
  const MatF W_e = (MatF(2, 3) << 1, 2, 3, 10, 20, 30).finished();
  Trace trace;
  Tracer tr(trace);
  const VecF e = token_embedding<float>(3, MapM<const float>(W_e.data(), 2, 3), &tr);
  EXPECT_EQ(e, (VecF(2) << 3, 30).finished());
  ASSERT_EQ(trace.size(), 2u);
  EXPECT_EQ(trace.events[0].kind, EventKind::Enter);
  EXPECT_EQ(trace.events[0].alg, 1);
  EXPECT_EQ(trace.events[0].values.at(0).name, "v");
  EXPECT_EQ(trace.events[0].values.at(0).m(0, 0), 3.0f);
  EXPECT_EQ(trace.events[1].kind, EventKind::Line);
  EXPECT_EQ(trace.events[1].line, 1);
  EXPECT_EQ(trace.events[1].values.at(0).name, "e");
  EXPECT_EQ(trace.events[1].values.at(0).m, (MatF(2, 1) << 3, 30).finished());
}

TEST(PositionalEmbedding, PicksOneBasedColumn) {
  // W_p ∈ ℝ^{2×4}: column ℓ is (ℓ, −ℓ).
  const MatD W_p = mat(2, 4, {1, 2, 3, 4,  //
                              -1, -2, -3, -4});
  for (int l = 1; l <= 4; ++l) {
    const VecD e = positional_embedding<double>(l, cmap(W_p));
    EXPECT_EQ(e(0), l);
    EXPECT_EQ(e(1), -l);
  }
}

// ---------------------------------------------------------------------------------------------
// Algorithm 3: basic single-query attention, 2-dimensional vectors.

TEST(BasicAttention, HandComputed) {
  // c = √2·ln 3, so that c/√d_attn = ln 3 with d_attn = 2.
  const double c = std::sqrt(2.0) * std::log(3.0);
  HeadStore w;
  w.W_q = mat(2, 2, {c, 0, 0, 0});
  w.b_q = vec({0, 1});
  w.W_k = mat(2, 2, {1, 0, 0, 0});
  w.b_k = vec({0, 2});
  w.W_v = mat(2, 2, {1, 2, 3, 4});
  w.b_v = vec({1, 1});
  const VecD e = vec({1, 0});
  const MatD E = mat(2, 2, {1, 0,  // e_1 = (1,0), e_2 = (0,1)
                            0, 1});
  Trace trace;
  Tracer tr(trace);
  const VecD vt = basic_attention<double>(e, E, w.view(), &tr);
  // L1: q = W_q e + b_q = (c, 0) + (0, 1) = (c, 1)
  // L2: k_1 = W_k e_1 + b_k = (1, 0) + (0, 2) = (1, 2);  k_2 = (0, 0) + (0, 2) = (0, 2)
  // L3: v_1 = W_v e_1 + b_v = (1, 3) + (1, 1) = (2, 4);  v_2 = (2, 4) + (1, 1) = (3, 5)
  // L4: qᵀk_1/√2 = (c + 2)/√2 = ln 3 + √2,  qᵀk_2/√2 = 2/√2 = √2
  //     α = (3e^{√2}, e^{√2}) / (4e^{√2}) = (3/4, 1/4)
  // L5: ṽ = 3/4·(2, 4) + 1/4·(3, 5) = (1.5 + 0.75, 3 + 1.25) = (2.25, 4.25)
  ASSERT_EQ(vt.size(), 2);
  EXPECT_NEAR(vt(0), 2.25, kHandDouble);
  EXPECT_NEAR(vt(1), 4.25, kHandDouble);
  // The trace stores float: each traced value is the double one rounded once more.
  const Value* q = find_value(find_event(trace, EventKind::Line, 3, 1), "q");
  ASSERT_TRUE(q);
  EXPECT_NEAR(q->m(0, 0), c, double_to_float_error(c));
  EXPECT_NEAR(q->m(1, 0), 1.0, double_to_float_error(1.0));
  const Value* k = find_value(find_event(trace, EventKind::Line, 3, 2), "k_t");
  ASSERT_TRUE(k);
  EXPECT_EQ(k->m, (MatF(2, 2) << 1, 0, 2, 2).finished());  // columns k_1 = (1,2), k_2 = (0,2)
  const Value* v = find_value(find_event(trace, EventKind::Line, 3, 3), "v_t");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->m, (MatF(2, 2) << 2, 3, 4, 5).finished());  // columns v_1 = (2,4), v_2 = (3,5)
  const Value* a = find_value(find_event(trace, EventKind::Line, 3, 4), "α_t");
  ASSERT_TRUE(a);
  EXPECT_NEAR(a->m(0, 0), 0.75, double_to_float_error(0.75));
  EXPECT_NEAR(a->m(1, 0), 0.25, double_to_float_error(0.25));
}

// ---------------------------------------------------------------------------------------------
// Algorithm 4: one attention head, d_attn = 2, ℓ = 3, hand-set W_qkv.

namespace {
// X = Z with columns x_1 = (1,0), x_2 = (0,1), x_3 = (1,1).
MatD attn_X() { return mat(2, 3, {1, 0, 1, 0, 1, 1}); }
HeadStore attn_W() {
  HeadStore w;
  w.W_q = mat(2, 2, {1, 0, 0, 1});  // W_q = I
  w.b_q = vec({1, 0});
  w.W_k = mat(2, 2, {1, 1, 0, 1});  // W_k = [[1,1],[0,1]]
  w.b_k = vec({0, 1});
  w.W_v = mat(2, 2, {2, 0, 0, 1});  // W_v = diag(2, 1)
  w.b_v = vec({0, 1});
  return w;
}
}  // namespace

TEST(Attention, UnidirectionalHandComputed) {
  const MatD X = attn_X();
  const HeadStore w = attn_W();
  const Mask mask = unidirectional_mask(3, 3);
  AttentionRecord<double> rec;
  Trace trace;
  Tracer tr(trace);
  const MatD Vt = attention<double>(X, X, w.view(), mask, &tr, &rec);

  // L1: Q = W_q X + b_q 1ᵀ = X + (1,0)ᵀ: q_1 = (2,0), q_2 = (1,1), q_3 = (2,1)
  expect_mat_near(rec.Q, mat(2, 3, {2, 1, 2, 0, 1, 1}), 0, "Q");
  // L2: K = W_k Z + b_k 1ᵀ: W_k x_1 = (1,0), W_k x_2 = (1,1), W_k x_3 = (2,1); + (0,1):
  //     k_1 = (1,1), k_2 = (1,2), k_3 = (2,2)
  expect_mat_near(rec.K, mat(2, 3, {1, 1, 2, 1, 2, 2}), 0, "K");
  // L3: V = W_v Z + b_v 1ᵀ: W_v x = (2x¹, x²); + (0,1): v_1 = (2,1), v_2 = (0,2), v_3 = (2,2)
  expect_mat_near(rec.V, mat(2, 3, {2, 0, 2, 1, 2, 2}), 0, "V");
  // L4: S = KᵀQ, S[t_z, t_x] = k_{t_z}·q_{t_x}:
  //     k_1·q = (2, 2, 3);  k_2·q = (2, 3, 4);  k_3·q = (4, 4, 6)
  const MatD S = mat(3, 3, {2, 2, 3,  //
                            2, 3, 4,  //
                            4, 4, 6});
  expect_mat_near(rec.S, S, 0, "S");
  // L5: Mask[t_z, t_x] = [[t_z ≤ t_x]]: below the diagonal becomes −∞.
  for (int tz = 0; tz < 3; ++tz)
    for (int tx = 0; tx < 3; ++tx) {
      if (tz > tx) {
        EXPECT_TRUE(std::isinf(rec.S_masked(tz, tx)) && std::signbit(rec.S_masked(tz, tx)))
            << "S_masked[" << tz + 1 << "," << tx + 1 << "] = " << rec.S_masked(tz, tx);
      } else {
        EXPECT_EQ(rec.S_masked(tz, tx), S(tz, tx));
      }
    }
  // L6: softmax(S/√2), column by column:
  //   column 1: only t_z = 1 survives → (1, 0, 0)
  //   column 2: (2, 3)/√2 → a = 1/(1 + e^{1/√2}), b = e^{1/√2}/(1 + e^{1/√2}), 0
  //   column 3: (3, 4, 6)/√2 → ∝ (1, e^{1/√2}, e^{3/√2})
  const double r = std::exp(1 / std::sqrt(2.0)), r3 = std::exp(3 / std::sqrt(2.0));
  const double a = 1 / (1 + r), b = r / (1 + r);
  const double z = 1 + r + r3, w1 = 1 / z, w2 = r / z, w3 = r3 / z;
  const MatD A = mat(3, 3, {1, a, w1,  //
                            0, b, w2,  //
                            0, 0, w3});
  expect_mat_near(rec.A, A, kHandDouble, "softmax(S/√d_attn)");
  for (int tz = 0; tz < 3; ++tz)
    for (int tx = 0; tx < tz; ++tx) EXPECT_EQ(rec.A(tz, tx), 0.0) << "masked weight must be exactly 0";
  //   Ṽ = V·A: column 1 = v_1 = (2,1); column 2 = a·(2,1) + b·(0,2) = (2a, a + 2b);
  //   column 3 = w1·(2,1) + w2·(0,2) + w3·(2,2) = (2w1 + 2w3, w1 + 2w2 + 2w3)
  const MatD want = mat(2, 3, {2, 2 * a, 2 * w1 + 2 * w3,  //
                               1, a + 2 * b, w1 + 2 * w2 + 2 * w3});
  expect_mat_near(Vt, want, kHandDouble, "Ṽ");
  expect_mat_near(rec.Vt, want, kHandDouble, "rec.Vt");

  // The trace: line 4 binds the raw S, line 5 the masked S (exactly −∞ where Mask is 0).
  const Value* S4 = find_value(find_event(trace, EventKind::Line, 4, 4), "S");
  const Value* S5 = find_value(find_event(trace, EventKind::Line, 4, 5), "S");
  ASSERT_TRUE(S4 && S5);
  EXPECT_EQ(S4->m(2, 0), 4.0f);
  EXPECT_TRUE(std::isinf(S5->m(2, 0)) && std::signbit(S5->m(2, 0)));
  EXPECT_EQ(S5->m(0, 2), 3.0f);
  const Value* A6 = find_value(find_event(trace, EventKind::Line, 4, 6), "softmax(S/√d_attn)");
  ASSERT_TRUE(A6);
  EXPECT_EQ(A6->m(1, 0), 0.0f);
  EXPECT_NEAR(A6->m(1, 1), b, double_to_float_error(b));  // the trace's float of a double
}

TEST(Attention, BidirectionalCrossAttentionShapes) {
  // ℓ_x = 2 primary tokens, ℓ_z = 3 context tokens, Mask ≡ 1; W_q = 0 so every score is 0:
  // the weights are uniform 1/3 and Ṽ's columns are the mean of V's columns.
  HeadStore w = attn_W();
  w.W_q.setZero();
  w.b_q.setZero();
  const MatD X = mat(2, 2, {5, 6, 7, 8});
  const MatD Z = attn_X();
  AttentionRecord<double> rec;
  const MatD Vt = attention<double>(X, Z, w.view(), bidirectional_mask(3, 2), nullptr, &rec);
  EXPECT_EQ(rec.S.rows(), 3);
  EXPECT_EQ(rec.S.cols(), 2);
  // V columns (2,1), (0,2), (2,2) (as above): mean = (4/3, 5/3)
  expect_mat_near(Vt, mat(2, 2, {4.0 / 3, 4.0 / 3, 5.0 / 3, 5.0 / 3}), kHandDouble, "Ṽ");
  expect_mat_near(rec.A, MatD::Constant(3, 2, 1.0 / 3), kHandDouble, "A");
}

TEST(Attention, WrongMaskShapeThrows) {
  const MatD X = attn_X();
  EXPECT_THROW(attention<double>(X, X, attn_W().view(), unidirectional_mask(2, 3)), Error);
}

// ---------------------------------------------------------------------------------------------
// Algorithm 5: H = 2 heads, d_mid = 2; Y = [Y^1; Y^2], then W_o Y + b_o 1ᵀ.

TEST(MHAttention, TwoHeadsConcatenationOrderAndOutputProjection) {
  // Both heads have W_q = 0, b_q = 0, so every score is 0; with the unidirectional mask column 1
  // attends to token 1 only and column 2 to tokens 1 and 2 with weight 1/2 each.
  // X columns: x_1 = (1, 2), x_2 = (3, 6).
  const MatD X = mat(2, 2, {1, 3, 2, 6});
  HeadStore h1, h2;
  for (HeadStore* h : {&h1, &h2}) {
    h->W_q = MatD::Zero(2, 2);
    h->b_q = VecD::Zero(2);
    h->W_k = mat(2, 2, {1, 2, 3, 4});
    h->b_k = vec({1, 1});
  }
  h1.W_v = mat(2, 2, {1, 0, 0, 0});  // V^1 = (x¹, −1)
  h1.b_v = vec({0, -1});
  h2.W_v = mat(2, 2, {0, 1, 0, 0});  // V^2 = (x² + 10, 5)
  h2.b_v = vec({10, 5});
  const MatD W_o = mat(2, 4, {1, 2, 0, 0,  //
                              0, 0, 1, -1});
  const VecD b_o = vec({0.5, 0});
  MHAttentionW<const double> W;
  W.heads.push_back(h1.view());
  W.heads.push_back(h2.view());
  new (&W.W_o) MapM<const double>(W_o.data(), 2, 4);
  new (&W.b_o) MapV<const double>(b_o.data(), 2);

  std::vector<AttentionRecord<double>> recs;
  Trace trace;
  Tracer tr(trace);
  const MatD out = mh_attention<double>(X, X, W, unidirectional_mask(2, 2), &tr, &recs);
  // Head 1: V^1 = [[1, 3], [−1, −1]] → Y^1 = [[1, (1+3)/2], [−1, −1]] = [[1, 2], [−1, −1]]
  // Head 2: V^2 = [[12, 16], [5, 5]]  → Y^2 = [[12, 14], [5, 5]]
  // Y = [Y^1; Y^2] = [[1, 2], [−1, −1], [12, 14], [5, 5]]
  // W_o Y + b_o: row 1 = Y[1] + 2·Y[2] + 0.5 = (1 − 2 + 0.5, 2 − 2 + 0.5) = (−0.5, 0.5)
  //              row 2 = Y[3] − Y[4]         = (12 − 5, 14 − 5)         = (7, 9)
  expect_mat_near(out, mat(2, 2, {-0.5, 0.5, 7, 9}), kHandDouble, "MHAttention");
  ASSERT_EQ(recs.size(), 2u);
  expect_mat_near(recs[0].Vt, mat(2, 2, {1, 2, -1, -1}), kHandDouble, "Y^1");
  expect_mat_near(recs[1].Vt, mat(2, 2, {12, 14, 5, 5}), kHandDouble, "Y^2");
  // Masked weight of head 2 (t_z = 2, t_x = 1) is exactly 0, S there exactly −∞.
  EXPECT_EQ(recs[1].A(1, 0), 0.0);
  EXPECT_TRUE(is_neg_inf(recs[1].S_masked(1, 0)));

  const Value* Y = find_value(find_event(trace, EventKind::Line, 5, 3), "Y");
  ASSERT_TRUE(Y);
  EXPECT_EQ(Y->m, (MatF(4, 2) << 1, 2, -1, -1, 12, 14, 5, 5).finished());
  // Line 2 is emitted once per head with h in force and Y^h named by its head.
  int line2 = 0;
  for (const auto& e : trace.events)
    if (e.kind == EventKind::Line && e.alg == 5 && e.line == 2) {
      ++line2;
      EXPECT_EQ(e.idx.h, line2);
      ASSERT_EQ(e.values.size(), 1u);
      EXPECT_EQ(e.values[0].name, "Y^" + std::to_string(line2));
    }
  EXPECT_EQ(line2, 2);
}

// ---------------------------------------------------------------------------------------------
// Algorithm 6: layer_norm on e = (1, 2, 3, 4).

namespace {
const VecD kGamma = vec({1, 2, 0.5, -1});
const VecD kBeta = vec({0, 1, -1, 2});
// m, e − m and v are exact (sums of small integers and halves, divided by 4), so is ⊙γ (powers of
// 2): only √(v + ε), the division and + β round, on values ≤ 1.35, so γ_3·1.35; the constants
// below are printed as repr (repr_rounding, ≤ u·1.35).
const double kLayerNormError = (double_gamma(3) + kDoubleU) * 1.35;
}  // namespace

TEST(LayerNorm, EpsZero) {
  // m = 10/4 = 2.5; e − m = (−1.5, −0.5, 0.5, 1.5); v = (2.25 + 0.25 + 0.25 + 2.25)/4 = 1.25
  // √1.25 = 1.118033988749895; (e − m)/√v = (−1.3416407864998738, −0.4472135954999579, +, +)
  // ⊙γ + β: (−1.3416407864998738·1 + 0, −0.4472135954999579·2 + 1, 0.4472135954999579·0.5 − 1,
  //          1.3416407864998738·(−1) + 2)
  //       = (−1.3416407864998738, 0.1055728090000842, −0.7763932022500210, 0.6583592135001262)
  Trace trace;
  Tracer tr(trace);
  const VecD out = layer_norm<double>(vec({1, 2, 3, 4}), cvec(kGamma), cvec(kBeta), 0.0, &tr);
  EXPECT_NEAR(out(0), -1.3416407864998738, kLayerNormError);
  EXPECT_NEAR(out(1), 0.1055728090000842, kLayerNormError);
  EXPECT_NEAR(out(2), -0.7763932022500210, kLayerNormError);
  EXPECT_NEAR(out(3), 0.6583592135001262, kLayerNormError);
  const Value* m = find_value(find_event(trace, EventKind::Line, 6, 1), "m");
  const Value* v = find_value(find_event(trace, EventKind::Line, 6, 2), "v");
  ASSERT_TRUE(m && v);
  EXPECT_EQ(m->m(0, 0), 2.5f);
  EXPECT_EQ(v->m(0, 0), 1.25f);
}

TEST(LayerNorm, EpsPositive) {
  // ε = 0.75: √(v + ε) = √2; (e − m)/√2 = (−1.0606601717798212, −0.3535533905932738, +, +)
  // ⊙γ + β = (−1.0606601717798212, −0.7071067811865476 + 1, 0.1767766952966369 − 1,
  //           −1.0606601717798212 + 2)
  //        = (−1.0606601717798212, 0.2928932188134524, −0.8232233047033631, 0.9393398282201788)
  const VecD out = layer_norm<double>(vec({1, 2, 3, 4}), cvec(kGamma), cvec(kBeta), 0.75);
  EXPECT_NEAR(out(0), -1.0606601717798212, kLayerNormError);  // v + ε = 2 is exact too
  EXPECT_NEAR(out(1), 0.2928932188134524, kLayerNormError);
  EXPECT_NEAR(out(2), -0.8232233047033631, kLayerNormError);
  EXPECT_NEAR(out(3), 0.9393398282201788, kLayerNormError);
}

TEST(LayerNorm, ConstantColumn) {
  // e = (5,5,5,5): m = 5, v = 0. With ε > 0: (e − m)/√ε = 0, so ê = β exactly.
  const VecD e = VecD::Constant(4, 5.0);
  const VecD out = layer_norm<double>(e, cvec(kGamma), cvec(kBeta), 1e-5);
  for (int i = 0; i < 4; ++i) {
    EXPECT_TRUE(std::isfinite(out(i)));
    EXPECT_EQ(out(i), kBeta(i));
  }
  // The paper's form (ε = 0) divides 0 by 0: that is why ε exists.
  const VecD paper = layer_norm<double>(e, cvec(kGamma), cvec(kBeta), 0.0);
  EXPECT_TRUE(std::isnan(paper(0)));
}

TEST(LayerNorm, ColumnsAreIndependentAndTraced) {
  // Column 1 = (1,2,3,4) (as in EpsZero), column 2 = (5,5,5,5) (ê = β), column 3 = 10·(1,2,3,4)
  // (layer_norm is scale invariant up to ε; with ε = 0 column 3 equals column 1).
  MatD X(4, 3);
  X.col(0) = vec({1, 2, 3, 4});
  X.col(1) = VecD::Constant(4, 5.0);
  X.col(2) = 10 * vec({1, 2, 3, 4});
  Trace trace;
  Tracer tr(trace);
  const MatD out = layer_norm_columns<double>(X, cvec(kGamma), cvec(kBeta), 1e-30, &tr);
  // Column 1: 1.25 + 1e-30 rounds to 1.25, so EpsZero's bound; column 2: e − m = 0, so β exactly;
  // column 3: another √ and division (m = 25, v = 125 exact), each column within γ_3·1.35 of exact.
  EXPECT_NEAR(out(0, 0), -1.3416407864998738, kLayerNormError);
  EXPECT_NEAR(out(3, 0), 0.6583592135001262, kLayerNormError);
  for (int i = 0; i < 4; ++i) EXPECT_EQ(out(i, 1), kBeta(i));
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(out(i, 2), out(i, 0), 2 * double_gamma(3) * 1.35);
  // One Enter + 3 lines per column, with t = 1, 2, 3 in force.
  ASSERT_EQ(trace.size(), 12u);
  for (int t = 1; t <= 3; ++t) {
    EXPECT_EQ(trace.events[4 * (t - 1)].kind, EventKind::Enter);
    for (int j = 0; j < 4; ++j) EXPECT_EQ(trace.events[4 * (t - 1) + j].idx.t, t);
  }
}

// ---------------------------------------------------------------------------------------------
// Algorithm 7: unembedding.

TEST(Unembedding, HandComputed) {
  // W_u = [[1,0],[0,1],[1,1]], e = (ln 2, 0): W_u e = (ln 2, 0, ln 2); exp = (2, 1, 2); p = (0.4, 0.2, 0.4)
  const MatD W_u = mat(3, 2, {1, 0, 0, 1, 1, 1});
  const VecD p = unembedding<double>(vec({std::log(2.0), 0}), cmap(W_u));
  ASSERT_EQ(p.size(), 3);
  // The softmax of 3 in double: γ_{2k+3} relative (float_softmax_error's count; ln 2's rounding, u/2
  // of the exponent, is inside), plus 0.4's and 0.2's own rounding to double (u·p).
  for (int i = 0; i < 3; ++i) {
    const double want = i == 1 ? 0.2 : 0.4;
    EXPECT_NEAR(p(i), want, (double_gamma(2 * kFunctionRoundings + 3) + kDoubleU) * want);
  }
}

// ---------------------------------------------------------------------------------------------
// Eq. (2), (3), (5): softmax of columns, masks, GELU.

TEST(Softmax, ColumnsHandComputed) {
  const double ninf = neg_inf<double>();
  // column 1: (0, 0, −∞)      → (1/2, 1/2, 0)
  // column 2: (ln 3, 0, −∞)   → (3/4, 1/4, 0)
  // column 3: all −∞          → zeros (no distribution)
  // column 4: (1000, 1000, 999+ln 2) → ∝ (1, 1, 2/e) (no overflow: the max is subtracted)
  MatD A(3, 4);
  A << 0, std::log(3.0), ninf, 1000,  //
      0, 0, ninf, 1000,               //
      ninf, ninf, ninf, 999 + std::log(2.0);
  const MatD P = softmax_columns<double>(A);
  // Each p within γ_{2k+3}·p of exact (the softmax of 3, in double); column 2's ln 3 rounds (u·ln 3 on
  // the exponent, so u·ln 3·p), column 4's 999 + ln 2 rounds at 1000's scale (u·1000 on the
  // exponent, which moves p by ≤ 2·u·1000·p).
  const double p_error = double_gamma(2 * kFunctionRoundings + 3);
  EXPECT_NEAR(P(0, 0), 0.5, p_error * 0.5);
  EXPECT_NEAR(P(1, 0), 0.5, p_error * 0.5);
  EXPECT_EQ(P(2, 0), 0.0);  // −∞ → exactly 0
  EXPECT_NEAR(P(0, 1), 0.75, (p_error + 2 * kDoubleU * std::log(3.0)) * 0.75);
  EXPECT_NEAR(P(1, 1), 0.25, (p_error + 2 * kDoubleU * std::log(3.0)) * 0.25);
  EXPECT_EQ(P(2, 1), 0.0);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(P(i, 2), 0.0);
  const double z = 2 + 2 / std::exp(1.0);
  const double big_exponent = 2 * kDoubleU * 1000;
  // (z itself: a few roundings, inside p_error's γ_11.)
  EXPECT_NEAR(P(0, 3), 1 / z, 2 * (p_error + big_exponent) / z);
  EXPECT_NEAR(P(2, 3), 2 / std::exp(1.0) / z, 2 * (p_error + big_exponent) * 2 / std::exp(1.0) / z);
  // Σ p: each p = e_i/S with S the rounded sum of the same e_i, so Σ_i e_i/S is 1 within γ_{n−1} + u;
  // summing the n rounded p adds γ_{n−1}: γ_{2n−1}, whatever the exps' error.
  for (int c : {0, 1, 3}) EXPECT_NEAR(P.col(c).sum(), 1.0, double_gamma(2 * 3 - 1));

  const MatF Pf = softmax_columns<float>(A.cast<float>());
  EXPECT_EQ(Pf(2, 0), 0.0f);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(Pf(i, 2), 0.0f);
  EXPECT_NEAR(Pf.col(3).sum(), 1.0f, float_gamma(2 * 3 - 1));  // as in double, at float's u
}

TEST(Softmax, MaskedEntriesOfLongColumnsAreExactlyZero) {
  // Long columns take Eigen's vectorised exp, which clamps its input: exp(−∞) must still
  // give weight exactly 0, in float and in double. Column c has its first c+1 entries finite
  // (0, 1, 2, …) and the rest −∞: the finite part is softmax of (0, 1, …, c).
  const int n = 37;
  MatD A = MatD::Constant(n, n, neg_inf<double>());
  for (int c = 0; c < n; ++c)
    for (int r = 0; r <= c; ++r) A(r, c) = r;
  const MatD P = softmax_columns<double>(A);
  const MatF Pf = softmax_columns<float>(A.cast<float>());
  for (int c = 0; c < n; ++c) {
    double z = 0;
    for (int r = 0; r <= c; ++r) z += std::exp(r - c);
    // Core's softmax of n = c + 1 (γ_{2k+n}·p) against z summed here (n exps: γ_{k+n}·p).
    const int n_c = c + 1;
    EXPECT_NEAR(P(c, c), 1 / z, 2 * double_gamma(2 * kFunctionRoundings + n_c) / z);
    EXPECT_NEAR(P.col(c).sum(), 1.0, double_gamma(2 * n_c - 1));  // Σ p: as in ColumnsHandComputed
    for (int r = c + 1; r < n; ++r) {
      EXPECT_EQ(P(r, c), 0.0) << "double [" << r + 1 << "," << c + 1 << "]";
      EXPECT_EQ(Pf(r, c), 0.0f) << "float [" << r + 1 << "," << c + 1 << "]";
    }
  }
}

TEST(Gelu, ExactErfValues) {
  // GELU(x) = x·Φ(x): Φ(1) = 0.8413447460685429, Φ(−1) = 0.15865525393145707,
  // Φ(2) = 0.9772498680518208, Φ(−3) = 0.0013498980316301, Φ(0.5) = 0.6914624612740131.
  const MatD x = mat(1, 6, {1, -1, 2, -3, 0.5, 0});
  const MatD g = gelu<double>(x);
  // x·½(1 + erf(x/√2)): erf's error is absolute (1 + erf cancels for x < 0), so |x|·γ_{k+3} (as in
  // test_trace.cpp), plus the printed constant's rounding (repr).
  const auto gelu_error = [](double x, double printed) {
    return std::abs(x) * double_gamma(kFunctionRoundings + 3) + repr_rounding(printed);
  };
  EXPECT_NEAR(g(0, 0), 0.8413447460685429, gelu_error(1, 0.8413447460685429));
  EXPECT_NEAR(g(0, 1), -0.15865525393145707, gelu_error(-1, 0.15865525393145707));
  EXPECT_NEAR(g(0, 2), 1.9544997361036416, gelu_error(2, 1.9544997361036416));
  EXPECT_NEAR(g(0, 3), -0.00404969409489031, gelu_error(-3, 0.00404969409489031));
  EXPECT_NEAR(g(0, 4), 0.34573123063700656, gelu_error(0.5, 0.34573123063700656));
  EXPECT_EQ(g(0, 5), 0.0);
  // Not the tanh approximation: 0.5·1·(1 + tanh(√(2/π)(1 + 0.044715))) = 0.8411919906082768.
  EXPECT_GT(std::abs(g(0, 0) - 0.8411919906082768), 1e-4);
  const MatF gf = gelu<float>(x.cast<float>());
  EXPECT_NEAR(gf(0, 0), 0.8413447460685429, float_gamma(kFunctionRoundings + 3));  // |x| = 1
  EXPECT_NEAR(gf(0, 1), -0.15865525393145707, float_gamma(kFunctionRoundings + 3));
}

TEST(Relu, Values) {
  const MatD r = relu<double>(mat(1, 3, {-2, 0, 3}));
  EXPECT_EQ(r, mat(1, 3, {0, 0, 3}));
}

TEST(Masks, Unidirectional) {
  // Mask[t_z, t_x] = [[t_z ≤ t_x]]: row t_z, column t_x; ones on and above the diagonal.
  const Mask m = unidirectional_mask(3, 3);
  Mask want(3, 3);
  want << 1, 1, 1,  //
      0, 1, 1,      //
      0, 0, 1;
  EXPECT_EQ(m, want);
  const Mask r = unidirectional_mask(2, 3);  // ℓ_z = 2, ℓ_x = 3
  Mask want_r(2, 3);
  want_r << 1, 1, 1,  //
      0, 1, 1;
  EXPECT_EQ(r, want_r);
}

TEST(Masks, Bidirectional) {
  const Mask m = bidirectional_mask(2, 3);
  EXPECT_EQ(m.rows(), 2);
  EXPECT_EQ(m.cols(), 3);
  EXPECT_TRUE((m.array() == 1).all());
}

// ---------------------------------------------------------------------------------------------
// Sampling (Alg. 14 line 5): q ∝ p^{1/τ}.

TEST(Sampling, TemperatureOneIsIdentity) {
  const VecF p = (VecF(4) << 0.1f, 0.2f, 0.3f, 0.4f).finished();
  const VecF q = temperature(p, 1.0);
  // q is computed in double from the float p and stored as float (exp(log p) rounds a few times in double).
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(q(i), p(i), double_to_float_error(p(i)));
}

TEST(Sampling, TemperatureZeroIsArgmaxOneHot) {
  const VecF p = (VecF(4) << 0.1f, 0.2f, 0.4f, 0.3f).finished();
  EXPECT_EQ(temperature(p, 0.0), (VecF(4) << 0, 0, 1, 0).finished());
  // The limit τ → 0: p₃/p₄ = 4/3, (3/4)^{1/0.001} underflows to 0.
  const VecF q = temperature(p, 1e-3);
  // In double (3/4)^1000 ≈ 1e-125: 1 + 1e-125 is 1, and 1e-125 is 0 as a float (below 1.4e-45).
  EXPECT_EQ(q(2), 1.0f);
  EXPECT_EQ(q(3), 0.0f);
}

TEST(Sampling, TemperatureTwoFlattens) {
  // τ = 2: q ∝ √p; p = (0.64, 0.16, 0.16, 0.04) → √p = (0.8, 0.4, 0.4, 0.2), Σ = 1.8
  // q = (4/9, 2/9, 2/9, 1/9)
  const VecF p = (VecF(4) << 0.64f, 0.16f, 0.16f, 0.04f).finished();
  const VecF q = temperature(p, 2.0);
  // The float p (0.64f is u·0.64 from 0.64) moves √p by u/2 relative and the sum by as much: u·q;
  // then the double's q stored as float.
  const double want[] = {4.0 / 9, 2.0 / 9, 2.0 / 9, 1.0 / 9};
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(q(i), want[i], kFloatU * want[i] + double_to_float_error(want[i]));
  EXPECT_LT(q.maxCoeff(), p.maxCoeff());
  EXPECT_GT(q.minCoeff(), p.minCoeff());
  // τ → ∞: uniform.
  const VecF u = temperature(p, 1e6);
  // w_i = exp((log p_i − max)/τ) = 1 − δ_i with 0 ≤ δ_i ≤ ln(0.64/0.04)/τ = 2.8e-6: q_i = ¼ within ¼·2.8e-6.
  for (int i = 0; i < 4; ++i) EXPECT_NEAR(u(i), 0.25, 0.25 * std::log(16.0) / 1e6 + double_to_float_error(0.25));
}

TEST(Sampling, MultinomialWithGivenCoins) {
  // q = (1/4, 1/2, 1/4): cumulative 1/4, 3/4, 1. A coin in [0, 1/4) picks 1, [1/4, 3/4) picks 2,
  // [3/4, 1) picks 3.
  const VecF q = (VecF(3) << 0.25f, 0.5f, 0.25f).finished();
  EXPECT_EQ(sample_mult(q, 0.0), 1);
  EXPECT_EQ(sample_mult(q, 0.2499), 1);
  EXPECT_EQ(sample_mult(q, 0.25), 2);
  EXPECT_EQ(sample_mult(q, 0.7499), 2);
  EXPECT_EQ(sample_mult(q, 0.75), 3);
  EXPECT_EQ(sample_mult(q, 0.9999), 3);
  // A zero entry is never drawn.
  EXPECT_EQ(sample_mult((VecF(2) << 0.0f, 1.0f).finished(), 0.0), 2);
  // Rounding (Σq < 1): the last token with q > 0.
  EXPECT_EQ(sample_mult((VecF(3) << 0.5f, 0.4f, 0.0f).finished(), 0.95), 2);
}

TEST(Sampling, ArgmaxTiesGoToFirst) {
  EXPECT_EQ(sample_argmax((VecF(3) << 0.3f, 0.3f, 0.2f).finished()), 1);
  EXPECT_EQ(sample_argmax((VecF(3) << 0.1f, 0.4f, 0.4f).finished()), 2);
  EXPECT_EQ(sample_argmax((VecF(3) << 0.1f, 0.2f, 0.7f).finished()), 3);
}

// ---------------------------------------------------------------------------------------------
// Tokenizer (§4): 1-based ids, then mask_token = N_V−2, bos_token = N_V−1, eos_token = N_V.

namespace {
ModelConfig abc_config() {
  ModelConfig c;
  c.vocab = {"a", "b", "c", "é"};  // N_V = 7
  return c;
}
std::string message_of(const std::function<void()>& f) {
  try {
    f();
  } catch (const Error& e) {
    return e.what();
  }
  ADD_FAILURE() << "expected sf::Error";
  return "";
}
}  // namespace

TEST(Tokenizer, IdsAreOneBasedWithSpecialsAtTheEnd) {
  const CharTokenizer tok(abc_config());
  EXPECT_EQ(tok.N_V(), 7);
  EXPECT_EQ(tok.mask_token(), 5);
  EXPECT_EQ(tok.bos_token(), 6);
  EXPECT_EQ(tok.eos_token(), 7);
  EXPECT_EQ(tok.encode("cabé"), (Tokens{3, 1, 2, 4}));
  EXPECT_EQ(tok.encode(""), Tokens{});
  EXPECT_EQ(tok.encode_sequence("ab", true), (Tokens{6, 1, 2, 7}));
  EXPECT_EQ(tok.encode_sequence("ab", false), (Tokens{6, 1, 2}));
  EXPECT_EQ(tok.label(1), "a");
  EXPECT_EQ(tok.label(4), "é");
  EXPECT_EQ(tok.label(5), "<mask>");
  EXPECT_EQ(tok.label(6), "<bos>");
  EXPECT_EQ(tok.label(7), "<eos>");
  EXPECT_EQ(tok.label(0), "?");
  EXPECT_EQ(tok.label(8), "?");
  EXPECT_EQ(tok.decode({6, 3, 4, 7}), "<bos>cé<eos>");
  EXPECT_EQ(tok.decode_text({6, 3, 4, 7}), "cé");
  // The model config agrees.
  EXPECT_EQ(abc_config().N_V(), 7);
  EXPECT_EQ(abc_config().eos_token(), 7);
}

TEST(Tokenizer, UnknownCharacterNamesCharacterAndPosition) {
  const CharTokenizer tok(abc_config());
  // "aéxb": x is the 3rd character (byte 3, since é takes two bytes).
  const auto bad = tok.unknown("aéxb");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_EQ(bad[0].position, 3u);
  EXPECT_EQ(bad[0].byte, 3u);
  EXPECT_EQ(bad[0].chr, "x");
  const std::string msg = message_of([&] { tok.encode("aéxb"); });
  EXPECT_NE(msg.find("\"x\""), std::string::npos) << msg;
  EXPECT_NE(msg.find("position 3"), std::string::npos) << msg;
  const std::string tab = message_of([&] { tok.encode("a\tb"); });
  EXPECT_NE(tab.find("U+0009"), std::string::npos) << tab;
  EXPECT_NE(tab.find("position 2"), std::string::npos) << tab;
}

TEST(Tokenizer, ParseIds) {
  const CharTokenizer tok(abc_config());
  EXPECT_EQ(tok.parse_ids("3,1,4"), (Tokens{3, 1, 4}));
  EXPECT_EQ(tok.parse_ids("7"), (Tokens{7}));
  EXPECT_EQ(tok.parse_ids(" 2, 5"), (Tokens{2, 5}));
  EXPECT_NE(message_of([&] { tok.parse_ids("1,x"); }).find("\"x\""), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids("1,2.5"); }).find("not an integer"), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids("1,,2"); }).find("not an integer"), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids("0"); }).find("outside [1, N_V] = [1, 7]"), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids("8"); }).find("id 8"), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids("-1"); }).find("outside"), std::string::npos);
  EXPECT_NE(message_of([&] { tok.parse_ids(""); }).find("empty"), std::string::npos);
}

// ---------------------------------------------------------------------------------------------
// Configuration JSON.

TEST(Config, JsonRoundTrip) {
  ModelConfig c;
  c.L = 3;
  c.H = 5;
  c.d_e = 20;
  c.d_attn = 7;
  c.d_mid = 6;
  c.d_mlp = 33;
  c.l_max = 17;
  c.eps = 0.125f;
  c.position = Position::Rope;
  c.rope_base = 500;
  c.norm = Norm::RmsNorm;
  c.activation = Activation::SwiGLU;
  c.H_kv = 1;
  c.tied_unembedding = true;
  c.norm_position = NormPosition::Post;
  c.d_attn = 8;
  c.vocab = {"x", "é", "\"", " ", "😀"};
  const ModelConfig d = config_from_json(to_json(c));
  EXPECT_EQ(d.arch, "gpt");
  EXPECT_EQ(d.L, 3);
  EXPECT_EQ(d.H, 5);
  EXPECT_EQ(d.d_e, 20);
  EXPECT_EQ(d.d_attn, 8);
  EXPECT_EQ(d.d_mid, 6);
  EXPECT_EQ(d.d_mlp, 33);
  EXPECT_EQ(d.l_max, 17);
  EXPECT_EQ(d.eps, 0.125f);
  EXPECT_EQ(d.position, Position::Rope);
  EXPECT_EQ(d.rope_base, 500);
  EXPECT_EQ(d.norm, Norm::RmsNorm);
  EXPECT_EQ(d.act(), Activation::SwiGLU);
  EXPECT_EQ(d.kv_heads(), 1);
  EXPECT_TRUE(d.tied_unembedding);
  EXPECT_EQ(d.norm_pos(), NormPosition::Post);
  EXPECT_EQ(d.vocab, c.vocab);
  EXPECT_EQ(d.N_V(), 8);
  // Defaults survive too; the default vocabulary has 61 characters (N_V = 64).
  const ModelConfig def = config_from_json(to_json(ModelConfig{}));
  EXPECT_EQ(def.vocab, ModelConfig::default_vocab());
  EXPECT_EQ(def.N_V(), 64);
  EXPECT_EQ(validate(ModelConfig{}), "");
  // A partial object fills in the defaults; vocab may be a string of characters; N_V may be given.
  const ModelConfig p = config_from_json(R"({"L": 1, "vocab": "abé", "N_V": 6})");
  EXPECT_EQ(p.L, 1);
  EXPECT_EQ(p.H, ModelConfig{}.H);
  EXPECT_EQ(p.vocab, (std::vector<std::string>{"a", "b", "é"}));
}

TEST(Config, ValidationErrors) {
  auto err = [](const std::string& json) { return message_of([&] { config_from_json(json); }); };
  auto has = [](const std::string& msg, const std::string& part) {
    return msg.find(part) != std::string::npos ? ::testing::AssertionSuccess()
                                               : ::testing::AssertionFailure() << "\"" << msg << "\" lacks \"" << part << "\"";
  };
  EXPECT_TRUE(has(err(R"({"H": 0})"), "H must be between 1 and"));
  EXPECT_TRUE(has(err(R"({"L": -2})"), "L must be between 1 and"));
  EXPECT_TRUE(has(err(R"({"d_e": 0})"), "d_e must be"));
  EXPECT_TRUE(has(err(R"({"l_max": 0})"), "l_max must be"));
  EXPECT_TRUE(has(err(R"({"vocab": ["a", "b", "a"]})"), "appears twice"));
  EXPECT_TRUE(has(err(R"({"vocab": ["a", "bc"]})"), "exactly one UTF-8 character"));
  EXPECT_TRUE(has(err(R"({"vocab": []})"), "at least one character"));
  EXPECT_TRUE(has(err(R"({"vocab": [1, 2]})"), "entries must be strings"));
  EXPECT_TRUE(has(err(R"({"heads": 2})"), "unknown key \"heads\""));
  EXPECT_TRUE(has(err(R"({"L": 2.5})"), "\"L\" must be an integer"));
  EXPECT_TRUE(has(err(R"({"L": "2"})"), "\"L\" must be an integer"));
  EXPECT_TRUE(has(err(R"({"eps": "small"})"), "\"eps\" must be a number"));
  EXPECT_TRUE(has(err(R"({"eps": -1})"), "eps must be"));
  EXPECT_TRUE(has(err(R"({"arch": "t5"})"), "arch must be one of \"gpt\" \"bert\" \"ed\""));
  EXPECT_TRUE(has(err(R"({"arch": "ed", "L": 2})"), "\"L\" is not a key of arch \"ed\" (its own keys are L_enc, L_dec)"));
  EXPECT_TRUE(has(err(R"({"arch": "gpt", "d_f": 8})"), "\"d_f\" is not a key of arch \"gpt\""));
  EXPECT_TRUE(has(err(R"({"position_init": 3})"), "position_init\" must be a string"));
  EXPECT_TRUE(has(err(R"({"position": "rotary"})"), "\"position\" must be one of \"learned\", \"sinusoidal\", \"rope\""));
  EXPECT_TRUE(has(err(R"({"H": 4, "H_kv": 3})"), "H_kv (key/value heads) must divide H = 4"));
  EXPECT_TRUE(has(err(R"({"position": "rope", "d_attn": 7})"), "d_attn must be even"));
  EXPECT_TRUE(has(err(R"({"arch": "bert", "tied_unembedding": true, "d_f": 8, "d_e": 16})"), "tied_unembedding needs d_f = d_e"));
  EXPECT_TRUE(has(err(R"({"arch": "ed", "mask": "prefix"})"), "mask \"prefix\" is a GPT variant"));
  EXPECT_TRUE(has(err(R"({"mask": "prefix", "prefix_separator": "€"})"), "not in the vocabulary"));
  EXPECT_TRUE(has(err(R"({"activation": "tanh"})"), "\"activation\" must be one of"));
  EXPECT_TRUE(has(err(R"({"vocab": "ab", "N_V": 4})"), "\"N_V\" is 4"));
  EXPECT_TRUE(has(err(R"({"L": 2,)"), "not valid JSON"));
  EXPECT_TRUE(has(err(R"([1, 2])"), "must be an object"));
  // validate() itself, on a struct.
  ModelConfig c;
  c.H = 0;
  EXPECT_TRUE(has(validate(c), "H must be between 1 and 64 (it is 0)"));
}

}  // namespace test_algorithms
