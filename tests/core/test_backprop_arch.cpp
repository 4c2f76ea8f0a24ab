// The traced backward of BERT (Algorithm 9's adjoint, core/backprop/adjoint_etransformer.cpp) and of
// the encoder-decoder (Algorithm 8's adjoint, core/backprop/adjoint_edtransformer.cpp):
//  - its ∇θ equals the batched gradient training uses (core/gradients/), in double and in float, for
//    post-LN BERT (the paper), pre-LN BERT, BERT with the ecosystem extras, the paper's encoder-decoder
//    and an encoder-decoder with RoPE;
//  - BERT: only masked positions carry loss (∇P's other columns are 0, ∇X after layer L is nonzero only
//    at masked positions) and the bidirectional attention spreads it to every position by layer 1;
//  - the encoder-decoder: the decoder's adjoint frames run before the encoder's, and each cross-attention
//    adjoint binds ∇Z, whose sum over the decoder's layers is what the encoder's backward starts from;
//  - Algorithm 12's line 10 and Algorithm 11's line 6, traced, nest that backward before their event,
//    and the update they make is the untraced one, bit for bit;
//  - finite differences in double of bound intermediates: ∇W_f and ∇X of line 10, the embedding norm's
//    ∇W_p (= ∇e_t before it) and ∇γ_emb, the cross-attention's ∇Z.
#include <gtest/gtest.h>

#include <cmath>

#include <unsupported/Eigen/SpecialFunctions>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/arch/ed.hpp"
#include "core/backprop/adjoints.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/training/training.hpp"
#include "grad_check.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"

