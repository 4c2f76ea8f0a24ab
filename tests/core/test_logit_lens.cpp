// The logit lens and direct logit attribution (core/interpret/, interpretation tools, not in the paper):
//   - at the last layer the lens is the forward's P bit for bit (same helpers on the same float X^L);
//   - at every layer it matches the lens computed independently in PyTorch float64
//     (tests/data/logit_lens_reference.json, tests/reference/gen_logit_lens_reference.py) on GPT (pre-LN,
//     post-LN, RMSNorm + tied W_u + b_u), BERT (post-LN; pre-LN with the checkpoint extras) and the
//     encoder-decoder's decoder (post-LN, pre-LN);
//   - the attribution's parts sum to the forward's logit (with no final norm, and through a frozen final
//     norm), and a layer's heads with its b_o add up to that attention sub-layer's output read through W_u.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>

#include "core/arch/architecture.hpp"
#include "core/experiments/interventions.hpp"
#include "core/interpret/logit_lens.hpp"
#include "core/model/error.hpp"
#include "reference_json.hpp"

namespace test_logit_lens {

using namespace sf;
using namespace sf::test;

namespace {

struct Case {
  std::string name;
  const json* doc;
  ModelConfig c;
  Model model() const {
    Model m(c);
    m.theta = exact_floats(json_tensors(doc->at("params"), m.table));
    return m;
  }
  Tokens z() const { return doc->contains("z") ? doc->at("z").get<Tokens>() : Tokens{}; }
  Tokens x() const { return doc->at("x").get<Tokens>(); }
};

std::vector<Case> cases() {
  static const json doc = load_test_json("logit_lens_reference.json");
  std::vector<Case> out;
  for (const json& k : doc.at("cases")) out.push_back({k.at("name").get<std::string>(), &k, config_from_json(k.at("config").dump())});
  return out;
}

const Case& case_named(const std::string& name) {
  static const std::vector<Case> all = cases();
  for (const Case& k : all)
    if (k.name == name) return k;
  throw Error("no case " + name);
}

double max_gap(const MatF& a, const Mat<double>& b) { return (a.cast<double>() - b).cwiseAbs().maxCoeff(); }

// The attribution's sum against the forward's float logit. Each part, and the logit, is a float forward's
// value read in double: the stream's sums telescope exactly (differences of the bound floats), so the gap is
// the float rounding of the values themselves: a head's W_o Y (H·d_mid = 6 products: ≤ 6u relative, γ_n of
// Higham), the logit's W_u X (d_e = 8: ≤ 8u), and up to 2L + 1 = 5 norms on a part's way (each ≤ (d_e + 4)u
// of its output). In all ≤ (6 + 8 + 5·12)·u ≈ 74u of Σ|parts|; 128u leaves room, u = 2⁻²⁴. A real fault (a
// norm not centred, a β left out, a wrong head slice) is off by O(0.1) of the logit.
double sum_tolerance(const LogitAttribution& a) {
  double scale = std::abs(a.logit);
  for (const DlaPart& p : a.parts) scale += std::abs(p.value);
  return 128 * std::numeric_limits<float>::epsilon() / 2 * scale;
}

}  // namespace

TEST(LogitLensReference, EveryLayerMatchesPyTorch) {
  const std::vector<Case> all = cases();
  ASSERT_EQ(all.size(), 7u);
  for (const Case& k : all) {
    SCOPED_TRACE("case " + k.name);
    const Model m = k.model();
    const LensRun run = logit_lens(m, k.z(), k.x());
    const json& ref = k.doc->at("lens");
    ASSERT_EQ(run.lens.P.size(), ref.size());
    ASSERT_EQ(run.lens.layers(), k.c.arch == "ed" ? k.c.L_dec : k.c.L);
    // kRefFloat (reference_json.hpp): a P computed in float against float64; the lens at layer l is the P
    // of a network l layers deep, so the same bound holds.
    for (size_t l = 0; l < ref.size(); ++l) EXPECT_LT(max_gap(run.lens.P[l], json_matrix(ref[l])), kRefFloat) << "layer " << l;
  }
}

TEST(LogitLens, LastLayerIsTheForwardsPExactly) {
  for (const Case& k : cases()) {
    SCOPED_TRACE("case " + k.name);
    const Model m = k.model();
    const LensRun run = logit_lens(m, k.z(), k.x());
    const MatF P = architecture(m.config).forward(m, k.z(), k.x());  // untraced
    EXPECT_TRUE((run.lens.P.back().array() == run.lens.P_model.array()).all());
    EXPECT_TRUE((run.lens.P.back().array() == P.array()).all());
    EXPECT_FALSE((run.lens.P.front().array() == P.array()).all());  // the embedding's lens is not P
  }
}

TEST(DirectLogitAttribution, PartsSumToTheLogitWithAndWithoutAFinalNorm) {
  // gpt_post_ln has no final norm (only the layers' own norms, frozen); the others read through γ_f, β_f
  // (RMSNorm: no β) or the decoder's; gpt_rms_tied_bias adds b_u.
  for (const char* name : {"gpt_post_ln", "gpt", "gpt_rms_tied_bias", "ed", "ed_pre_ln"}) {
    const Case& k = case_named(name);
    const Model m = k.model();
    for (int pos = 1; pos <= static_cast<int>(k.x().size()); ++pos) {
      const LogitAttribution a = direct_logit_attribution(m, k.z(), k.x(), pos);
      EXPECT_NEAR(a.sum(), a.logit, sum_tolerance(a)) << name << " position " << pos;
      EXPECT_EQ(a.parts.front().kind, DlaPart::Kind::Embedding);
    }
  }
}

TEST(DirectLogitAttribution, HeadsAndBiasAddUpToTheAttentionSubLayer) {
  // Pre-LN GPT: layer l's attention adds Ṽ (Algorithm 5 line 4) to the stream, which reaches the logit only
  // through the final norm frozen at the run: u = C(γ ⊙ W_u[y, :]ᵀ / σ), σ = √(v + ε) of X^L[:, t] (computed
  // here from the trace, apart from core's through_norm).
  const Case& k = case_named("gpt");
  const Model m = k.model();
  const LensRun run = logit_lens(m, k.z(), k.x());
  const GptW<const float> W = m.weights();
  const std::vector<MatF> X = residual_stream(m, run.trace);
  const int pos = 4, y = top_token(run.lens.P_model, pos - 1);
  const LogitAttribution a = direct_logit_attribution(m, run.trace, pos, y);
  const Vec<double> x = X.back().col(pos - 1).cast<double>(), xc = (x.array() - x.mean()).matrix();
  const double sigma = std::sqrt(xc.squaredNorm() / x.size() + m.config.eps);
  Vec<double> u = (W.gamma.cast<double>().array() * W.W_u.row(y - 1).transpose().cast<double>().array() / sigma).matrix();
  u.array() -= u.mean();
  for (int l = 1; l <= m.config.L; ++l) {
    const Value* Vt = value_at(run.trace, PatchPoint{lines::d_transformer::attention, 5, 4, l, 0, "Ṽ"});
    ASSERT_NE(Vt, nullptr);
    const double whole = u.dot(Vt->m.col(pos - 1).cast<double>());
    double parts = 0, scale = 0;
    int heads = 0;
    for (const DlaPart& p : a.parts)
      if (p.l == l && (p.kind == DlaPart::Kind::Head || p.kind == DlaPart::Kind::AttentionBias)) {
        parts += p.value, scale += std::abs(p.value), heads += p.kind == DlaPart::Kind::Head;
      }
    EXPECT_EQ(heads, m.config.H);
    // Ṽ = W_o Y + b_o in float: 1 + H·d_mid = 7 terms, ≤ 7u relative each (γ_n); σ differs from the forward's
    // float σ by ≤ (d_e + 4)u: 32u of Σ|parts| covers both.
    EXPECT_NEAR(parts, whole, 32 * std::numeric_limits<float>::epsilon() / 2 * scale) << "layer " << l;
  }
}

TEST(DirectLogitAttribution, BertSaysWhyItHasNone) {
  const Case& k = case_named("bert");
  const Model m = k.model();
  try {
    direct_logit_attribution(m, k.z(), k.x(), 3);
    ADD_FAILURE() << "no error";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("not linear"), std::string::npos) << e.what();
  }
}

TEST(DirectLogitAttribution, RejectsAPositionOutsideTheSequence) {
  const Case& k = case_named("gpt");
  EXPECT_THROW(direct_logit_attribution(k.model(), k.z(), k.x(), 0), Error);
  EXPECT_THROW(direct_logit_attribution(k.model(), k.z(), k.x(), static_cast<int>(k.x().size()) + 1), Error);
}

}  // namespace test_logit_lens
