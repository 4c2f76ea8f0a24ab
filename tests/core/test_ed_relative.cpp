// Issue 25 (not in the paper): T5's relative position bias in the encoder-decoder, T5's own
// architecture. Its encoder's self-attention uses bidirectional buckets, its decoder's causal ones,
// and its cross-attention has no bias. Checked here:
//  - the parameters: W^{l,enc}_rel and W^{l,dec}_rel, [H, relative_buckets], none in the
//    cross-attention, and the checkpoint round-trips them;
//  - the forward (Algorithm 8, traced): every B Algorithm 4 binds is W_rel[h, bucket(t_z − t_x)]
//    with the encoder's buckets bidirectional and the decoder's causal; the cross-attention binds none;
//  - the training gradient against central differences of Algorithm 8 (double, every tensor), and
//    the stepped backward (Algorithm 8's adjoint) against it, binding ∇W_rel[h, :] in both stacks;
//  - Algorithm 15 with the KV cache (the decoder's new column at its true position) equals
//    recomputation;
//  - a model with the bias learns (the loss falls);
//  - the listings of Algorithms 8 and 15 say where B acts.
// The PyTorch float64 reference (case ed_relative) is compared in test_variants_reference.cpp.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/backprop/adjoints.hpp"
#include "core/io/checkpoint.hpp"
#include "core/pseudocode/variants.hpp"
#include "core/training/pair_tasks.hpp"
#include "core/training/training.hpp"
#include "core/trace/vocabulary.hpp"
#include "ed_long_run.hpp"
#include "test_ed_support.hpp"