namespace test_backprop_arch {

using namespace sf;
using namespace sf::test;

namespace {

// d_mid = 3 ≠ d_attn = 4, d_f = 5 ≠ d_e = 8, 2 layers of 2 heads; N_V = 8: mask_token 6, bos 7, eos 8.
ModelConfig bert_config() { return bert_test_config(2, 2, 8, 4, 3, 12, 5, 9, {"a", "b", "c", "d", "e"}); }
ModelConfig bert_pre_ln() {
  ModelConfig c = bert_config();
  c.norm_position = NormPosition::Pre;
  return c;
}
ModelConfig bert_extras() {
  ModelConfig c = bert_config();
  c.embedding_norm = true;
  c.token_types = 2;
  c.unembedding_bias = true;
  return c;
}
// L_enc = L_dec = 2, 2 heads, ReLU (the paper's Algorithm 8).
ModelConfig ed_config() { return ed_test_config(2, 2, 2, 8, 4, 3, 12, 9, {"a", "b", "c", "d", "e"}); }
ModelConfig ed_rope() {
  ModelConfig c = ed_config();
  c.position = Position::Rope;
  return c;
}

// x = bos a c b e d eos with positions 3 and 5 masked (x̃[3] = x̃[5] = mask_token), and a token (a)
// used twice in z.
const Tokens kX{7, 1, 3, 2, 5, 4, 8};
const std::vector<int> kMasks{3, 5};
const Tokens kZ{7, 1, 2, 1, 8};
const Tokens kEdX{7, 4, 3, 5, 8};

Batch bert_batch(const ModelConfig& c) { return masked_batch(kX, kMasks, c.mask_token()); }
Batch ed_batch() { return next_token_batch(kZ, kEdX); }

// θ of spread 0.4 as T (float: each entry rounded once).
template <class T>
std::vector<T> theta_as(const ParamTable& table) {
  const std::vector<double> d = spread_theta(table, 7, 0.4);
  return std::vector<T>(d.begin(), d.end());
}

// One traced backward: ∇θ, the stream's gradients and the trace.
template <class T>
struct Traced {
  std::vector<T> grad;
  ResidualGradients<T> kept;
  Trace trace;
};

// What the tests need of an architecture: its θ binding, batched forward (B = 1), traced backward
// (Algorithm 9's or 8's adjoint) and batched gradient (what training uses).
struct BertArch {
  template <class T> using W = BertW<T>;
  template <class T> using Cache = BertCache<T>;
  template <class T> using Gradient = BertGradient<T>;
  template <class T> static W<T> bind(const ParamTable& table, T* theta) { return bind_bert<T>(table, theta); }
  template <class T> static void forward(const ModelConfig& c, const W<const T>& w, const Batch& b, Cache<T>& cache) {
    etransformer_forward<T>(c, w, b, T(1), cache);
  }
  template <class T>
  static void adjoint(const ModelConfig& c, const W<const T>& w, const Cache<T>& cache, W<T>& dW, Traced<T>& out, Tracer* tr) {
    adjoint_etransformer<T>(c, w, cache, dW, &out.kept, tr);
  }
};
struct EdArch {
  template <class T> using W = EdW<T>;
  template <class T> using Cache = EdCache<T>;
  template <class T> using Gradient = EdGradient<T>;
  template <class T> static W<T> bind(const ParamTable& table, T* theta) { return bind_ed<T>(table, theta); }
  template <class T> static void forward(const ModelConfig& c, const W<const T>& w, const Batch& b, Cache<T>& cache) {
    edtransformer_forward<T>(c, w, b, T(1), cache);
  }
  template <class T>
  static void adjoint(const ModelConfig& c, const W<const T>& w, const Cache<T>& cache, W<T>& dW, Traced<T>& out, Tracer* tr) {
    adjoint_edtransformer<T>(c, w, cache, dW, &out.kept, tr);
  }
};

template <class Arch, class T>
Traced<T> traced(const ModelConfig& c, const ParamTable& table, const std::vector<T>& theta, const Batch& b) {
  const auto W = Arch::template bind<const T>(table, theta.data());
  typename Arch::template Cache<T> cache;
  Arch::template forward<T>(c, W, b, cache);
  Traced<T> out;
  out.grad.assign(table.total(), T(0));
  auto dW = Arch::template bind<T>(table, out.grad.data());
  Tracer tr(out.trace);
  const TraceBackward backward(&tr);
  Arch::template adjoint<T>(c, W, cache, dW, out, &tr);
  return out;
}

// The batched gradient training uses, summed loss (loss_weight 1).
template <class Arch, class T>
std::vector<T> batched(const ModelConfig& c, const ParamTable& table, const std::vector<T>& theta, const Batch& b) {
  typename Arch::template Gradient<T> g(table);
  g.loss_and_gradient(c, Arch::template bind<const T>(table, theta.data()), b, T(1));
  return {g.grad.begin(), g.grad.end()};
}

// The worst difference over the tensors of the table: a tensor's ‖traced − batched‖ divided by its own
// ‖batched‖ in double, by the whole ∇θ's norm in float (see kTracedFloat). b_k's gradient is exactly 0
// (zero_by_softmax_shift): both are rounding noise there, measured against the whole ∇θ's norm.
template <class T>
double worst_tensor_error(const ParamTable& table, const std::vector<T>& traced, const std::vector<T>& batched) {
  using V = Eigen::Map<const Eigen::Matrix<T, Eigen::Dynamic, 1>>;
  const double whole = V(batched.data(), batched.size()).template cast<double>().norm();
  double worst = 0;
  for (const ParamEntry& e : table.entries()) {
    const auto a = V(traced.data() + e.offset, e.size()).template cast<double>();
    const auto b = V(batched.data() + e.offset, e.size()).template cast<double>();
    const bool own = std::is_same_v<T, double> && !zero_by_softmax_shift(e.name);
    const double scale = own ? b.norm() : whole;
    EXPECT_GT(scale, 0) << e.name << ": a tensor without gradient cannot be compared";
    worst = std::max(worst, (a - b).norm() / scale);
  }
  return worst;
}

// Both paths read the SAME forward values (the batched forward's cache, B = 1) and add the same terms;
// only the order of the backward's sums differs (Algorithm 7's adjoint per column against one product,
// −1/P·P against P − onehot, heads one at a time against stacked products). Each gradient entry is a
// chain of ≈ 12 sums of ≤ 16 terms of size ≤ 4 with a gain ≈ 1 (as kReorderedDouble), whose rounding
// errors add like a random walk: ≈ √12·√16·4·u relative to the size of the terms.
//  - double (u = 2⁻⁵³): ≈ 2e-15; per tensor against its own norm, even the small tensors whose terms
//    cancel stay within 1e-12 (measured: at most 1e-14, the last decoder layer's cross-attention W_q).
//  - float (u = 2⁻²⁴): ≈ 8e-7 of the terms' size. The terms are the size of the whole ∇θ (a tensor with a
//    small gradient, e.g. the last decoder layer's self-attention W_q at 0.4% of ‖∇θ‖, is a cancellation of
//    terms that large, and its own relative error reaches 6e-5), so each tensor's error is measured
//    against ‖∇θ‖: measured ≤ 9e-8, within 1e-6.
// A wrong adjoint (a missing path, a transposed index) is off by O(1).
constexpr double kTracedDouble = 1e-12;
constexpr double kTracedFloat = 1e-6;

template <class Arch, class T>
double gap(const ModelConfig& c, const Batch& b) {
  const ParamTable table(c);
  const std::vector<T> theta = theta_as<T>(table);
  return worst_tensor_error<T>(table, traced<Arch, T>(c, table, theta, b).grad, batched<Arch, T>(c, table, theta, b));
}

// The Line events at the backward's (alg, line), "adjoint of line `line`", in trace order.
std::vector<size_t> events_at(const Trace& t, int alg, int line) {
  std::vector<size_t> out;
  for (size_t k = 0; k < t.size(); ++k)
    if (t.events[k].kind == EventKind::Line && t.events[k].ref() == LineRef{alg, line, Pass::Backward}) out.push_back(k);
  return out;
}
// The value `name` bound by the only Line event at (alg, line), as double.
MatD bound(const Trace& t, int alg, int line, const std::string& name) {
  const std::vector<size_t> at = events_at(t, alg, line);
  EXPECT_EQ(at.size(), 1u) << "events at line " << line << " of Algorithm " << alg;
  const Value* v = at.empty() ? nullptr : find_value(t.events[at[0]], name);
  EXPECT_NE(v, nullptr) << name << " at line " << line;
  return v ? MatD(MatF(v->m).cast<double>()) : MatD();
}

// −Σ_t log P[y_t, t] over the batch's targets.
double summed_loss(const MatD& P, const std::vector<int>& targets) {
  double loss = 0;
  for (size_t t = 0; t < targets.size(); ++t)
    if (targets[t]) loss -= std::log(P(targets[t] - 1, t));
  return loss;
}

// A bound value is stored as float (the trace's TraceMat): relative 2⁻²⁴ ≈ 6e-8 per entry; the
// central differences are within 1e-9 relative (grad_check.hpp). kGradCheckRelative (1e-6) holds both.
const double kBoundVsNumeric = kGradCheckRelative;

}  // namespace

// The models whose traced ∇θ is compared with the batched one, each a test of its own.
struct GapCase {
  const char* name;
  ModelConfig (*config)();
};
const GapCase kGapCases[] = {{"BertPostLN", bert_config},
                             {"BertPreLN", bert_pre_ln},
                             {"BertWithEcosystemExtras", bert_extras},
                             {"EncoderDecoder", ed_config},
                             {"EncoderDecoderWithRope", ed_rope}};

class TracedGradientEqualsBatched : public ::testing::TestWithParam<GapCase> {};

TEST_P(TracedGradientEqualsBatched, InDoubleAndInFloat) {
  const ModelConfig c = GetParam().config();
  if (c.arch == "ed") {
    EXPECT_LT((gap<EdArch, double>(c, ed_batch())), kTracedDouble);
    EXPECT_LT((gap<EdArch, float>(c, ed_batch())), kTracedFloat);
  } else {
    EXPECT_LT((gap<BertArch, double>(c, bert_batch(c))), kTracedDouble);
    EXPECT_LT((gap<BertArch, float>(c, bert_batch(c))), kTracedFloat);
  }
}

INSTANTIATE_TEST_SUITE_P(BackpropArch, TracedGradientEqualsBatched, ::testing::ValuesIn(kGapCases),
                         [](const ::testing::TestParamInfo<GapCase>& i) { return std::string(i.param.name); });

TEST(BackpropArch, BertLossFlowsFromMaskedPositionsOnlyThenSpreads) {
  const ModelConfig c = bert_config();
  const ParamTable table(c);
  const Traced<double> r = traced<BertArch, double>(c, table, theta_as<double>(table), bert_batch(c));
  auto masked = [](Eigen::Index t) { return t == 2 || t == 4; };  // 0-based columns of positions 3 and 5
  // ∇P (the loss line's adjoint): only the masked positions' columns are nonzero
  const MatD dP = bound(r.trace, 12, 9, "∇P");
  ASSERT_EQ(dP.cols(), static_cast<Eigen::Index>(kX.size()));
  for (Eigen::Index t = 0; t < dP.cols(); ++t) EXPECT_EQ(dP.col(t).isZero(0), !masked(t)) << "column " << t + 1;
  const std::vector<size_t> loss = events_at(r.trace, 12, 9);
  ASSERT_EQ(loss.size(), 1u);
  EXPECT_NE(find_value(r.trace.events[loss[0]], "∇P")->note.find("T̃ = {3, 5}, the masked positions"), std::string::npos);
  // ∇X after layer L (lines 12, 11, 10 act per column): still only the masked columns
  const MatD& top = r.kept.X.back();
  for (Eigen::Index t = 0; t < top.cols(); ++t) EXPECT_EQ(top.col(t).isZero(0), !masked(t)) << "column " << t + 1;
  // ∇X entering layer 1: Mask ≡ 1 has spread it to every position
  const MatD& bottom = r.kept.X.front();
  for (Eigen::Index t = 0; t < bottom.cols(); ++t) EXPECT_GT(bottom.col(t).norm(), 1e-6) << "column " << t + 1;
}

TEST(BackpropArch, EncoderDecoderStepsTheDecoderThenTheEncoderOnTheSumOfCrossAttentionGradients) {
  const ModelConfig c = ed_config();
  const ParamTable table(c);
  const Traced<double> r = traced<EdArch, double>(c, table, theta_as<double>(table), ed_batch());
  const Trace& t = r.trace;
  // Every event of a decoder line (13 … 19, 11) comes before every event of an encoder line (9 … 2).
  size_t last_decoder = 0, first_encoder = t.size();
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.alg != 8 || e.kind == EventKind::Enter) continue;
    if (e.line >= 11 && e.line <= 21) last_decoder = k;
    if (e.line >= 2 && e.line <= 9) first_encoder = std::min(first_encoder, k);
  }
  EXPECT_LT(last_decoder, first_encoder);
  // The cross-attention's adjoint (line 16) binds ∇Z once per decoder layer, l = L_dec … 1.
  const std::vector<size_t> cross = events_at(t, 8, 16);
  ASSERT_EQ(cross.size(), 2u);
  EXPECT_EQ(t.events[cross[0]].idx.l, 2);
  EXPECT_EQ(t.events[cross[1]].idx.l, 1);
  MatD sum = MatD::Zero(c.d_e, static_cast<Eigen::Index>(kZ.size()));
  for (size_t k : cross) {
    const Value* dZ = find_value(t.events[k], "∇Z");
    ASSERT_NE(dZ, nullptr);
    EXPECT_GT(dZ->m.norm(), 0.0);
    sum += MatF(dZ->m).cast<double>();
  }
  // The encoder's backward starts from their sum (line 9's ∇Z, kept as ∇Z after the last encoder layer).
  const MatD dZ = bound(t, 8, 9, "∇Z");
  // Two float-stored values summed: ≤ 2·2⁻²⁴ relative each.
  EXPECT_LT(relative_error(sum, dZ), 4 * kFloatU);
  EXPECT_LT(relative_error(r.kept.Z.back(), dZ), 2 * kFloatU);
}

