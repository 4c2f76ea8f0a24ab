// The encoder-decoder (Algorithm 8, EDTransformer; Algorithm 15, EDInference) as core runs it:
//  - the Architecture and its parameter table (names, order, shapes, 1-based layers);
//  - hand-worked values of a tiny model whose weights are set by hand (ε = 0 makes every
//    layer_norm of a 2-vector exactly ±1): the cross-attention's S = KᵀQ with ℓ_z ≠ ℓ_x, its
//    weights, line 16's X and line 21's P;
//  - properties: column t of P ignores x after t but not any token of z; columns sum to 1; the
//    traced run computes what the untraced one does; refusals name the sequence;
//  - the exact trace of a 1 + 1-layer, 2-head model on ℓ_z = 2, ℓ_x = 3, and its values;
//  - Algorithm 15: a golden x̂ at τ = 0 (checked against an independent greedy loop), the ℓ_max
//    cap, eos_token at once, reusing Z gives the same x̂ and P columns, its trace;
//  - examples ("z<TAB>x" lines) and minibatches.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <tuple>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/training/pair_tasks.hpp"
#include "float_bounds.hpp"
#include "test_ed_support.hpp"

namespace test_ed {

using namespace sf;
using namespace sf::test;

namespace {

// L_enc = L_dec = 2, H = 2, d_e = 8, d_attn = 4, d_mid = 3, d_mlp = 16, ℓ_max = 8; N_V = 7
// (mask_token 5, bos_token 6, eos_token 7).
ModelConfig props_config() { return ed_test_config(2, 2, 2, 8, 4, 3, 16, 8, {"a", "b", "c", "d"}); }

struct Spread : SpreadModel {
  Spread() : SpreadModel(props_config(), 3, 0.5) {}
};

}  // namespace

// ---- The architecture and its table ---------------------------------------------------------------

TEST(EdArchitecture, IdentityAndConfiguration) {
  const Architecture& a = architecture("ed");
  EXPECT_EQ(a.name(), "ed");
  EXPECT_EQ(a.title(), "Encoder-decoder transformer");
  EXPECT_EQ(a.forward_algorithm(), 8);
  EXPECT_EQ(a.training_algorithm(), 11);
  EXPECT_EQ(a.output(), OutputKind::Translation);
  EXPECT_TRUE(a.has_context());
  EXPECT_EQ(a.config_keys(), (std::vector<std::string>{"L_enc", "L_dec"}));
  EXPECT_EQ(all_architectures().at(2), &a);  // after GPT and BERT (the vision transformer, not in the paper, follows)
  const ModelConfig c = config_from_json(R"({"arch": "ed", "L_enc": 3, "L_dec": 1, "H": 2, "d_e": 8})");
  EXPECT_EQ(c.L_enc, 3);
  EXPECT_EQ(c.L_dec, 1);
  const std::string j = to_json(c);
  EXPECT_NE(j.find("\"L_enc\":3"), std::string::npos) << j;
  EXPECT_EQ(j.find("\"L\":"), std::string::npos) << j;
  EXPECT_THROW(config_from_json(R"({"arch": "ed", "L": 2})"), Error);  // GPT's key
}

TEST(EdArchitecture, ParameterTableInThePapersOrder) {
  const ModelConfig c = ed_test_config(1, 2, 2, 8, 4, 3, 16, 8, {"a", "b"});  // N_V = 5
  const ParamTable t(c);
  std::vector<std::string> names;
  for (const ParamEntry& e : t.entries()) names.push_back(e.name);
  const std::vector<std::string> attn{"W_q", "b_q", "W_k", "b_k", "W_v", "b_v", "W_o", "b_o"};
  std::vector<std::string> want{"W_e", "W_p"};
  for (const auto& n : attn) want.push_back("enc.layer1.attn." + n);
  for (const char* n : {"gamma1", "beta1", "gamma2", "beta2", "W_mlp1", "b_mlp1", "W_mlp2", "b_mlp2"})
    want.push_back(std::string("enc.layer1.") + n);
  for (int l = 1; l <= 2; ++l) {
    const std::string p = "dec.layer" + std::to_string(l) + ".";
    for (const auto& n : attn) want.push_back(p + "self_attn." + n);
    for (const auto& n : attn) want.push_back(p + "cross_attn." + n);
    for (const char* n : {"gamma3", "beta3", "gamma4", "beta4", "gamma5", "beta5", "W_mlp3", "b_mlp3", "W_mlp4", "b_mlp4"})
      want.push_back(p + n);
  }
  want.push_back("W_u");
  EXPECT_EQ(names, want);
  EXPECT_EQ(t.at("W_e").shape(), (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(t.at("W_p").shape(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(t.at("enc.layer1.attn.W_v").shape(), (std::vector<int64_t>{2, 3, 8}));
  EXPECT_EQ(t.at("dec.layer2.cross_attn.W_o").shape(), (std::vector<int64_t>{8, 6}));
  EXPECT_EQ(t.at("dec.layer2.W_mlp3").shape(), (std::vector<int64_t>{16, 8}));
  EXPECT_EQ(t.at("dec.layer2.W_mlp4").shape(), (std::vector<int64_t>{8, 16}));
  EXPECT_EQ(t.at("W_u").shape(), (std::vector<int64_t>{5, 8}));
  // Layers are 1-based in both stacks; the symbols carry the paper's superscripts.
  EXPECT_EQ(t.at("enc.layer1.gamma2").layer, 1);
  EXPECT_EQ(t.at("dec.layer2.beta5").layer, 2);
  EXPECT_EQ(t.at("W_u").layer, 0);
  EXPECT_EQ(t.at("enc.layer1.attn.W_q").symbol, "W_q^{h,enc}");
  EXPECT_EQ(t.at("dec.layer1.self_attn.W_k").symbol, "W_k^{h,dec}");
  EXPECT_EQ(t.at("dec.layer1.cross_attn.W_o").symbol, "W_o^ed");
  EXPECT_EQ(t.at("dec.layer1.gamma4").symbol, "γ⁴_l");
  EXPECT_EQ(t.at("dec.layer1.W_mlp4").symbol, "W^l_mlp4");
  // The views see the same storage as the table.
  std::vector<float> theta(t.total());
  for (size_t k = 0; k < theta.size(); ++k) theta[k] = static_cast<float>(k);
  const EdW<const float> W = bind_ed<const float>(t, theta.data());
  ASSERT_EQ(W.enc.size(), 1u);
  ASSERT_EQ(W.dec.size(), 2u);
  EXPECT_EQ(W.dec[1].cross_attn.heads[1].W_k(0, 0), theta[t.at("dec.layer2.cross_attn.W_k").offset + 4 * 8]);
  EXPECT_EQ(W.dec[0].gamma5(0), theta[t.at("dec.layer1.gamma5").offset]);
  EXPECT_EQ(W.enc[0].b_mlp2(7), theta[t.at("enc.layer1.b_mlp2").offset + 7]);
  EXPECT_EQ(W.W_u(4, 7), theta[t.at("W_u").offset + 7 * 5 + 4]);
}

// ---- Hand-worked values --------------------------------------------------------------------------

namespace {

// d_e = 2, one head with d_attn = d_mid = 1, ε = 0: layer_norm(e | 1, 0) of a 2-vector e with
// e[1] ≠ e[2] is exactly (±1, ∓1), the sign of e[1] − e[2]. Every weight is 0 but
//   W_e: a = (1, 0), b = (0, 1), bos_token = (2, 0), eos_token = (0, 2);  all γ = 1;
//   the cross-attention W^ed_1: W_q = [1 0], W_k = [2 0], W_v = [1 0], W_o = [−3 0]ᵀ;
//   W_u: row a = [1 0], row b = [0 1].
// So the encoder and the decoder's self-attention only normalise; the cross-attention is the one
// thing that moves X.
Model hand_model() {
  ModelConfig c = ed_test_config(1, 1, 1, 2, 1, 1, 1, 4, {"a", "b"});  // N_V = 5: bos 4, eos 5
  c.eps = 0.0f;
  Model m(c);
  for (const ParamEntry& e : m.table.entries())
    if (e.role == ParamRole::Gain) std::fill_n(m.theta.begin() + e.offset, e.size(), 1.0f);
  EdW<float> W = bind_ed<float>(m.table, m.theta.data());
  W.W_e << 1, 0, 0, 2, 0,  //
      0, 1, 0, 0, 2;
  AttentionHeadW<float>& head = W.dec[0].cross_attn.heads[0];
  head.W_q << 1, 0;
  head.W_k << 2, 0;
  head.W_v << 1, 0;
  W.dec[0].cross_attn.W_o << -3, 0;
  W.W_u.row(0) << 1, 0;
  W.W_u.row(1) << 0, 1;
  return m;
}

const Tokens kHandZ{4, 2, 5};  // bos b eos: e = (2, 0), (0, 1), (0, 2)
const Tokens kHandX{4, 2};     // bos b:     e = (2, 0), (0, 1)

}  // namespace

TEST(EdHandWorked, CrossAttentionScoresWeightsAndP) {
  const Model m = hand_model();
  Trace trace;
  Tracer tr(trace);
  const MatF P = edtransformer<float>(kHandZ, kHandX, m.config, ed_weights(m), &tr);
  const EventKind L = EventKind::Line;
  // The encoder's output: each column's sign pattern (lines 5 and 7 add 0).
  MatD Z(2, 3);
  Z << 1, -1, -1, -1, 1, 1;
  EXPECT_EQ(traced(trace, L, 8, 8, 1, 0, "Z"), Z);
  MatD X3(2, 2);  // line 15: X after the self-attention (which adds 0) and layer_norm
  X3 << 1, -1, -1, 1;
  EXPECT_EQ(traced(trace, L, 8, 15, 1, 0, "X"), X3);
  // Line 16's Attention (the layer's third MHAttention): Q = W_q X = [1 −1], K = W_k Z = [2 −2 −2],
  // S = KᵀQ is ℓ_z × ℓ_x = 3 × 2.
  MatD Q(1, 2), K(1, 3), S(3, 2);
  Q << 1, -1;
  K << 2, -2, -2;
  S << 2, -2, -2, 2, -2, 2;
  EXPECT_EQ(traced(trace, L, 4, 1, 1, 1, "Q", 2), Q);
  EXPECT_EQ(traced(trace, L, 4, 2, 1, 1, "K", 2), K);
  EXPECT_EQ(traced(trace, L, 4, 4, 1, 1, "S", 2), S);
  EXPECT_EQ(traced(trace, L, 4, 5, 1, 1, "S", 2), S);  // Mask ≡ 1: nothing is −∞
  // softmax over each column (√d_attn = 1): column 1 (e², e⁻², e⁻²)/(e² + 2e⁻²), column 2 (e⁻², e², e²)/(e⁻² + 2e²)
  const double a = std::exp(2.0), b = std::exp(-2.0);
  MatD A(3, 2);
  A << a / (a + 2 * b), b / (b + 2 * a), b / (a + 2 * b), a / (b + 2 * a), b / (a + 2 * b), a / (b + 2 * a);
  // Tolerances (gap is absolute on values ≤ 1, relative above): S is exact (small integers), so A
  // carries only the softmax's own rounding over ℓ_z = 3 scores.
  const double a_error = float_softmax_error(3);
  EXPECT_LT(gap(traced(trace, L, 4, 6, 1, 1, "softmax(S/√d_attn)", 2), A), a_error);
  // Y = V A with V = W_v Z = [1 −1 −1]; line 16: X ← X + W_o Y, W_o = [−3 0]ᵀ
  const double y1 = (a - 2 * b) / (a + 2 * b), y2 = (b - 2 * a) / (b + 2 * a);
  MatD X16(2, 2);
  X16 << 1 - 3 * y1, -1 - 3 * y2, -1, 1;
  // y = V A[:, t] sums 3 terms ±A (Σ A = 1): off by a_error + γ_2; ×3 (W_o), then + X (|X| = 1) rounds
  // twice at ≤ 3: ≤ 3·(a_error + γ_2) + γ_2·3 absolute, on values ≈ 1.8 (gap divides by them; not counted).
  EXPECT_LT(gap(traced(trace, L, 8, 16, 1, 0, "X"), X16), 3 * (a_error + float_gamma(2)) + 3 * float_gamma(2));
  // Lines 17–19: the cross-attention flipped both columns' signs: X = [[−1, 1], [1, −1]].
  MatD X19(2, 2);
  X19 << -1, 1, 1, -1;
  // layer_norm of a 2-vector e is ±1 in exact arithmetic whatever e's own error: m's rounding (u·|m|)
  // moves e − m by u·|m|/|d| relative (d = (e[1] − e[2])/2), the two subtractions, the squares, the
  // sum, the sqrt (k) and the division add 4 + k roundings. Line 19's input is line 17's ±1 (line 18 adds
  // exactly 0), so m ≈ 0 there: γ_{4+k+1} with a u for m's share.
  const double ln_error = float_gamma(5 + kFunctionRoundings);
  EXPECT_LT(gap(traced(trace, L, 8, 19, 1, 0, "X"), X19), ln_error);
  // Line 21: W_u X = [−1 1 0 0 0]ᵀ and [1 −1 0 0 0]ᵀ, P = softmax of each column.
  const double e = std::exp(1.0), n = 1 / e + e + 3;
  MatD P_want(5, 2);
  P_want << 1 / e / n, e / n, e / n, 1 / e / n, 1 / n, 1 / n, 1 / n, 1 / n, 1 / n, 1 / n;
  // W_u X has one term per entry (exact product): the logits carry X's ln_error; the softmax of 5.
  const double p_error = float_softmax_error(5, ln_error);
  EXPECT_LT(gap(P.cast<double>(), P_want), p_error);
  EXPECT_LT(gap(traced(trace, L, 8, 21, 0, 0, "P"), P_want), p_error);
  // In double, to rounding: p_error's count of roundings, 2·(5 + k) + 2k + 5 = 31 (k = 4), at double's
  // u, on both sides (core's P and the formula for P_want): 2·γ_31 ≈ 7e-15. θ is float, exact in double.
  std::vector<double> theta(m.theta.begin(), m.theta.end());
  EXPECT_LT(gap(edtransformer<double>(kHandZ, kHandX, m.config, bind_ed<const double>(m.table, theta.data())), P_want),
            2 * double_gamma(31));
}

// ---- Properties -----------------------------------------------------------------------------------

TEST(EdProperties, ColumnTIgnoresXAfterTButNotAnyTokenOfZ) {
  const Spread s;
  const Tokens z{6, 1, 2, 3, 7}, x{6, 4, 2, 1, 3, 7};
  const MatD P = edtransformer<double>(z, x, s.c, s.W());
  ASSERT_EQ(P.rows(), s.c.N_V());
  ASSERT_EQ(P.cols(), 6);
  for (int t = 1; t < 6; ++t) {  // change x[t+1 …]: columns 1 … t stay
    Tokens x2 = x;
    for (size_t k = t; k < x2.size(); ++k) x2[k] = x2[k] % 4 + 1;
    const MatD P2 = edtransformer<double>(z, x2, s.c, s.W());
    // Columns 1 … t: the same operations on the same values (the masked weights are exactly 0, 0·v = 0),
    // so equal (0 measured at -march=native and x86-64-v3); 1e-14 (≈ 90u on p ≤ 1) only allows a
    // kernel that adds those zero terms in another place.
    EXPECT_LT((P2.leftCols(t) - P.leftCols(t)).cwiseAbs().maxCoeff(), 1e-14) << "t = " << t;
    EXPECT_GT((P2.col(t) - P.col(t)).cwiseAbs().maxCoeff(), 1e-6) << "t = " << t;  // x[t+1] itself is seen
  }
  for (size_t j = 0; j < z.size(); ++j) {  // change any one token of z: every column moves
    Tokens z2 = z;
    z2[j] = z2[j] % 4 + 1;
    const MatD P2 = edtransformer<double>(z2, x, s.c, s.W());
    for (int t = 0; t < 6; ++t)  // a real change: 10⁸ times the rounding bound above
      EXPECT_GT((P2.col(t) - P.col(t)).cwiseAbs().maxCoeff(), 1e-6) << "z[" << j + 1 << "]";
  }
  // A longer context changes P too (ℓ_z ≠ ℓ_x in general).
  EXPECT_GT((edtransformer<double>({6, 1, 2, 3, 3, 7}, x, s.c, s.W()) - P).cwiseAbs().maxCoeff(), 1e-6);
}

TEST(EdProperties, ColumnsSumToOneAndTracedEqualsUntraced) {
  const Spread s;
  const std::vector<float> theta_f(s.theta.begin(), s.theta.end());
  const EdW<const float> W = bind_ed<const float>(s.table, theta_f.data());
  for (const auto& [z, x] : std::vector<std::pair<Tokens, Tokens>>{{{6, 7}, {6}}, {{6, 4, 4, 1, 2, 3, 4, 7}, {6, 1, 2}}}) {
    const MatF P = edtransformer<float>(z, x, s.c, W);
    ASSERT_EQ(P.cols(), static_cast<Eigen::Index>(x.size()));
    for (Eigen::Index t = 0; t < P.cols(); ++t) EXPECT_NEAR(P.col(t).sum(), 1.0f, 1e-6f);  // ≤ (2N_V + 2)·u = 9.5e-7, N_V = 7, u = 2⁻²⁴
    EXPECT_GT(P.minCoeff(), 0.0f);
    Trace trace;
    Tracer tr(trace);
    EXPECT_EQ(edtransformer<float>(z, x, s.c, W, &tr), P);  // bit for bit
    EXPECT_EQ(trace.tokens_z, z);
    EXPECT_EQ(trace.tokens_x, x);
  }
}

TEST(EdProperties, RefusalsNameTheSequence) {
  const Spread s;
  auto run = [&](const Tokens& z, const Tokens& x) { return error_of([&] { edtransformer<double>(z, x, s.c, s.W()); }); };
  EXPECT_NE(run({}, {6}).find("an encoder-decoder model needs a context z"), std::string::npos);
  EXPECT_NE(run({6}, {}).find("x is empty"), std::string::npos);
  std::string e = run(Tokens(9, 1), {6});
  EXPECT_EQ(e.rfind("the context z: ", 0), 0u) << e;
  EXPECT_NE(e.find("ℓ_max is 8"), std::string::npos) << e;
  e = run({6, 7}, {6, 8});
  EXPECT_EQ(e.rfind("x: token 2 has id 8", 0), 0u) << e;
  e = run({6, 0}, {6});
  EXPECT_EQ(e.rfind("the context z: token 2 has id 0", 0), 0u) << e;
  // Through the Architecture as the app calls it, z and x in that order.
  const Model m = Model::initialised(s.c, 1);
  EXPECT_EQ(architecture(m.config).forward(m, {6, 1, 7}, {6, 2}, nullptr, {}).cols(), 2);
  EXPECT_NE(error_of([&] { architecture(m.config).forward(m, {}, {6}, nullptr, {}); }).find("context z"),
            std::string::npos);
}

// ---- The exact trace ----------------------------------------------------------------------------

namespace {

struct Ev {
  EventKind kind;
  int alg, line, depth, l, h, t;
};
using Events = std::vector<Ev>;
constexpr EventKind E = EventKind::Enter, L = EventKind::Line, S = EventKind::SubStep;

void operator+=(Events& a, const Events& b) { a.insert(a.end(), b.begin(), b.end()); }

// Algorithms 1 and 2 for position t (inside lines 2 and 11).
Events embedding(int t) { return {{E, 1, 0, 1, 0, 0, t}, {L, 1, 1, 1, 0, 0, t}, {E, 2, 0, 1, 0, 0, t}, {L, 2, 1, 1, 0, 0, t}}; }
// Algorithm 6 on column t, layer l (inside lines 6, 8, 15, 17, 19).
Events layer_norm(int l, int t) {
  return {{E, 6, 0, 1, l, 0, t}, {L, 6, 1, 1, l, 0, t}, {L, 6, 2, 1, l, 0, t}, {L, 6, 3, 1, l, 0, t}};
}
Events layer_norms(int l, int n) {
  Events e;
  for (int t = 1; t <= n; ++t) e += layer_norm(l, t);
  return e;
}
// Algorithm 5 with two heads, layer l (inside lines 5, 14, 16): per head its line 1, Algorithm 4
// (lines 1–5, line 6's three sub-steps, line 6), its line 2; then lines 3 and 4.
Events mh_attention(int l) {
  Events e{{E, 5, 0, 1, l, 0, 0}};
  for (int h = 1; h <= 2; ++h)
    e += {{L, 5, 1, 1, l, h, 0}, {E, 4, 0, 2, l, h, 0}, {L, 4, 1, 2, l, h, 0}, {L, 4, 2, 2, l, h, 0},
          {L, 4, 3, 2, l, h, 0}, {L, 4, 4, 2, l, h, 0}, {L, 4, 5, 2, l, h, 0}, {S, 4, 6, 3, l, h, 0},
          {S, 4, 6, 3, l, h, 0}, {S, 4, 6, 3, l, h, 0}, {L, 4, 6, 2, l, h, 0}, {L, 5, 2, 1, l, h, 0}};
  e += {{L, 5, 3, 1, l, 0, 0}, {L, 5, 4, 1, l, 0, 0}};
  return e;
}

// Algorithm 8 with L_enc = L_dec = 1, H = 2, on ℓ_z = 2 and ℓ_x = 3: (kind, alg, line, depth, l, h, t).
Events expected_trace() {
  Events e{{E, 8, 0, 0, 0, 0, 0}, {L, 8, 1, 0, 0, 0, 0}};  // Enter; L1 ℓ_z ← length(z)
  e += embedding(1);                                       // L2 for t = 1, 2
  e += embedding(2);
  e += {{L, 8, 2, 0, 0, 0, 0}, {L, 8, 3, 0, 0, 0, 0}, {L, 8, 4, 0, 1, 0, 0}};  // L2, L3, L4 (l = 1)
  e += mh_attention(1);                                                       // L5's MHAttention(Z | W^enc_1)
  e += {{L, 8, 5, 0, 1, 0, 0}};
  e += layer_norms(1, 2);
  e += {{L, 8, 6, 0, 1, 0, 0}, {S, 8, 7, 1, 1, 0, 0}, {S, 8, 7, 1, 1, 0, 0}, {L, 8, 7, 0, 1, 0, 0}};  // L6, L7
  e += layer_norms(1, 2);
  e += {{L, 8, 8, 0, 1, 0, 0}, {L, 8, 10, 0, 0, 0, 0}};  // L8, (end of the encoder) L10 ℓ_x ← length(x)
  for (int t = 1; t <= 3; ++t) e += embedding(t);        // L11 for t = 1, 2, 3
  e += {{L, 8, 11, 0, 0, 0, 0}, {L, 8, 12, 0, 0, 0, 0}, {L, 8, 13, 0, 1, 0, 0}};  // L11, L12, L13 (l = 1)
  e += mh_attention(1);                                                          // L14's causal self-attention
  e += {{L, 8, 14, 0, 1, 0, 0}};
  e += layer_norms(1, 3);
  e += {{L, 8, 15, 0, 1, 0, 0}};
  e += mh_attention(1);  // L16's cross-attention
  e += {{L, 8, 16, 0, 1, 0, 0}};
  e += layer_norms(1, 3);
  e += {{L, 8, 17, 0, 1, 0, 0}, {S, 8, 18, 1, 1, 0, 0}, {S, 8, 18, 1, 1, 0, 0}, {L, 8, 18, 0, 1, 0, 0}};  // L17, L18
  e += layer_norms(1, 3);
  e += {{L, 8, 19, 0, 1, 0, 0}, {S, 8, 21, 1, 0, 0, 0}, {L, 8, 21, 0, 0, 0, 0}};  // L19, (end) L21's W_u X, L21
  return e;
}

ModelConfig trace_config() { return ed_test_config(1, 1, 2, 4, 2, 2, 8, 8, {"a", "b", "c"}); }  // bos 5, eos 6
const Tokens kZ{5, 2}, kX{5, 1, 3};

struct Traced {
  Model model = Model::initialised(trace_config(), 7);
  Trace trace;
  MatF P;
  Traced() {
    Tracer tr(trace);
    P = edtransformer<float>(kZ, kX, model.config, ed_weights(model), &tr);
  }
};

// Index of the first event (kind, alg, line) with layer l, from `from` on.
size_t find_event(const Trace& t, EventKind kind, int alg, int line, int l, size_t from = 0) {
  for (size_t k = from; k < t.size(); ++k)
    if (t.events[k].kind == kind && t.events[k].alg == alg && t.events[k].line == line && t.events[k].idx.l == l)
      return k;
  return t.size();
}

}  // namespace

TEST(EdTrace, ExactEventSequence) {
  const Traced r;
  const Events want = expected_trace();
  ASSERT_EQ(want.size(), 178u);
  ASSERT_EQ(r.trace.size(), want.size());
  for (size_t k = 0; k < want.size(); ++k) {  // (kind, alg, line, depth, l, h, t, i, n, has a label)
    const Event& e = r.trace.events[k];
    const Ev& w = want[k];
    EXPECT_EQ(std::make_tuple(e.kind, e.alg, e.line, e.depth, e.idx.l, e.idx.h, e.idx.t, e.idx.i, e.idx.n, !e.label.empty()),
              std::make_tuple(w.kind, w.alg, w.line, w.depth, w.l, w.h, w.t, 0, 0, w.kind == S))
        << "event " << k;
  }
  EXPECT_EQ(r.trace.tokens_z, kZ);
  EXPECT_EQ(r.trace.tokens_x, kX);
}

TEST(EdTrace, ValuesBoundByLines) {
  const Traced r;
  const Trace& tr = r.trace;
  const EdW<const float> W = ed_weights(r.model);
  EXPECT_EQ(tr.changed(0), (std::vector<std::string>{"z", "x", "W_e", "W_p", "W_u"}));
  EXPECT_EQ(find_value(tr.events[0], "z")->tokens, kZ);
  EXPECT_EQ(find_value(tr.events[1], "ℓ_z")->m(0, 0), 2.0f);
  // Line 3: Z[:, t] = W_e[:, z[t]] + W_p[:, t], columns labelled by z.
  const size_t l3 = find_event(tr, EventKind::Line, 8, 3, 0);
  const Value* Z = find_value(tr.events[l3], "Z");
  ASSERT_NE(Z, nullptr);
  EXPECT_EQ(Z->cols, Axis::TokenZ);
  for (int t = 0; t < 2; ++t) EXPECT_TRUE(Z->m.col(t) == W.W_e.col(kZ[t] - 1) + W.W_p.col(t));
  // Line 5 binds Mask ≡ 1 (ℓ_z × ℓ_z), line 14 the causal mask, line 16 Mask ≡ 1 (ℓ_z × ℓ_x).
  const Value* m5 = find_value(tr.events[find_event(tr, EventKind::Line, 8, 5, 1)], "Mask");
  const Value* m14 = find_value(tr.events[find_event(tr, EventKind::Line, 8, 14, 1)], "Mask");
  const Value* m16 = find_value(tr.events[find_event(tr, EventKind::Line, 8, 16, 1)], "Mask");
  ASSERT_TRUE(m5 && m14 && m16);
  EXPECT_EQ(m5->kind, ValueKind::Mask);
  EXPECT_EQ(m5->m, MatF::Ones(2, 2));
  MatF causal(3, 3);
  causal << 1, 1, 1, 0, 1, 1, 0, 0, 1;
  EXPECT_EQ(m14->m, causal);
  EXPECT_EQ(m16->m, MatF::Ones(2, 3));
  EXPECT_EQ(m16->rows, Axis::TokenZ);
  EXPECT_EQ(m16->cols, Axis::TokenX);
  // Line 13 binds l with a note on the paper's slip (its loop says i).
  const Value* l13 = find_value(tr.events[find_event(tr, EventKind::Line, 8, 13, 1)], "l");
  ASSERT_NE(l13, nullptr);
  EXPECT_EQ(l13->m(0, 0), 1.0f);
  EXPECT_NE(l13->note.find("i"), std::string::npos);
  EXPECT_NE(l13->note.find("slip"), std::string::npos);
  // Sub-step labels of lines 7, 18 and 21; ReLU is elementwise max(0, ·).
  const size_t s7 = find_event(tr, EventKind::SubStep, 8, 7, 1), s18 = find_event(tr, EventKind::SubStep, 8, 18, 1);
  EXPECT_EQ(tr.events[s7].label, "W_mlp1 Z + b_mlp1 1ᵀ");
  EXPECT_EQ(tr.events[s7 + 1].label, "ReLU(…)");
  EXPECT_EQ(tr.events[s18].label, "W_mlp3 X + b_mlp3 1ᵀ");
  EXPECT_EQ(tr.events[s18 + 1].label, "ReLU(…)");
  EXPECT_EQ(tr.events[tr.size() - 2].label, "W_u X");
  EXPECT_EQ(tr.events[s18 + 1].values[0].m, tr.events[s18].values[0].m.cwiseMax(0.0f));
  EXPECT_EQ(find_value(tr.events.back(), "P")->m, r.P);
}

TEST(EdTrace, TokenAxesAreLabelledByTheirSequences) {
  const Traced r;
  const Trace& tr = r.trace;
  // Algorithm 4's line 4 (S, rows TokenZ, columns TokenX) in the three MHAttention calls of layer 1:
  // the encoder's (z, z), the decoder's self-attention (x, x), the cross-attention (z, x).
  const std::pair<Tokens, Tokens> want[] = {{kZ, kZ}, {kX, kX}, {kZ, kX}};
  size_t k = 0;
  for (const auto& [rows, cols] : want) {
    k = find_event(tr, EventKind::Line, 4, 4, 1, find_event(tr, EventKind::Enter, 5, 0, 1, k));
    ASSERT_LT(k, tr.size());
    ASSERT_NE(tr.axis_tokens(k, Axis::TokenZ), nullptr);
    EXPECT_EQ(*tr.axis_tokens(k, Axis::TokenZ), rows) << "event " << k;
    EXPECT_EQ(*tr.axis_tokens(k, Axis::TokenX), cols) << "event " << k;
    EXPECT_EQ(find_value(tr.events[k], "S")->m.rows(), static_cast<Eigen::Index>(rows.size()));
    EXPECT_EQ(find_value(tr.events[k], "S")->m.cols(), static_cast<Eigen::Index>(cols.size()));
  }
  EXPECT_EQ(*tr.axis_tokens(find_event(tr, EventKind::Line, 8, 8, 1), Axis::TokenZ), kZ);
  EXPECT_EQ(*tr.axis_tokens(tr.size() - 1, Axis::TokenX), kX);
}

// ---- Algorithm 15 -----------------------------------------------------------------------------------

namespace {

// An independent greedy loop over core's Algorithm 8 (τ = 0): x̂ until eos_token or ℓ_max tokens.
Tokens greedy(const Tokens& z, const Model& m) {
  Tokens x{m.config.bos_token()};
  while (static_cast<int>(x.size()) < m.config.l_max) {
    const MatF P = edtransformer<float>(z, x, m.config, ed_weights(m));
    Eigen::Index best = 0;
    P.col(P.cols() - 1).maxCoeff(&best);
    x.push_back(static_cast<int>(best) + 1);
    if (x.back() == m.config.eos_token()) break;
  }
  return x;
}

Model golden_model() {
  const ModelConfig c = props_config();
  Model m(c);
  const std::vector<double> theta = spread_theta(m.table, 36, 0.6);
  m.theta.assign(theta.begin(), theta.end());
  return m;
}

// The golden model made to draw `token` at every step: γ⁵ = 0 and β⁵ = 1 make every column of the
// decoder's output 1, and W_u's only non-zero row is the token's.
Model always(int token) {
  Model m = golden_model();
  EdW<float> W = bind_ed<float>(m.table, m.theta.data());
  W.dec.back().gamma5.setZero();
  W.dec.back().beta5.setOnes();
  W.W_u.setZero();
  W.W_u.row(token - 1).setOnes();
  return m;
}

}  // namespace

TEST(EdInference, GoldenOutputAtTauZero) {
  const Model m = golden_model();
  const Tokens z{6, 1, 2, 3, 7};
  EdInferenceOptions opt;
  opt.tau = 0;
  const EdInferenceResult r = edinference(z, m, opt);
  EXPECT_EQ(r.x_hat, greedy(z, m));
  EXPECT_EQ(r.x_hat, (Tokens{6, 1, 1, 1, 7}));  // golden: bos a a a eos, written out after the check above
  EXPECT_EQ(r.stopped, "eos_token");
  ASSERT_EQ(r.steps.size(), r.x_hat.size() - 1);
  for (size_t i = 0; i < r.steps.size(); ++i) {
    EXPECT_EQ(r.steps[i].y, r.x_hat[i + 1]);
    EXPECT_EQ(r.steps[i].q.sum(), 1.0f);  // one-hot at τ = 0
    EXPECT_EQ(r.steps[i].q(r.steps[i].y - 1), 1.0f);
  }
}

TEST(EdInference, TheLmaxCapAndEosAtOnce) {
  EdInferenceOptions opt;
  opt.tau = 0;
  const Model never = always(1);  // always "a": eos_token is never drawn
  EdInferenceResult r = edinference({6, 2, 7}, never, opt);
  EXPECT_EQ(r.x_hat, (Tokens{6, 1, 1, 1, 1, 1, 1, 1}));  // ℓ_max = 8 tokens, bos_token included
  EXPECT_EQ(r.stopped,
            "the ℓ_max cap: x̂ reached ℓ_max = 8 tokens before eos_token was drawn (the paper's loop has no bound)");
  EXPECT_EQ(r.steps.size(), 7u);
  r = edinference({6, 2, 7}, always(7), opt);
  EXPECT_EQ(r.x_hat, (Tokens{6, 7}));
  EXPECT_EQ(r.stopped, "eos_token");
  // τ > 0 samples; refusals.
  opt.tau = -1;
  EXPECT_NE(error_of([&] { edinference({6, 7}, never, opt); }).find("τ"), std::string::npos);
  opt.tau = 1;
  EXPECT_NE(error_of([&] { edinference({}, never, opt); }).find("context z"), std::string::npos);
}

TEST(EdInference, ReusingTheEncodingGivesTheSameXHatAndP) {
  const Model m = golden_model();
  const Tokens z{6, 4, 4, 1, 7};
  for (double tau : {0.0, 1.0}) {
    EdInferenceOptions opt;
    opt.tau = tau;
    opt.seed = 5;
    const EdInferenceResult paper = edinference(z, m, opt);
    opt.reuse_encoding = true;
    const EdInferenceResult reused = edinference(z, m, opt);
    EXPECT_EQ(reused.x_hat, paper.x_hat) << "τ = " << tau;
    EXPECT_EQ(reused.stopped, paper.stopped);
    ASSERT_EQ(reused.steps.size(), paper.steps.size());
    EXPECT_GE(paper.steps.size(), 2u);  // Z is reused at least once
    for (size_t i = 0; i < paper.steps.size(); ++i) EXPECT_EQ(reused.steps[i].p, paper.steps[i].p) << "pass " << i + 1;
  }
}

TEST(EdInference, TraceOfTheLoop) {
  const Model eos = always(7);
  EdInferenceOptions opt;
  opt.tau = 0;
  for (bool reuse : {false, true}) {
    opt.reuse_encoding = reuse;
    Trace trace;
    Tracer tr(trace);
    const EdInferenceResult r = edinference({6, 2, 7}, eos, opt, &tr);
    ASSERT_EQ(r.x_hat, (Tokens{6, 7}));
    // Algorithm 15's own events (depth 0): Enter, L1, L2, one pass (L3 at i = 1, Algorithm 8
    // nested, L4 … L7), the last test of L3 (y = eos_token) and L9.
    std::vector<std::pair<int, int>> top;  // (line, i)
    for (const Event& e : trace.events)
      if (e.depth == 0) top.push_back({e.line, e.idx.i});
    EXPECT_EQ(top, (std::vector<std::pair<int, int>>{{0, 0}, {1, 0}, {2, 0}, {3, 1}, {4, 1}, {5, 1}, {6, 1}, {7, 1},
                                                      {3, 0}, {9, 0}}));
    EXPECT_EQ(trace.events[1].values[0].tokens, (Tokens{6}));  // L1: x̂ ← [bos_token]
    EXPECT_EQ(find_value(trace.events.back(), "x̂")->tokens, (Tokens{6, 7}));
    const size_t enter8 = find_event(trace, EventKind::Enter, 8, 0, 0);
    EXPECT_EQ(trace.events[enter8].depth, 1);
    EXPECT_EQ(trace.events[enter8].idx.i, 1);
  }
  // With reuse, passes after the first skip lines 1–9 and say so; without, each pass encodes z.
  const Model never = always(1);  // 7 passes up to ℓ_max
  for (bool reuse : {false, true}) {
    opt.reuse_encoding = reuse;
    Trace trace;
    Tracer tr(trace);
    edinference({6, 2, 7}, never, opt, &tr);
    int enters = 0, encodes = 0, notes = 0;
    for (const Event& e : trace.events) {
      if (e.alg != 8) continue;
      enters += e.kind == EventKind::Enter;
      encodes += e.kind == EventKind::Line && e.line == 1;
      if (e.kind == EventKind::Enter)
        if (const Value* Z = find_value(e, "Z")) notes += Z->note.find("Not in the paper") != std::string::npos;
    }
    EXPECT_EQ(enters, 7) << reuse;
    EXPECT_EQ(encodes, reuse ? 1 : 7) << reuse;
    EXPECT_EQ(notes, reuse ? 6 : 0) << reuse;
  }
}

// ---- Examples and minibatches ------------------------------------------------------------------------

TEST(EdExamples, LinesAreZTabX) {
  const ModelConfig c = ed_test_config(1, 1, 1, 4, 2, 2, 4, 6, {"a", "b", "c"});  // bos 5, eos 6
  const EdArchitecture ed;
  const std::vector<Example> ex = ed.examples({"ab\tcab", "c\t"}, c);
  ASSERT_EQ(ex.size(), 2u);
  EXPECT_EQ(ex[0].z, (Tokens{5, 1, 2, 6}));
  EXPECT_EQ(ex[0].x, (Tokens{5, 3, 1, 2, 6}));
  EXPECT_EQ(ex[1].z, (Tokens{5, 3, 6}));
  EXPECT_EQ(ex[1].x, (Tokens{5, 6}));
  EXPECT_EQ(error_of([&] { ed.examples({"ab\tba", "no tab"}, c); }), "line 2 has no tab: each line must be z<TAB>x");
  std::string z, x;  // the first tab splits
  ASSERT_TRUE(split_pair("a\tb\tc", z, x));
  EXPECT_EQ(z, "a");
  EXPECT_EQ(x, "b\tc");
  std::string e = error_of([&] { ed.examples({"ab\tba", "abcab\ta"}, c); });  // 7 tokens > ℓ_max = 6
  EXPECT_NE(e.find("contexts z"), std::string::npos) << e;
  EXPECT_NE(e.find("sequence 2"), std::string::npos) << e;
  e = error_of([&] { ed.examples({"ab\tbz"}, c); });
  EXPECT_NE(e.find("sequences x"), std::string::npos) << e;
  // A minibatch: x padded to ℓ = 6, z to ℓ_z = 5, next-token targets of x only.
  Batch b;
  Rng rng(1);
  ed.make_batch(c, ex, {1, 0}, 6, 5, TrainOptions{}, rng, b);
  EXPECT_EQ(b.B, 2);
  EXPECT_EQ(b.tokens, (Tokens{5, 6, 1, 1, 1, 1, 5, 3, 1, 2, 6, 1}));
  EXPECT_EQ(b.lengths, (std::vector<int>{2, 5}));
  EXPECT_EQ(b.targets, (std::vector<int>{6, 0, 0, 0, 0, 0, 3, 1, 2, 6, 0, 0}));
  EXPECT_EQ(b.l_z, 5);
  EXPECT_EQ(b.z_tokens, (Tokens{5, 3, 6, 1, 1, 5, 1, 2, 6, 1}));
  EXPECT_EQ(b.z_lengths, (std::vector<int>{3, 4}));
  EXPECT_THROW(ed.make_batch(c, ex, {0}, 6, 3, TrainOptions{}, rng, b), Error);  // z has 4 tokens
}

}  // namespace test_ed
