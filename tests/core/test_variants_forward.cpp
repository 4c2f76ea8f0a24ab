// The variants of docs/variants.md in the traced forward algorithms (8, 9, 10): hand-checked
// values of each variant's piece (RMSNorm, RoPE, ALiBi, the prefix mask, GELU_tanh, SiLU), models
// that must equal another model built by hand (tied = untied with W_u = W_eᵀ, H_kv = 1 = full H
// with copied heads, post-LN GPT = its composition), and for every variant configuration of every
// architecture: traced == untraced, columns of P summing to 1, and the trace events the variant
// adds or removes. The hand-checked values are typed with 7 decimals (within 0.5e-7 of exact) and
// computed in double by a few operations on values ≤ 3 (≲ γ_16·3 ≈ 5e-15): kTyped.
#include <gtest/gtest.h>

#include <cmath>
#include <functional>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/model/config.hpp"
#include "core/model/params.hpp"
#include "float_bounds.hpp"
#include "reference_json.hpp"

namespace test_variants_forward {

using namespace sf;
using namespace sf::test;

namespace {

// A hand-checked value typed with 7 decimals against its double computation (see the top).
const double kTyped = 0.5e-7 + 3 * double_gamma(16);

using MatD = Mat<double>;
using VecD = Vec<double>;

ModelConfig small(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.L = 2;
  c.L_enc = 1;
  c.L_dec = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_f = 8;
  c.d_attn = 4;
  c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 12;
  return c;
}

// One variant (or a combination) applied to a configuration, with its name for the test output.
struct Variant {
  std::string name;
  std::function<void(ModelConfig&)> apply;
};

const std::vector<Variant>& variants() {
  static const std::vector<Variant> v{
      {"paper", [](ModelConfig&) {}},
      {"pre", [](ModelConfig& c) { c.norm_position = NormPosition::Pre; }},
      {"post", [](ModelConfig& c) { c.norm_position = NormPosition::Post; }},
      {"rms_norm", [](ModelConfig& c) { c.norm = Norm::RmsNorm; }},
      {"sinusoidal", [](ModelConfig& c) { c.position = Position::Sinusoidal; }},
      {"sinusoidal_10000", [](ModelConfig& c) { c.position = Position::Sinusoidal; c.position_base = 10000; }},
      {"rope", [](ModelConfig& c) { c.position = Position::Rope; }},
      {"alibi", [](ModelConfig& c) { c.position = Position::Alibi; }},
      {"none", [](ModelConfig& c) { c.position = Position::None; }},
      {"gelu", [](ModelConfig& c) { c.activation = Activation::GELU; }},
      {"gelu_tanh", [](ModelConfig& c) { c.activation = Activation::GELUTanh; }},
      {"relu", [](ModelConfig& c) { c.activation = Activation::ReLU; }},
      {"swiglu", [](ModelConfig& c) { c.activation = Activation::SwiGLU; }},
      {"tied", [](ModelConfig& c) { c.tied_unembedding = true; }},
      {"H_kv_1", [](ModelConfig& c) { c.H_kv = 1; }},
      {"prefix", [](ModelConfig& c) { if (c.arch == "gpt") c.mask = MaskKind::Prefix; }},
      {"modern", [](ModelConfig& c) {
         c.norm_position = NormPosition::Pre; c.norm = Norm::RmsNorm; c.position = Position::Rope;
         c.activation = Activation::SwiGLU; c.tied_unembedding = true; c.H_kv = 1;
       }},
      {"post_alibi_rms_gelu_tanh", [](ModelConfig& c) {
         c.norm_position = NormPosition::Post; c.norm = Norm::RmsNorm; c.position = Position::Alibi;
         c.activation = Activation::GELUTanh; if (c.arch == "gpt") c.mask = MaskKind::Prefix;
       }},
  };
  return v;
}

// The token id of a one-character vocabulary entry.
int id_of(const ModelConfig& c, const std::string& s) {
  for (size_t i = 0; i < c.vocab.size(); ++i)
    if (c.vocab[i] == s) return static_cast<int>(i) + 1;
  return 0;
}

// x = "ab=cd" (the separator at position 3), z = "xyz".
Tokens x_of(const ModelConfig& c) { return {id_of(c, "a"), id_of(c, "b"), id_of(c, "="), id_of(c, "c"), id_of(c, "d")}; }
Tokens z_of(const ModelConfig& c) { return {id_of(c, "x"), id_of(c, "y"), id_of(c, "z")}; }

const Value* find_value(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}
int count_events(const Trace& t, EventKind kind, int alg, int line, const std::string& label = "") {
  int n = 0;
  for (const Event& e : t.events)
    if (e.kind == kind && e.alg == alg && e.line == line && (label.empty() || e.label == label)) ++n;
  return n;
}

// Copies every tensor of `from` into the tensor of the same name in `to`; per-head tensors with
// fewer heads in `from` (H_kv < H) fill head h of `to` from head ⌊(h−1)·H_kv/H⌋ + 1.
void copy_by_name(const Model& from, Model& to) {
  for (const ParamEntry& e : to.table.entries()) {
    const ParamEntry* f = from.table.find(e.name);
    if (!f) continue;
    ASSERT_EQ(f->matrix_size(), e.matrix_size()) << e.name;
    for (int h = 0; h < e.count; ++h) {
      const int g = h * f->count / e.count;
      std::copy_n(from.theta.begin() + static_cast<long>(f->offset + g * f->matrix_size()), e.matrix_size(),
                  to.theta.begin() + static_cast<long>(e.offset + h * e.matrix_size()));
    }
  }
}

MatF forward(const Model& m, Tracer* tr = nullptr) {
  return architecture(m.config).forward(m, z_of(m.config), x_of(m.config), tr, {});
}

// ---- hand-checked pieces ----

TEST(VariantsForward, RmsNormOfAKnownVector) {
  // e = (1, 2, 3, 4): v = (1 + 4 + 9 + 16)/4 = 7.5, √7.5 = 2.7386128; γ = (1, 1, 2, 2), ε = 0.
  const VecD e = (VecD(4) << 1, 2, 3, 4).finished(), gamma = (VecD(4) << 1, 1, 2, 2).finished();
  Trace t;
  Tracer tr(t);
  const VecD got = rms_norm<double>(e, MapV<const double>(gamma.data(), 4), 0.0, &tr);
  EXPECT_NEAR(got(0), 0.3651484, kTyped);
  EXPECT_NEAR(got(1), 0.7302967, kTyped);
  EXPECT_NEAR(got(2), 2.1908902, kTyped);  // 3/2.7386128 · 2
  EXPECT_NEAR(got(3), 2.9211870, kTyped);
  EXPECT_EQ(count_events(t, EventKind::Line, 6, 1), 0);  // no m
  ASSERT_EQ(count_events(t, EventKind::Line, 6, 2), 1);
  for (const Event& ev : t.events)
    if (ev.kind == EventKind::Line && ev.line == 2) {
      EXPECT_EQ(ev.values.at(0).m(0, 0), 7.5f);  // v: a sum of 4 squares, /4, exact
    }
}

TEST(VariantsForward, RopeRotatesAKnownQueryAtPositionTwo) {
  // d_attn = 4, base 10000: θ_1 = 1, θ_2 = 10000^{−1/2} = 0.01. The column at t = 2 (pos0 = 1):
  // (1, 0) turns by 2 rad → (cos 2, sin 2); (0, 1) turns by 0.02 rad → (−sin 0.02, cos 0.02).
  MatD Q = (MatD(4, 1) << 1, 0, 0, 1).finished();
  rope_rotate<double>(Q, 1, 10000);
  EXPECT_NEAR(Q(0, 0), -0.4161468, kTyped);
  EXPECT_NEAR(Q(1, 0), 0.9092974, kTyped);
  EXPECT_NEAR(Q(2, 0), -0.0199987, kTyped);
  EXPECT_NEAR(Q(3, 0), 0.9998000, kTyped);
}

TEST(VariantsForward, AlibiBiasAndMaskedScoresStayMinusInfinity) {
  const MatD B = alibi_bias<double>(3, 3, 0, 0);
  const MatD want = (MatD(3, 3) << 0, -1, -2, -1, 0, -1, -2, -1, 0).finished();
  EXPECT_EQ(B, want);
  EXPECT_EQ(alibi_bias<double>(2, 1, 0, 3)(0, 0), -3.0);  // key t_z = 1, query t_x = 4
  // Zero weights: S = 0, so column t_x = 2 of softmax(S/√d + m·B) with m = 0.5 is softmax(−0.5, 0)
  // over the two visible keys = (0.3775407, 0.6224593); key 3 is masked: weight 0, score −∞.
  const MatD W = MatD::Zero(2, 2);
  const VecD b = VecD::Zero(2);
  const AttentionHeadW<const double> head{MapM<const double>(W.data(), 2, 2), MapV<const double>(b.data(), 2),
                                          MapM<const double>(W.data(), 2, 2), MapV<const double>(b.data(), 2),
                                          MapM<const double>(W.data(), 2, 2), MapV<const double>(b.data(), 2)};
  AttentionOptions av;
  av.alibi = true;
  av.m = 0.5;
  AttentionRecord<double> r;
  attention<double>(MatD::Ones(2, 3), MatD::Ones(2, 3), head, unidirectional_mask(3, 3), nullptr, &r, av);
  EXPECT_NEAR(r.A(0, 1), 0.3775407, kTyped);
  EXPECT_NEAR(r.A(1, 1), 0.6224593, kTyped);
  EXPECT_EQ(r.A(2, 1), 0.0);
  EXPECT_TRUE(std::isinf(r.S_masked(2, 1)) && r.S_masked(2, 1) < 0);
}

TEST(VariantsForward, PrefixMaskForPThree) {
  // Mask[t_z, t_x] = [[t_z ≤ max(t_x, 3)]]: the first three columns see keys 1–3, then causal.
  Mask want(5, 5);
  want << 1, 1, 1, 1, 1,  //
      1, 1, 1, 1, 1,      //
      1, 1, 1, 1, 1,      //
      0, 0, 0, 1, 1,      //
      0, 0, 0, 0, 1;
  EXPECT_EQ(prefix_mask(5, 3), want);
  EXPECT_EQ(prefix_mask(4, 0), unidirectional_mask(4, 4));
  const ModelConfig c = small("gpt");
  EXPECT_EQ(prefix_position(x_of(c), c), 3);
  EXPECT_EQ(prefix_position({id_of(c, "a")}, c), 0);
}

TEST(VariantsForward, GeluTanhAndSiluValues) {
  const MatD x = (MatD(1, 3) << 1, -1, 2).finished();
  const MatD g = gelu_tanh<double>(x);  // 0.5·x·(1 + tanh(√(2/π)(x + 0.044715x³)))
  EXPECT_NEAR(g(0, 0), 0.8411920, kTyped);
  EXPECT_NEAR(g(0, 1), -0.1588080, kTyped);
  EXPECT_NEAR(g(0, 2), 1.9545977, kTyped);
  const MatD s = silu<double>((MatD(1, 2) << 1, -2).finished());  // x·σ(x)
  EXPECT_NEAR(s(0, 0), 0.7310586, kTyped);
  EXPECT_NEAR(s(0, 1), -0.2384058, kTyped);
}

TEST(VariantsForward, SwigluProductIsSiluOfTheGateTimesTheUpProjection) {
  ModelConfig c = small("gpt");
  c.activation = Activation::SwiGLU;
  const Model m = Model::initialised(c, 3);
  Trace t;
  Tracer tr(t);
  forward(m, &tr);
  const Event* gate = nullptr;
  const Event* up = nullptr;
  int checked = 0;
  for (const Event& e : t.events) {
    if (e.kind != EventKind::SubStep || e.alg != 10 || e.line != 8) continue;
    if (e.label.rfind("W_gate", 0) == 0) gate = &e;
    if (e.label.rfind("W_mlp1", 0) == 0) up = &e;
    if (e.label.rfind("SiLU(…) ⊙", 0) == 0) {
      ASSERT_TRUE(gate && up);
      const MatD G = gate->values.at(0).m.cast<double>(), U = up->values.at(0).m.cast<double>();
      const MatD want = silu<double>(G).cwiseProduct(U);
      // Element-wise from the same float G and U: the float SiLU·U rounds each entry a few times (exp,
      // one division, two products: ≲ 5u relative, u = 2⁻²⁴), entries ≲ 10 here: ≲ 3e-6 < 1e-5.
      EXPECT_LT((e.values.at(0).m.cast<double>() - want).cwiseAbs().maxCoeff(), 1e-5);
      ++checked;
    }
  }
  EXPECT_EQ(checked, c.L);
}

// ---- models that must equal another model ----
// The two models compute the same products from the same numbers, maybe in another order (a transposed
// product for tied W_u, one key head shared instead of copied). At small()'s sizes a logit is a sum of
// d_e = 8 terms with Σ|terms| ≈ 8·0.02·3 ≈ 0.5 (weights N(0, 0.02²), normalised inputs ≲ 3); with the
// relative errors of the 2L + 1 = 5 sums before it carried along, its error is ≲ 5·γ_8·0.5 ≈ 1.2e-6
// (γ_8 ≈ 8u, u = 2⁻²⁴). Logits are O(0.1), so p ≈ 1/N_V and p = softmax moves by ≤ 2p·1.2e-6 ≈ 8e-8.
// kSameModel = 1e-6 leaves a factor 12; a wrong copy (another head, W_u not W_eᵀ) moves p by O(p).
constexpr double kSameModel = 1e-6;

TEST(VariantsForward, TiedEqualsUntiedWithWuCopiedFromWe) {
  for (const std::string arch : {"gpt", "bert", "ed"}) {
    ModelConfig ct = small(arch);
    ct.tied_unembedding = true;
    const Model tied = Model::initialised(ct, 5);
    Model untied(small(arch));
    copy_by_name(tied, untied);
    const ParamEntry& we = untied.table.at("W_e");
    const ParamEntry& wu = untied.table.at("W_u");
    MapM<float>(untied.theta.data() + wu.offset, wu.rows, wu.cols) =
        MapM<const float>(untied.theta.data() + we.offset, we.rows, we.cols).transpose();
    EXPECT_LT((forward(tied) - forward(untied)).cwiseAbs().maxCoeff(), kSameModel) << arch;
  }
}

TEST(VariantsForward, MultiQueryEqualsFullHeadsWithCopiedKeyValueHeads) {
  for (const std::string arch : {"gpt", "bert", "ed"}) {
    ModelConfig cq = small(arch);
    cq.H_kv = 1;
    const Model mq = Model::initialised(cq, 6);
    Model full(small(arch));
    copy_by_name(mq, full);
    EXPECT_LT((forward(mq) - forward(full)).cwiseAbs().maxCoeff(), kSameModel) << arch;
  }
}

TEST(VariantsForward, PostLnGptEqualsItsComposition) {
  ModelConfig c = small("gpt");
  c.norm_position = NormPosition::Post;
  const Model m = Model::initialised(c, 8);
  const std::vector<double> theta(m.theta.begin(), m.theta.end());
  const GptW<const double> W = bind_gpt<const double>(m.table, theta.data());
  const Tokens x = x_of(c);
  const int l = static_cast<int>(x.size());
  MatD X(c.d_e, l);
  for (int t = 0; t < l; ++t) X.col(t) = W.W_e.col(x[t] - 1) + W.W_p.col(t);
  const double eps = c.eps;
  for (const LayerW<const double>& Wl : W.layers) {
    X += mh_attention<double>(X, X, Wl.attn, unidirectional_mask(l, l));
    X = layer_norm_columns<double>(X, Wl.gamma1, Wl.beta1, eps);
    X += (Wl.W_mlp2 * gelu<double>((Wl.W_mlp1 * X).colwise() + Wl.b_mlp1)).colwise() + Wl.b_mlp2;
    X = layer_norm_columns<double>(X, Wl.gamma2, Wl.beta2, eps);
  }
  const MatD want = softmax_columns<double>(W.W_u * X);
  // The same operations as dtransformer's, maybe in another order: each within kRefDouble of exact
  // (reference_json.hpp derives it for models of this size).
  EXPECT_LT((dtransformer<double>(x, c, W) - want).cwiseAbs().maxCoeff(), 2 * kRefDouble);
  Trace t;
  Tracer tr(t);
  dtransformer<double>(x, c, W, &tr);
  EXPECT_EQ(count_events(t, EventKind::Line, 10, 10), 0);  // no final norm
}

// ---- every variant of every architecture ----

TEST(VariantsForward, EveryVariantTracedEqualsUntracedAndColumnsSumToOne) {
  for (const std::string arch : {"gpt", "bert", "ed"})
    for (const Variant& v : variants()) {
      ModelConfig c = small(arch);
      v.apply(c);
      ASSERT_EQ(validate(c), "") << arch << " " << v.name;
      const Model m = Model::initialised(c, 11);
      const MatF P = forward(m);
      Trace t;
      Tracer tr(t);
      const MatF P_traced = forward(m, &tr);
      EXPECT_EQ(P, P_traced) << arch << " " << v.name;
      // Each p = e/Σe is within (N_V + 2)·u of exact relative to p, and the float sum of the N_V
      // p's adds γ_N_V: |Σp − 1| ≤ (2N_V + 2)·u ≈ 64u ≈ 3.8e-6 for N_V ≈ 31 (u = 2⁻²⁴).
      EXPECT_LT((P.colwise().sum().array() - 1.0f).abs().maxCoeff(), 1e-5) << arch << " " << v.name;
      EXPECT_TRUE(P.allFinite()) << arch << " " << v.name;
      EXPECT_GT(t.events.size(), 10u);
    }
}

TEST(VariantsForward, TheTraceShowsEachVariant) {
  auto trace_of = [](const std::string& arch, const std::function<void(ModelConfig&)>& apply) {
    ModelConfig c = small(arch);
    apply(c);
    const Model m = Model::initialised(c, 2);
    auto t = std::make_unique<Trace>();
    Tracer tr(*t);
    forward(m, &tr);
    return t;
  };
  // RoPE: Q before the rotation as a sub-step of Algorithm 4 line 1; no Algorithm 2.
  auto rope = trace_of("gpt", [](ModelConfig& c) { c.position = Position::Rope; });
  EXPECT_EQ(count_events(*rope, EventKind::SubStep, 4, 1, "W_q X + b_q 1ᵀ, before RoPE"), 2 * 2);  // L·H
  EXPECT_EQ(count_events(*rope, EventKind::Line, 2, 1), 0);
  // ALiBi: the bias sub-step in every self-attention head, none in cross-attention.
  auto alibi = trace_of("ed", [](ModelConfig& c) { c.position = Position::Alibi; });
  EXPECT_EQ(count_events(*alibi, EventKind::SubStep, 4, 6, "S / √d_attn + m_h·B (ALiBi variant, seed 004)"),
            (1 + 2) * 2);  // (L_enc + L_dec self-attentions)·H
  // Sinusoidal: Algorithm 2 per token, W_p bound at line 2.
  auto sin = trace_of("bert", [](ModelConfig& c) { c.position = Position::Sinusoidal; });
  EXPECT_EQ(count_events(*sin, EventKind::Line, 2, 1), 5);
  for (const Event& e : sin->events)
    if (e.kind == EventKind::Line && e.alg == 9 && e.line == 2) {
      const Value* wp = find_value(e, "W_p");
      ASSERT_TRUE(wp);
      // sin(1/ℓ_max^{2/d_e}) ≤ 1: a pow, a division and a sin, in float at worst: γ_{2k+1}.
      EXPECT_NEAR(wp->m(0, 0), std::sin(1.0 / std::pow(12.0, 2.0 / 8)), float_gamma(2 * kFunctionRoundings + 1));
    }
  // H_kv < H: Algorithm 5 line 2 binds g.
  auto kv = trace_of("gpt", [](ModelConfig& c) { c.H_kv = 1; });
  for (const Event& e : kv->events)
    if (e.kind == EventKind::Line && e.alg == 5 && e.line == 2) {
      const Value* g = find_value(e, "g");
      ASSERT_TRUE(g);
      EXPECT_EQ(g->m(0, 0), 1.0f);
    }
  // Prefix mask: p = 3 bound with Mask at line 6.
  auto prefix = trace_of("gpt", [](ModelConfig& c) { c.mask = MaskKind::Prefix; });
  for (const Event& e : prefix->events)
    if (e.kind == EventKind::Line && e.alg == 10 && e.line == 6) {
      const Value* p = find_value(e, "p");
      ASSERT_TRUE(p);
      EXPECT_EQ(p->m(0, 0), 3.0f);
    }
  // Pre-LN encoder-decoder: the final norms on lines 9 and 20; pre-LN BERT: a sub-step of line 10.
  auto ed_pre = trace_of("ed", [](ModelConfig& c) { c.norm_position = NormPosition::Pre; });
  EXPECT_EQ(count_events(*ed_pre, EventKind::Line, 8, 9), 1);
  EXPECT_EQ(count_events(*ed_pre, EventKind::Line, 8, 20), 1);
  auto bert_pre = trace_of("bert", [](ModelConfig& c) { c.norm_position = NormPosition::Pre; });
  EXPECT_EQ(count_events(*bert_pre, EventKind::SubStep, 9, 10, "final norm (pre-LN variant)"), 1);
  // RMSNorm: Algorithm 6 without line 1.
  auto rms = trace_of("gpt", [](ModelConfig& c) { c.norm = Norm::RmsNorm; });
  EXPECT_EQ(count_events(*rms, EventKind::Line, 6, 1), 0);
  EXPECT_GT(count_events(*rms, EventKind::Line, 6, 2), 0);
  // Tied: W_u = W_eᵀ bound at the unembedding.
  auto tied = trace_of("gpt", [](ModelConfig& c) { c.tied_unembedding = true; });
  bool bound = false;
  for (const Event& e : tied->events)
    if (e.kind == EventKind::SubStep && e.alg == 10 && e.line == 11) bound = find_value(e, "W_u = W_eᵀ") != nullptr;
  EXPECT_TRUE(bound);
}

}  // namespace

}  // namespace test_variants_forward