TEST(BackpropArch, FiniteDifferencesOfLine10sGradients) {
  const ModelConfig c = bert_config();
  const ParamTable table(c);
  std::vector<double> theta = theta_as<double>(table);
  const Batch b = bert_batch(c);
  const Traced<double> r = traced<BertArch, double>(c, table, theta, b);
  const BertW<const double> W = bind_bert<const double>(table, theta.data());
  // ∇W_f against central differences of the loss (core's traced Algorithm 9 as the forward)
  const ParamEntry& e = table.at("W_f");
  auto loss = [&] { return summed_loss(etransformer<double>(b.tokens, c, bind_bert<const double>(table, theta.data())), b.targets); };
  const MatD numeric_W_f = numeric_gradient(theta.data() + e.offset, e.rows, e.cols, loss, 1e-5);
  EXPECT_LT(relative_error(bound(r.trace, 9, 10, "∇W_f"), numeric_W_f), kBoundVsNumeric);
  // ∇X of line 10 (its input X, after layer L) against central differences of lines 10–12 and the loss
  BertCache<double> cache;
  etransformer_forward<double>(c, W, b, 1.0, cache);
  MatD X = cache.X;  // (d_e, ℓ)
  auto tail = [&] {
    MatD F = (W.W_f * X).colwise() + W.b_f;  // L10: GELU(W_f X + b_f 1ᵀ), exact erf form
    F.array() = F.array() * (0.5 * (1 + (F.array() * M_SQRT1_2).erf()));
    LayerNormCache<double> ln;
    MatD Y;
    layer_norm_forward<double>(F, W.gamma, W.beta, c.eps, ln, Y);  // L11
    LossCache<double> lc;
    return loss_forward<double>(Y, W.W_u, W.extras.b_u, b.targets, cache.weights, lc);  // L12, Alg 12 L9
  };
  EXPECT_LT(relative_error(bound(r.trace, 9, 10, "∇X"), numeric_gradient(X, tail, 1e-5)), kBoundVsNumeric);
}

