// The encoder-decoder against PyTorch (tests/data/ed_reference.json, written in float64 by
// tests/reference/gen_ed_reference.py): Algorithm 8's P and every intermediate the file holds
// (float through the trace of the stepped run, double through the untraced run and the batched
// forward of the gradients), and Algorithm 11's loss with its gradient for every tensor: one pair
// with the summed loss, and three pairs of different ℓ_z and ℓ_x (one padded batch, key-padded
// contexts) with the mean loss.
#include <gtest/gtest.h>

#include <string>

#include "core/algorithms/algorithms.hpp"
#include "reference_json.hpp"
#include "test_ed_support.hpp"

namespace test_ed_reference {

using namespace sf;
using namespace sf::test;

namespace {

struct Reference {
  json doc;
  ModelConfig c;
  ParamTable table;
  std::vector<double> theta;   // float32 values, in the table's layout
  std::vector<float> theta_f;  // the same values
};

const Reference& reference() {
  static const Reference r = [] {
    json doc = load_test_json("ed_reference.json");
    const ModelConfig c = config_from_json(doc.at("config").dump());
    ParamTable table(c);
    std::vector<double> theta = json_tensors(doc.at("params"), table);
    std::vector<float> theta_f = exact_floats(theta);
    return Reference{std::move(doc), c, std::move(table), std::move(theta), std::move(theta_f)};
  }();
  return r;
}

const json& forward_doc() { return reference().doc.at("forward"); }

MatD M(const json& j) { return json_matrix(j); }

// Which MHAttention of a layer an Algorithm 4/5 event belongs to: for layer l, the trace holds
// the encoder's (line 5), then the decoder's self-attention (line 14), then its cross-attention
// (line 16).
enum Block { kEncoder = 0, kSelf = 1, kCross = 2 };

// One head's Q, K, V, S, A, Y against the reference's record of it.
void expect_head(const Trace& trace, int l, int h, Block block, const json& ref, double tol, const std::string& at) {
  const EventKind L = EventKind::Line;
  const std::pair<int, const char*> lines[] = {{1, "Q"}, {2, "K"}, {3, "V"}, {4, "S"}};
  for (const auto& [line, name] : lines)
    EXPECT_LT(gap(traced(trace, L, 4, line, l, h, name, block), M(ref.at(name))), tol) << name << at;
  if (ref.contains("S_masked")) {
    EXPECT_LT(gap(traced(trace, L, 4, 5, l, h, "S", block), M(ref.at("S_masked"))), tol) << "S masked" << at;
  }
  EXPECT_LT(gap(traced(trace, L, 4, 6, l, h, "softmax(S/√d_attn)", block), M(ref.at("A"))), tol) << "A" << at;
  EXPECT_LT(gap(traced(trace, L, 4, 6, l, h, "Ṽ", block), M(ref.at("Y"))), tol) << "Y^h" << at;
}

// A value of one layer that the trace binds: the event (kind, alg, line), the value's name, which
// of the layer's events with that name (its Block for Algorithm 5's), and the reference's key.
struct LayerValue {
  EventKind kind;
  int alg, line;
  const char* name;
  size_t nth;
  const char* key;
};
constexpr EventKind kLine = EventKind::Line, kSub = EventKind::SubStep;
const std::vector<LayerValue> kEncoderValues{
    {kLine, 5, 3, "Y", kEncoder, "Y"},          {kLine, 5, 4, "Ṽ", kEncoder, "mha"},
    {kLine, 8, 5, "Z", 0, "Z_after_attn"},      {kLine, 8, 6, "Z", 0, "Z_ln1"},
    {kSub, 8, 7, "W_mlp1 Z + b_mlp1 1ᵀ", 0, "mlp_pre"}, {kSub, 8, 7, "ReLU(…)", 0, "mlp_relu"},
    {kLine, 8, 7, "Z", 0, "Z_after_mlp"},       {kLine, 8, 8, "Z", 0, "Z_ln2"}};
const std::vector<LayerValue> kDecoderValues{
    {kLine, 5, 3, "Y", kSelf, "self_Y"},        {kLine, 5, 4, "Ṽ", kSelf, "self_mha"},
    {kLine, 5, 3, "Y", kCross, "cross_Y"},      {kLine, 5, 4, "Ṽ", kCross, "cross_mha"},
    {kLine, 8, 14, "X", 0, "X_after_self_attn"}, {kLine, 8, 15, "X", 0, "X_ln3"},
    {kLine, 8, 16, "X", 0, "X_after_cross_attn"}, {kLine, 8, 17, "X", 0, "X_ln4"},
    {kSub, 8, 18, "W_mlp3 X + b_mlp3 1ᵀ", 0, "mlp_pre"}, {kSub, 8, 18, "ReLU(…)", 0, "mlp_relu"},
    {kLine, 8, 18, "X", 0, "X_after_mlp"},      {kLine, 8, 19, "X", 0, "X_ln5"}};

void expect_layer(const Trace& trace, int l, const std::vector<LayerValue>& values, const json& ref, double tol,
                  const std::string& at) {
  for (const LayerValue& v : values)
    EXPECT_LT(gap(traced(trace, v.kind, v.alg, v.line, l, 0, v.name, v.nth), M(ref.at(v.key))), tol) << v.key << at;
}

// Values the batched forward keeps, each against the reference's value under its key.
void expect_batched(const json& ref, const std::vector<std::pair<const MatD*, const char*>>& values, double tol,
                    const std::string& at) {
  for (const auto& [got, key] : values) EXPECT_LT(gap(*got, M(ref.at(key))), tol) << key << at;
}

}  // namespace

TEST(EdReference, TheFileMatchesTheTable) {
  const Reference& r = reference();
  EXPECT_EQ(r.c.arch, "ed");
  EXPECT_EQ(r.c.N_V(), 13);
  EXPECT_EQ(r.table.entries().size(), r.doc.at("params").size());  // json_tensors found each of them
  EXPECT_EQ(r.table.at("dec.layer2.cross_attn.W_k").shape(), (std::vector<int64_t>{2, 4, 8}));
  EXPECT_EQ(forward_doc().at("z").get<Tokens>(), (Tokens{12, 3, 1, 4, 13}));
  EXPECT_EQ(forward_doc().at("x").get<Tokens>(), (Tokens{12, 5, 9, 2, 6, 13}));
}

TEST(EdReference, ForwardInFloatMatchesEveryTracedIntermediate) {
  const Reference& r = reference();
  const json& f = forward_doc();
  Trace trace;
  Tracer tr(trace);
  const MatF P = edtransformer<float>(f.at("z").get<Tokens>(), f.at("x").get<Tokens>(), r.c,
                                      bind_ed<const float>(r.table, r.theta_f.data()), &tr);
  const double tol = kRefFloat;
  const EventKind L = EventKind::Line, S = EventKind::SubStep;
  EXPECT_LT(gap(P.cast<double>(), M(f.at("P"))), tol) << "P";
  EXPECT_LT(gap(traced(trace, L, 8, 3, 0, 0, "Z"), M(f.at("Z0"))), tol) << "Z0";
  for (int l = 1; l <= r.c.L_enc; ++l) {
    const json& layer = f.at("encoder_layers").at(l - 1);
    const std::string at = " of encoder layer " + std::to_string(l);
    for (int h = 1; h <= r.c.H; ++h)
      expect_head(trace, l, h, kEncoder, layer.at("heads").at(h - 1), tol, at + ", head " + std::to_string(h));
    expect_layer(trace, l, kEncoderValues, layer, tol, at);
  }
  EXPECT_LT(gap(traced(trace, L, 8, 8, r.c.L_enc, 0, "Z"), M(f.at("Z_final"))), tol) << "Z_final";
  EXPECT_LT(gap(traced(trace, L, 8, 12, 0, 0, "X"), M(f.at("X0"))), tol) << "X0";
  for (int l = 1; l <= r.c.L_dec; ++l) {
    const json& layer = f.at("decoder_layers").at(l - 1);
    const std::string at = " of decoder layer " + std::to_string(l);
    for (int h = 1; h <= r.c.H; ++h) {
      const std::string ah = at + ", head " + std::to_string(h);
      expect_head(trace, l, h, kSelf, layer.at("self_heads").at(h - 1), tol, ah + " (self)");
      expect_head(trace, l, h, kCross, layer.at("cross_heads").at(h - 1), tol, ah + " (cross)");
    }
    expect_layer(trace, l, kDecoderValues, layer, tol, at);
  }
  EXPECT_LT(gap(traced(trace, L, 8, 19, r.c.L_dec, 0, "X"), M(f.at("X_final"))), tol) << "X_final";
  EXPECT_LT(gap(traced(trace, S, 8, 21, 0, 0, "W_u X"), M(f.at("logits"))), tol) << "logits";
  EXPECT_LT(gap(traced(trace, L, 8, 21, 0, 0, "P"), M(f.at("P"))), tol) << "P, traced";
}

TEST(EdReference, ForwardInDoubleMatchesPAndTheBatchedIntermediates) {
  const Reference& r = reference();
  const json& f = forward_doc();
  const Tokens z = f.at("z").get<Tokens>(), x = f.at("x").get<Tokens>();
  const EdW<const double> W = bind_ed<const double>(r.table, r.theta.data());
  const double tol = kRefDouble;
  EXPECT_LT(gap(edtransformer<double>(z, x, r.c, W), M(f.at("P"))), tol) << "P, Algorithm 8";
  // The batched forward of the gradients keeps every line's output: one pair, no padding.
  EdCache<double> cache;
  edtransformer_forward<double>(r.c, W, pair_batch({{z, x}}), 1.0, cache);
  EXPECT_LT(gap(cache.loss.P, M(f.at("P"))), tol) << "P, batched";
  EXPECT_LT(gap(cache.enc[0].attn_ln.X, M(f.at("Z0"))), tol) << "Z0";
  for (int l = 1; l <= r.c.L_enc; ++l) {
    const json& layer = f.at("encoder_layers").at(l - 1);
    const LayerCache<double>& lc = cache.enc[l - 1];
    const std::string at = ", encoder layer " + std::to_string(l);
    expect_batched(layer, {{&lc.attn.Y, "Y"}, {&lc.attn_ln.R, "Z_after_attn"}, {&lc.mlp_ln.X, "Z_ln1"},
                           {&lc.mlp.H_pre, "mlp_pre"}, {&lc.mlp.H_act, "mlp_relu"}, {&lc.mlp_ln.R, "Z_after_mlp"}},
                   tol, at);
    const MatD& next = l < r.c.L_enc ? cache.enc[l].attn_ln.X : cache.Z;
    EXPECT_LT(gap(next, M(layer.at("Z_ln2"))), tol) << "line 8" << at;
  }
  EXPECT_LT(gap(cache.Z, M(f.at("Z_final"))), tol) << "Z_final";
  EXPECT_LT(gap(cache.dec[0].self_ln.X, M(f.at("X0"))), tol) << "X0";
  const Eigen::Index l_x = static_cast<Eigen::Index>(x.size());
  for (int l = 1; l <= r.c.L_dec; ++l) {
    const json& layer = f.at("decoder_layers").at(l - 1);
    const EdDecoderLayerCache<double>& lc = cache.dec[l - 1];
    const std::string at = ", decoder layer " + std::to_string(l);
    for (int h = 1; h <= r.c.H; ++h)  // the batched cross-attention's weights, ℓ_z × ℓ_x per head
      EXPECT_LT(gap(lc.cross.A.middleCols((h - 1) * l_x, l_x), M(layer.at("cross_heads").at(h - 1).at("A"))), tol)
          << "cross A, head " << h << at;
    expect_batched(layer, {{&lc.self_attn.Y, "self_Y"}, {&lc.self_ln.R, "X_after_self_attn"}, {&lc.cross_ln.X, "X_ln3"},
                           {&lc.cross.Y, "cross_Y"}, {&lc.cross_ln.R, "X_after_cross_attn"}, {&lc.mlp_ln.X, "X_ln4"},
                           {&lc.mlp.H_pre, "mlp_pre"}, {&lc.mlp.H_act, "mlp_relu"}, {&lc.mlp_ln.R, "X_after_mlp"}},
                   tol, at);
    const MatD& next = l < r.c.L_dec ? cache.dec[l].self_ln.X : cache.X;
    EXPECT_LT(gap(next, M(layer.at("X_ln5"))), tol) << "line 19" << at;
  }
  EXPECT_LT(gap(cache.X, M(f.at("X_final"))), tol) << "X_final";
}

namespace {

template <class T>
void check_gradient_case(const std::string& name, double tol) {
  const Reference& r = reference();
  const json& g = r.doc.at("grads").at(name);
  std::vector<Example> pairs;
  for (const json& p : g.at("pairs")) pairs.push_back({p.at("z").get<Tokens>(), p.at("x").get<Tokens>()});
  const Batch b = pair_batch(pairs);
  const bool mean = g.at("reduction").get<std::string>() == "mean";
  if (name == "batch") {  // a padded batch: x to 8 tokens, z to 7 with key padding
    EXPECT_TRUE(mean);
    EXPECT_EQ(b.lengths, (std::vector<int>{4, 3, 8}));
    EXPECT_EQ(b.z_lengths, (std::vector<int>{3, 7, 5}));
  }
  const T w = mean ? T(1) / static_cast<T>(b.n_targets()) : T(1);
  std::vector<T> theta(r.theta.begin(), r.theta.end());
  EdGradient<T> grad(r.table);
  const T loss = grad.loss_and_gradient(r.c, bind_ed<const T>(r.table, theta.data()), b, w);
  const double want_loss = g.at("loss").get<double>();
  EXPECT_NEAR(loss, want_loss, tol * std::abs(want_loss)) << name;
  const std::vector<double> want = json_tensors(g.at("grads"), r.table);
  const double scale = Eigen::Map<const Vec<double>>(want.data(), want.size()).norm();
  for (const ParamEntry& e : r.table.entries()) {
    const Eigen::Map<const Vec<double>> ref(want.data() + e.offset, e.size());
    const Vec<double> got = Eigen::Map<const Vec<T>>(grad.grad.data() + e.offset, e.size()).template cast<double>();
    if (zero_by_softmax_shift(e.name)) {  // ∂loss/∂b_k = 0: both sides are rounding noise
      EXPECT_LT(got.norm(), tol * scale) << name << ": " << e.name;
      EXPECT_LT(ref.norm(), tol * scale) << name << ": " << e.name;
      continue;
    }
    EXPECT_GT(ref.norm(), 1e-6 * scale) << name << ": " << e.name;  // every other tensor learns, the encoder's too
    EXPECT_LT(relative_error(got, ref), tol) << name << ": " << e.name;
  }
}

}  // namespace

TEST(EdReference, GradientOfOnePairSummedLossDouble) { check_gradient_case<double>("single", kRefDoubleGradient); }
TEST(EdReference, GradientOfAPaddedBatchMeanLossDouble) { check_gradient_case<double>("batch", kRefDoubleGradient); }
TEST(EdReference, GradientOfOnePairSummedLossFloat) { check_gradient_case<float>("single", kRefFloatGradient); }
TEST(EdReference, GradientOfAPaddedBatchMeanLossFloat) { check_gradient_case<float>("batch", kRefFloatGradient); }

}  // namespace test_ed_reference