namespace test_ed_relative {

using namespace sf;
using namespace sf::test;

namespace {

// L_enc = L_dec = 2, H = 2, d_e = 6, d_attn = 3, d_mid = 2, d_mlp = 8, ℓ_max = 7; 6 buckets up to
// distance 8: the decoder's (causal) are exact for d < 3, the encoder's (bidirectional, 3 a sign)
// exact for d = 0 only, so both stacks reach logarithmic buckets at these lengths.
ModelConfig relative_config() {
  ModelConfig c = ed_test_config(2, 2, 2, 6, 3, 2, 8, 7, {"a", "b", "c", "d"});
  c.position = Position::Relative;
  c.relative_buckets = 6;
  c.relative_max_distance = 8;
  return c;
}

// B[t_z, t_x] = W_rel[h, bucket(t_z − t_x)] (ℓ, ℓ) for row h (0-based) of W_rel.
MatD expected_bias(const MapM<const double>& W_rel, int h, int l, bool bidirectional, const ModelConfig& c) {
  MatD B(l, l);
  for (int t_z = 0; t_z < l; ++t_z)
    for (int t_x = 0; t_x < l; ++t_x)
      B(t_z, t_x) = W_rel(h, relative_bucket(t_z - t_x, bidirectional, c.relative_buckets, c.relative_max_distance));
  return B;
}

}  // namespace

TEST(EdRelative, EachSelfAttentionHasItsWrelAndTheCheckpointKeepsThem) {
  const ModelConfig c = relative_config();
  ASSERT_EQ(validate(c), "");
  const Model m = Model::initialised(c, 3);
  for (int l = 1; l <= 2; ++l) {
    const std::string L = std::to_string(l);
    const ParamEntry& enc = m.table.at("enc.layer" + L + ".attn.W_rel");
    const ParamEntry& dec = m.table.at("dec.layer" + L + ".self_attn.W_rel");
    EXPECT_EQ(enc.shape(), (std::vector<int64_t>{2, 6}));
    EXPECT_EQ(dec.shape(), (std::vector<int64_t>{2, 6}));
    EXPECT_EQ(enc.symbol, "W^{l,enc}_rel");
    EXPECT_EQ(dec.symbol, "W^{l,dec}_rel");
    EXPECT_EQ(m.table.find("dec.layer" + L + ".cross_attn.W_rel"), nullptr);  // no bias across sequences
  }
  EXPECT_EQ(m.table.find("W_p"), nullptr);  // positions enter through B only
  const std::string path = (std::filesystem::temp_directory_path() / "stepformer_ed_relative.safetensors").string();
  save_checkpoint(path, m);
  const Checkpoint back = load_checkpoint(path);
  std::filesystem::remove(path);
  EXPECT_EQ(back.model.config.position, Position::Relative);
  EXPECT_EQ(back.model.config.relative_buckets, 6);
  EXPECT_EQ(back.model.theta, m.theta);
}

// Algorithm 4's B in each call of Algorithm 8, by shape: ℓ_z × ℓ_z in the encoder (line 5),
// ℓ_x × ℓ_x in the decoder's self-attention (line 14); a cross-attention B would be ℓ_z × ℓ_x.
// Each equals its head's W_rel row read through the stack's buckets exactly (B is a gather; the
// trace holds it in float, so the double W_rel is compared rounded to float).
TEST(EdRelative, EncoderBucketsAreBidirectionalDecoderCausalCrossNone) {
  const SpreadModel s(relative_config(), 4, 0.5);
  const EdW<const double> W = s.W();
  const Tokens z{6, 1, 2, 3, 4, 7}, x{6, 2, 3, 1};  // ℓ_z = 6, ℓ_x = 4
  Trace trace;
  Tracer tr(trace);
  edtransformer<double>(z, x, s.c, W, &tr);
  int enc = 0, dec = 0;
  for (const Event& e : trace.events) {
    if (e.alg != 4) continue;
    const Value* B = find_value(e, "B");  // a sub-step of line 6: S / √d_attn + B
    if (!B) continue;
    const int l = e.idx.l - 1, h = e.idx.h - 1;
    ASSERT_GE(l, 0);
    ASSERT_GE(h, 0);
    if (B->m.rows() == 6 && B->m.cols() == 6) {
      ++enc;
      EXPECT_TRUE(MatF(B->m) == expected_bias(W.enc[l].attn.W_rel, h, 6, true, s.c).cast<float>()) << "encoder l " << l + 1;
    } else {
      ASSERT_EQ(B->m.rows(), 4);
      ASSERT_EQ(B->m.cols(), 4);
      ++dec;
      EXPECT_TRUE(MatF(B->m) == expected_bias(W.dec[l].self_attn.W_rel, h, 4, false, s.c).cast<float>())
          << "decoder l " << l + 1;
    }
  }
  EXPECT_EQ(enc, 2 * 2);  // L_enc · H
  EXPECT_EQ(dec, 2 * 2);  // L_dec · H, and no cross-attention B
  // The directions differ where it matters: a key after the query has its own bucket in the
  // encoder (3 + 0 for d = 1) but shares bucket 0 in the decoder (masked there anyway).
  EXPECT_EQ(relative_bucket(1, true, 6, 8), 4);
  EXPECT_EQ(relative_bucket(1, false, 6, 8), 0);
}

TEST(EdRelative, GradientMatchesFiniteDifferencesForEveryTensor) {
  SpreadModel s(relative_config(), 2, 0.4);
  const Batch b = pair_batch(kEdPairs);
  EdGradient<double> g(s.table);
  const double loss = g.loss_and_gradient(s.c, s.W(), b, 1.0);
  EXPECT_NEAR(loss, ed_summed_loss(kEdPairs, s.c, s.W()), kReorderedDouble * loss);
  // Every tensor, W^{l,enc}_rel and W^{l,dec}_rel included: the batched backward against central
  // differences of Algorithm 8 (an independent forward, with its own bucket directions).
  // min_share 1e-5: the last decoder layer's b_q gets 5e-5 of ‖∇θ‖ here (its queries barely move the
  // loss), still far above the rounding noise a missing path would leave (≲ 1e-13 of it).
  check_every_tensor(s.table, s.theta.data(), g.grad.data(), [&] { return ed_summed_loss(kEdPairs, s.c, s.W()); }, 1e-5);
}

// The stepped backward reads the batched forward's cache (B = 1) and adds the same terms in another
// order: 1e-12 as test_backprop_arch.cpp's kTracedDouble derives it. Its trace binds ∇W_rel[h, :] in
// Algorithm 4's adjoint for each head of each self-attention (L_enc·H + L_dec·H), none for the cross.
TEST(EdRelative, SteppedBackwardEqualsTheBatchedGradientAndBindsEachWrelGradient) {
  const SpreadModel s(relative_config(), 2, 0.4);
  const Batch b = pair_batch({kEdPairs[2]});
  EdCache<double> cache;
  edtransformer_forward<double>(s.c, s.W(), b, 1.0, cache);
  std::vector<double> grad(s.table.total(), 0.0);
  EdW<double> dW = bind_ed<double>(s.table, grad.data());
  Trace trace;
  Tracer tr(trace);
  {
    const TraceBackward backward(&tr);
    ResidualGradients<double> kept;
    adjoint_edtransformer<double>(s.c, s.W(), cache, dW, &kept, &tr);
  }
  EdGradient<double> g(s.table);
  g.loss_and_gradient(s.c, s.W(), b, 1.0);
  for (const ParamEntry& e : s.table.entries()) {
    if (!e.name.ends_with("W_rel")) continue;
    const Eigen::Map<const Vec<double>> stepped(grad.data() + e.offset, static_cast<Eigen::Index>(e.size()));
    const Eigen::Map<const Vec<double>> batched(g.grad.data() + e.offset, static_cast<Eigen::Index>(e.size()));
    EXPECT_GT(batched.norm(), 0) << e.name;
    EXPECT_LT(relative_error(stepped, batched), 1e-12) << e.name;
  }
  int bound = 0;
  for (const Event& e : trace.events)
    if (e.pass == Pass::Backward && find_value(e, "∇W_rel[h, :]")) ++bound;
  EXPECT_EQ(bound, 2 * 2 + 2 * 2);
}

// How far the cached and recomputed p may differ. Both compute the same products in float, summed in
// another order (test_kv_cache.cpp's derivation): here θ is scaled by 8 so that the attention, and so
// the bias, moves p (logits of O(5), p up to 0.99); each logit is then within (2L + 1)·γ_16·Σ|terms|
// ≈ 5·16·2⁻²⁴·5 ≈ 2.4e-5 a side, and p within 2·max|δlogit| ≈ 5e-5: 1e-4 keeps a factor 2 (measured:
// ≤ 1.2e-7). A bias at the wrong position moves p by O(the bias's effect), 0.05 here (checked below).
constexpr double kTolCachedP = 1e-4;

TEST(EdRelative, CachedTranslationEqualsRecomputation) {
  ModelConfig c = relative_config();
  c.l_max = 12;  // 11 steps: the decoder's distances reach its logarithmic buckets
  Model m = long_running_ed(c, 5, 8);  // weights of O(0.16)
  // W_rel of O(3): B changes the attention weights by O(1)
  Rng rng(9);
  for (const ParamEntry& e : m.table.entries())
    if (e.name.ends_with("W_rel"))
      for (size_t k = 0; k < e.size(); ++k) m.theta[e.offset + k] = static_cast<float>(3 * rng.normal());
  const Tokens z{c.bos_token(), 1, 2, 3, 4, c.eos_token()};
  for (const double tau : {0.0, 0.8}) {
    EdInferenceOptions opt;
    opt.tau = tau;
    opt.seed = 3;
    const EdInferenceResult plain = edinference(z, m, opt);
    opt.kv_cache = true;
    const EdInferenceResult cached = edinference(z, m, opt);
    ASSERT_EQ(cached.x_hat, plain.x_hat) << "τ = " << tau;
    ASSERT_EQ(plain.steps.size(), 11u);  // the ℓ_max cap
    for (size_t i = 0; i < plain.steps.size(); ++i) {
      EXPECT_LT((cached.steps[i].p - plain.steps[i].p).cwiseAbs().maxCoeff(), kTolCachedP) << "step " << i + 1;
      EXPECT_LT((cached.steps[i].q - plain.steps[i].q).cwiseAbs().maxCoeff(), kTolCachedP) << "step " << i + 1;
    }
  }
  // The bias matters here: without it the last step's p moves by far more than the tolerance.
  Model flat = m;
  for (const ParamEntry& e : flat.table.entries())
    if (e.name.ends_with("W_rel"))
      for (size_t k = 0; k < e.size(); ++k) flat.theta[e.offset + k] = 0;
  EdInferenceOptions opt;
  opt.tau = 0.0;
  const Tokens x_hat = edinference(z, m, opt).x_hat;
  const Tokens x_short(x_hat.begin(), x_hat.end() - 1);
  const MatF P = edtransformer<float>(z, x_short, c, ed_weights(m)), P_flat = edtransformer<float>(z, x_short, c, ed_weights(flat));
  EXPECT_GT((P - P_flat).cwiseAbs().maxCoeff(), 100 * kTolCachedP);  // measured 0.055
}

// Reverse 1–5 letters. A uniform guess (an untrained model) scores ln N_V per token; 150 Adam steps of
// a 1 + 1-layer model with the relative bias (no W_p at all: every position it knows comes through B)
// must end clearly below it, by test_variants_training.cpp's bar (0.9·ln N_V), every step finite
// (measured: 3.37 → 2.65 in about 1 s).
TEST(EdRelative, TrainingLowersTheLoss) {
  TaskOptions t;
  t.seed = 2;
  t.train_size = 1000;
  t.val_size = 100;
  t.max_chars = 5;
  const Dataset d = make_pair_task("reverse", t);
  ModelConfig c = ed_test_config(1, 1, 2, 16, 8, 8, 32, 7, d.vocab);
  c.position = Position::Relative;
  c.relative_buckets = 8;
  c.relative_max_distance = 8;
  TrainOptions opt;
  opt.lr = 1e-2;
  opt.min_lr = 1e-3;
  opt.steps = 150;
  opt.warmup = 15;
  opt.batch = 32;
  Trainer trainer(Model::initialised(c, 1), d, opt);
  const double initial = trainer.evaluate();
  EXPECT_NEAR(initial, std::log(c.N_V()), 0.3);
  while (!trainer.finished()) ASSERT_TRUE(trainer.step().finite);
  const double val = trainer.evaluate();
  RecordProperty("initial_validation_loss", std::to_string(initial));
  RecordProperty("validation_loss", std::to_string(val));
  EXPECT_LT(val, 0.9 * std::log(static_cast<double>(c.N_V())));
}

TEST(EdRelative, ListingsSayWhereBActs) {
  const ModelConfig c = relative_config();
  auto text = [](const PseudoAlgorithm& a, int n) {
    for (const PseudoLine& l : a.lines)
      if (l.number == n) return l.text + " | " + l.variant;
    return std::string("no line ") + std::to_string(n);
  };
  const PseudoAlgorithm a8 = pseudocode_for(8, c);
  EXPECT_NE(text(a8, 5).find("bidirectional buckets"), std::string::npos) << text(a8, 5);
  EXPECT_NE(text(a8, 14).find("causal buckets"), std::string::npos) << text(a8, 14);
  EXPECT_NE(text(a8, 16).find("no B: cross-attention"), std::string::npos) << text(a8, 16);
  EXPECT_NE(text(a8, 16).find("relative position bias"), std::string::npos) << text(a8, 16);
  const PseudoAlgorithm a15 = pseudocode_for(15, c, true);
  EXPECT_NE(text(a15, 4).find("causal B[:, t_x] at t_x = length(x̂)"), std::string::npos) << text(a15, 4);
}

}  // namespace test_ed_relative