TEST(BackpropArch, FiniteDifferencesOfTheEmbeddingNormsGradients) {
  const ModelConfig c = bert_extras();
  const ParamTable table(c);
  std::vector<double> theta = theta_as<double>(table);
  const Batch b = bert_batch(c);
  const Traced<double> r = traced<BertArch, double>(c, table, theta, b);
  auto loss = [&] { return summed_loss(etransformer<double>(b.tokens, c, bind_bert<const double>(table, theta.data())), b.targets); };
  // ∇W_p[:, t] = ∇e_t before the embedding norm (W_p[:, t] enters e_t only): against central differences
  const ParamEntry& p = table.at("W_p");
  const Eigen::Index l = static_cast<Eigen::Index>(kX.size());
  const MatD numeric_e = numeric_gradient(theta.data() + p.offset, p.rows, l, loss, 1e-5);
  EXPECT_LT(relative_error(bound(r.trace, 9, 2, "∇W_p").leftCols(l), numeric_e), kBoundVsNumeric);
  // ∇γ_emb, the embedding norm's gain
  const ParamEntry& g = table.at("emb.gamma");
  const MatD numeric_gamma = numeric_gradient(theta.data() + g.offset, g.rows, g.cols, loss, 1e-5);
  EXPECT_LT(relative_error(bound(r.trace, 9, 2, "∇γ_emb"), numeric_gamma), kBoundVsNumeric);
}

TEST(BackpropArch, FiniteDifferencesOfTheCrossAttentionsGradientIntoZ) {
  const ModelConfig c = ed_config();
  const ParamTable table(c);
  const std::vector<double> theta = theta_as<double>(table);
  const Batch b = ed_batch();
  const Traced<double> r = traced<EdArch, double>(c, table, theta, b);
  const EdW<const double> W = bind_ed<const double>(table, theta.data());
  // loss as a function of Z, the encoder's output: Algorithm 8's decoder (lines 10–21) on a given Z
  MatD Z;
  edtransformer_parts<double>(kZ, kEdX, c, W, nullptr, nullptr, &Z);
  auto loss = [&] { return summed_loss(edtransformer_parts<double>(kZ, kEdX, c, W, nullptr, &Z, nullptr), b.targets); };
  EXPECT_LT(relative_error(bound(r.trace, 8, 9, "∇Z"), numeric_gradient(Z, loss, 1e-5)), kBoundVsNumeric);
}

namespace {

// One traced update of the paper's training algorithm and one untraced from the same θ: the traced
// run's θ after the update must be the untraced run's, bit for bit (the update uses the batched
// gradient either way). Returns the traced run's trace; `line` is the update line.
Trace traced_update_matches_untraced(const ModelConfig& c, const std::vector<Example>& data, const TrainOptions& opt) {
  Model traced = Model::initialised(c, 5), plain = Model::initialised(c, 5);
  Trace trace;
  Tracer tr(trace);
  for (Model* m : {&traced, &plain}) {
    const std::unique_ptr<PaperTraining> alg = architecture(c).paper_training(1, 1);
    const std::unique_ptr<ModelGradient> g = architecture(c).gradient(m->table);
    Rng rng(3);
    EXPECT_TRUE(alg->step(data, *m, 0.1f, opt, *g, rng, m == &traced ? &tr : nullptr).finite);
  }
  EXPECT_EQ(traced.theta, plain.theta);
  return trace;
}

// The backward frame (alg, Pass::Backward) of a training trace: one, at depth 1, after the loss line
// and before the update line, which is its calling line.
void expect_backward_nested(const Trace& t, int forward_alg, int training_alg, int loss_line, int update_line) {
  std::vector<size_t> enters;
  size_t loss = t.size(), update = t.size();
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind == EventKind::Enter && e.alg == forward_alg && e.pass == Pass::Backward) enters.push_back(k);
    if (e.depth == 0 && e.ref() == LineRef{training_alg, loss_line}) loss = k;
    if (e.depth == 0 && e.ref() == LineRef{training_alg, update_line}) update = k;
  }
  ASSERT_EQ(enters.size(), 1u);
  EXPECT_EQ(t.events[enters[0]].depth, 1);
  EXPECT_LT(loss, enters[0]);
  EXPECT_EQ(t.caller_line(enters[0]), update);
  // The frame opens with the loss line's adjoint ("adjoint of line 9" of Algorithm 12, of line 5 of 11).
  ASSERT_LT(enters[0] + 1, t.size());
  EXPECT_EQ(t.events[enters[0] + 1].ref(), (LineRef{training_alg, loss_line, Pass::Backward}));
  for (size_t k = enters[0]; k < update; ++k) EXPECT_EQ(t.events[k].pass, Pass::Backward) << k;
}

}  // namespace

TEST(BackpropArch, Algorithm12Line10NestsTheTracedBackwardAndUpdatesAsUntraced) {
  const ModelConfig c = bert_config();
  TrainOptions opt;
  opt.given_masks = {{3, 5}};
  const Trace t = traced_update_matches_untraced(c, {{{}, kX}}, opt);
  expect_backward_nested(t, 9, 12, 9, 10);
}

TEST(BackpropArch, Algorithm11Line6NestsTheTracedBackwardAndUpdatesAsUntraced) {
  const ModelConfig c = ed_config();
  const Trace t = traced_update_matches_untraced(c, {{kZ, kEdX}}, TrainOptions{});
  expect_backward_nested(t, 8, 11, 5, 6);
}

namespace {

// A model of configuration c whose θ is theta_as<float> (spread 0.4).
Model spread_model(const ModelConfig& c) {
  Model m = Model::initialised(c, 1);
  m.theta = theta_as<float>(m.table);
  return m;
}

// traced_backward (untraced: no tracer) against sequence_gradient, what stepformer-cli backward writes:
// the same loss (one forward), ∇θ and the stream's gradients within kTracedDouble.
void expect_entry_matches_sequence_gradient(const Model& m, const Batch& b) {
  const TracedGradient<double> traced = traced_backward<double>(m, b, nullptr);
  const SequenceGradient batched = sequence_gradient(m, b);
  EXPECT_EQ(traced.loss, batched.loss);
  EXPECT_LT(worst_tensor_error<double>(m.table, traced.grad, batched.grad), kTracedDouble);
  ASSERT_EQ(traced.stream.X.size(), batched.stream.X.size());
  ASSERT_EQ(traced.stream.Z.size(), batched.stream.Z.size());
  for (size_t l = 0; l < traced.stream.X.size(); ++l)
    EXPECT_LT(relative_error(traced.stream.X[l], batched.stream.X[l]), kTracedDouble) << "∇X entering layer " << l + 1;
  for (size_t l = 0; l < traced.stream.Z.size(); ++l)
    EXPECT_LT(relative_error(traced.stream.Z[l], batched.stream.Z[l]), kTracedDouble) << "∇Z entering layer " << l + 1;
}

}  // namespace

TEST(BackpropArch, TracedBackwardEntryMatchesWhatTheBackwardCommandWrites) {
  const Model bert = spread_model(bert_pre_ln());
  expect_entry_matches_sequence_gradient(bert, bert_batch(bert.config));
  const Model ed = spread_model(ed_config());
  expect_entry_matches_sequence_gradient(ed, ed_batch());
  EXPECT_EQ(traced_backward<double>(ed, ed_batch(), nullptr).stream.Z.size(), static_cast<size_t>(ed.config.L_enc + 1));
}

}  // namespace test_backprop_arch
