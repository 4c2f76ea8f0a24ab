// BERT (core/arch/bert.cpp, core/algorithms/alg09_etransformer.cpp, fill_in.cpp): the
// architecture object and its parameter table, Algorithm 9 by hand on a tiny model (lines 10–12),
// its properties (column distributions, bidirectional attention, traced == untraced, Mask ≡ 1),
// its exact trace on a 1-layer, 2-head model and 3 tokens, and filling in [MASK].
#include <gtest/gtest.h>

#include <unistd.h>

#include <cmath>
#include <filesystem>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/arch/bert.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "float_bounds.hpp"
#include "test_bert_support.hpp"

namespace test_bert {

using namespace sf;
using namespace sf::test;

namespace {

// d_f = 6 ≠ d_e = 8: W_u must be N_V×d_f. N_V = 8: mask_token 6, bos_token 7, eos_token 8.
ModelConfig bert_config() { return bert_test_config(2, 2, 8, 4, 3, 16, 6, 8, {"a", "b", "c", "d", "e"}); }


BertW<const float> W_of(const Model& m) { return bind_bert<const float>(m.table, m.theta.data()); }

const Value* value(const Event& e, const std::string& name) { return find_value(e, name); }

// The Line event (alg, line) with loop index l (0: any), the first one.
const Event& line_event(const Trace& tr, int alg, int line, int l = 0) {
  for (const Event& e : tr.events)
    if (e.kind == EventKind::Line && e.alg == alg && e.line == line && (l == 0 || e.idx.l == l)) return e;
  throw std::runtime_error("no such line event");
}

}  // namespace

TEST(Bert, ArchitectureIsRegisteredAfterGpt) {
  const Architecture& a = architecture("bert");
  EXPECT_EQ(a.name(), "bert");
  EXPECT_EQ(a.title(), "BERT: encoder-only transformer");
  EXPECT_EQ(a.forward_algorithm(), 9);
  EXPECT_EQ(a.training_algorithm(), 12);
  EXPECT_EQ(a.output(), OutputKind::FillIn);
  EXPECT_FALSE(a.has_context());
  EXPECT_EQ(a.config_keys(), (std::vector<std::string>{"L", "d_f"}));
  ASSERT_GE(all_architectures().size(), 2u);
  EXPECT_EQ(all_architectures()[0]->name(), "gpt");
  EXPECT_EQ(all_architectures()[1]->name(), "bert");
  EXPECT_EQ(a.paper_training(3, 2)->algorithm(), 12);
}

TEST(Bert, ParameterTableInThePapersOrderWithWuOfDfColumns) {
  ModelConfig c = bert_config();
  c.L = 1;
  const ParamTable t(c);
  std::vector<std::string> names;
  for (const ParamEntry& e : t.entries()) names.push_back(e.name);
  EXPECT_EQ(names, (std::vector<std::string>{
                       "W_e", "W_p", "layer1.attn.W_q", "layer1.attn.b_q", "layer1.attn.W_k", "layer1.attn.b_k",
                       "layer1.attn.W_v", "layer1.attn.b_v", "layer1.attn.W_o", "layer1.attn.b_o", "layer1.gamma1",
                       "layer1.beta1", "layer1.gamma2", "layer1.beta2", "layer1.W_mlp1", "layer1.b_mlp1",
                       "layer1.W_mlp2", "layer1.b_mlp2", "W_f", "b_f", "gamma", "beta", "W_u"}));
  EXPECT_EQ(t.at("W_e").shape(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(t.at("W_p").shape(), (std::vector<int64_t>{8, 8}));
  EXPECT_EQ(t.at("layer1.attn.W_v").shape(), (std::vector<int64_t>{2, 3, 8}));
  EXPECT_EQ(t.at("W_f").shape(), (std::vector<int64_t>{6, 8}));
  EXPECT_EQ(t.at("b_f").shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(t.at("gamma").shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(t.at("beta").shape(), (std::vector<int64_t>{6}));
  EXPECT_EQ(t.at("W_u").shape(), (std::vector<int64_t>{8, 6}));  // N_V × d_f, not N_V × d_e
  EXPECT_EQ(t.at("W_f").role, ParamRole::Weight);
  EXPECT_EQ(t.at("b_f").role, ParamRole::Bias);
  EXPECT_EQ(t.at("gamma").role, ParamRole::Gain);
  // The views bind the same storage as the table's offsets.
  Model m = Model::initialised(c, 1);
  const BertW<float> W = bind_bert<float>(m.table, m.theta.data());
  EXPECT_EQ(W.layers.size(), 1u);
  EXPECT_EQ(W.W_f.data(), m.theta.data() + t.at("W_f").offset);
  EXPECT_EQ(W.b_f.data(), m.theta.data() + t.at("b_f").offset);
  EXPECT_EQ(W.W_u.data(), m.theta.data() + t.at("W_u").offset);
  EXPECT_EQ(W.W_u.rows(), 8);
  EXPECT_EQ(W.W_u.cols(), 6);
  EXPECT_EQ(W.gamma.size(), 6);
  EXPECT_EQ(W.layers[0].W_mlp2.data(), m.theta.data() + t.at("layer1.W_mlp2").offset);
}

TEST(Bert, ConfigurationAndCheckpointRoundTrip) {
  ModelConfig c = bert_config();
  c.d_f = 5;
  const std::string json = to_json(c);
  EXPECT_NE(json.find("\"d_f\""), std::string::npos);
  EXPECT_EQ(json.find("\"L_enc\""), std::string::npos);  // only BERT's own keys
  const ModelConfig back = config_from_json(json);
  EXPECT_EQ(back.arch, "bert");
  EXPECT_EQ(back.d_f, 5);
  EXPECT_EQ(back.L, c.L);
  EXPECT_THROW(config_from_json(R"({"arch": "bert", "L_enc": 2})"), Error);
  // A checkpoint of a BERT model holds Algorithm 9's table and comes back bit for bit.
  const Model m = spread_model(c, 9, 0.5);
  const std::filesystem::path path =
      std::filesystem::temp_directory_path() / ("stepformer_bert_" + std::to_string(::getpid()) + ".safetensors");
  save_checkpoint(path.string(), m);
  const Checkpoint ck = load_checkpoint(path.string());
  std::filesystem::remove(path);
  EXPECT_EQ(ck.model.config.arch, "bert");
  EXPECT_EQ(ck.model.table.at("W_u").shape(), (std::vector<int64_t>{8, 5}));
  EXPECT_EQ(ck.model.theta, m.theta);
}

// Lines 10–12 of Algorithm 9 computed by hand. γ²_1 = 0 and β²_1 = (1, −1) make X = (1, −1) in
// every column after line 8, whatever came before; then, with d_f = 2:
//   L10: W_f X + b_f = [1 0; 0.5 −1]·(1, −1) + (0.1, −0.2) = (1.1, 1.3);
//        GELU(x) = x·Φ(x): GELU(1.1) = 1.1 · 0.864334 = 0.950767, GELU(1.3) = 1.3 · 0.903200 = 1.174159
//   L11: m = 1.062463, v = 0.111696² = 0.012476, (e − m)/√(v + 1e-5) = (−0.999599, 0.999599);
//        ⊙ γ = (2, 0.5), + β = (0, 1): X = (−1.999199, 1.499800)
//   L12: W_u = [1 0; 0 1; 1 1; −1 0; 0 0]: W_u X = (−1.999199, 1.499800, −0.499399, 1.999199, 0),
//        P = softmax = (0.009955, 0.329318, 0.044604, 0.542628, 0.073496).
TEST(Bert, HandWorkedLines10To12) {
  const ModelConfig c = bert_test_config(1, 1, 2, 1, 1, 2, 2, 4, {"a", "b"});  // N_V = 5
  Model m = Model::initialised(c, 5);
  BertW<float> W = bind_bert<float>(m.table, m.theta.data());
  W.layers[0].gamma2.setZero();
  W.layers[0].beta2 << 1, -1;
  W.W_f << 1, 0, 0.5, -1;
  W.b_f << 0.1f, -0.2f;
  W.gamma << 2, 0.5;
  W.beta << 0, 1;
  W.W_u << 1, 0, 0, 1, 1, 1, -1, 0, 0, 0;
  Trace trace;
  Tracer tr(trace);
  const Tokens x{4, 1, 2};
  const MatF P = etransformer<float>(x, c, W_of(m), &tr);
  const MatF& X8 = value(line_event(trace, 9, 8), "X")->m;
  const MatF& X10 = value(line_event(trace, 9, 10), "X")->m;
  const MatF& X11 = value(line_event(trace, 9, 11), "X")->m;
  ASSERT_EQ(X10.rows(), 2);
  ASSERT_EQ(X10.cols(), 3);
  ASSERT_EQ(P.rows(), 5);
  ASSERT_EQ(P.cols(), 3);
  const double pre[] = {1.1, 1.3};
  const double gelu[] = {0.9507673, 1.1741594};  // 7 and 8 significant digits
  const double ln[] = {-1.9991989, 1.4997997};
  const double p[] = {0.00995451, 0.32931815, 0.04460408, 0.54262773, 0.07349553};  // 6 and 8 digits
  // Tolerances (u = 2⁻²⁴, k = kFunctionRoundings), each plus the printed constant's own rounding.
  // Line 10's pre-activation: W_f X is exact (entries 0, ±0.5, ±1 on ±1); + b_f rounds b_f itself
  // (u·|b_f| ≤ 0.2u) and the sum (u·1.3).
  const double pre_error = kFloatU * (0.2 + 1.3);
  // GELU: its slope (≤ 1.13 at 1.3) times pre_error, plus its own |x|·γ_{k+3} (test_trace.cpp).
  const double gelu_error = 1.13 * pre_error + 1.3 * float_gamma(kFunctionRoundings + 3);
  // Line 11: (e − m)/√(v + ε) of a 2-vector is ±(1 − ε/2v) whatever e's own error (that moves it by
  // ε/(v + ε) ≈ 1e-3 of gelu_error/|d|, negligible); m's rounding moves e − m by u·|m|/|d| relative
  // (|m|/|d| = 1.06/0.11 ≈ 10), then e − m, the square, the sum, /2, + ε, √ (k), the division: 6 + k
  // roundings. ⊙ γ (≤ 2) and + β round once more (u·|X| ≤ 2u).
  const double m_over_d = (gelu[0] + gelu[1]) / (gelu[1] - gelu[0]);
  const double ln_error = 2 * float_gamma(m_over_d + 6 + kFunctionRoundings) + 2 * kFloatU;
  // Line 12: each logit sums ≤ 2 entries of X (δ ≤ 2·ln_error + u·2), then the softmax over 5.
  const double p_error = float_softmax_error(5, 2 * ln_error + 2 * kFloatU);
  for (int t = 0; t < 3; ++t) {
    // Line 8: γ² = 0, so X = 0·(…) + β² exactly.
    EXPECT_EQ(X8(0, t), 1.0f);
    EXPECT_EQ(X8(1, t), -1.0f);
    for (int i = 0; i < 2; ++i) {
      EXPECT_NEAR(X10(i, t), gelu[i], gelu_error + print_rounding(gelu[i], i == 0 ? 7 : 8))
          << "line 10, row " << i + 1 << ", column " << t + 1;
      EXPECT_NEAR(X11(i, t), ln[i], ln_error + print_rounding(ln[i], 8)) << "line 11, row " << i + 1 << ", column " << t + 1;
    }
    for (int v = 0; v < 5; ++v)
      EXPECT_NEAR(P(v, t), p[v], p_error * p[v] + print_rounding(p[v], v == 0 ? 6 : 8))
          << "line 12, row " << v + 1 << ", column " << t + 1;
  }
  // Line 10's sub-step binds the pre-activation W_f X + b_f 1ᵀ = (1.1, 1.3).
  for (const Event& e : trace.events)
    if (e.kind == EventKind::SubStep && e.alg == 9 && e.line == 10) {
      EXPECT_EQ(e.label, "W_f X + b_f 1ᵀ");
      EXPECT_NEAR(e.values[0].m(0, 0), pre[0], pre_error);
      EXPECT_NEAR(e.values[0].m(1, 2), pre[1], pre_error);
    }
}

TEST(Bert, ColumnsOfPAreDistributions) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 1, 0.5);
  const MatF P = etransformer<float>({7, 1, 6, 3, 5, 2, 8}, c, W_of(m));
  ASSERT_EQ(P.rows(), c.N_V());
  ASSERT_EQ(P.cols(), 7);
  EXPECT_GT(P.minCoeff(), 0.0f);
  for (int t = 0; t < 7; ++t) EXPECT_NEAR(P.col(t).sum(), 1.0f, 1e-5f) << "column " << t + 1;  // ≤ (2N_V + 2)·u
}

TEST(Bert, AttentionIsBidirectionalAnEarlyColumnSeesALaterToken) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 2, 0.5);
  const MatF P1 = etransformer<float>({7, 1, 2, 3, 8}, c, W_of(m));
  const MatF P2 = etransformer<float>({7, 1, 2, 4, 8}, c, W_of(m));  // token 4 changed
  for (int t = 0; t < 3; ++t)
    EXPECT_GT((P1.col(t) - P2.col(t)).cwiseAbs().maxCoeff(), 1e-4f) << "column " << t + 1 << " ignored token 4";
  // (GPT's causal mask would leave columns 1–3 unchanged; see Trace tests for Algorithm 10.)
}

TEST(Bert, TracedEqualsUntracedAndTheMaskIsAllOnes) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 3, 0.5);
  const Tokens x{7, 2, 6, 4, 8};
  Trace trace;
  Tracer tr(trace);
  const MatF traced = etransformer<float>(x, c, W_of(m), &tr);
  const MatF plain = etransformer<float>(x, c, W_of(m));
  EXPECT_TRUE(traced == plain);
  EXPECT_EQ(trace.tokens_x, x);
  int masks = 0;
  for (const Event& e : trace.events)
    if (e.alg == 9 && e.kind == EventKind::Line && e.line == 5) {
      const Value* mask = value(e, "Mask");
      ASSERT_NE(mask, nullptr);
      EXPECT_EQ(mask->kind, ValueKind::Mask);
      EXPECT_EQ(mask->m.rows(), 5);
      EXPECT_EQ(mask->m.cols(), 5);
      EXPECT_TRUE((mask->m.array() == 1.0f).all());
      ++masks;
    }
  EXPECT_EQ(masks, c.L);
  // The P of line 12 is the returned P; W_u carries the note on the paper's slip at Enter and line 12.
  EXPECT_TRUE(value(line_event(trace, 9, 12), "P")->m == traced);
  EXPECT_NE(value(trace.events[0], "W_u")->note.find("N_V×d_f"), std::string::npos);
  EXPECT_NE(value(line_event(trace, 9, 12), "W_u")->note.find("N_V×d_f"), std::string::npos);
  // Line 10 makes X d_f×ℓ.
  EXPECT_EQ(value(line_event(trace, 9, 10), "X")->m.rows(), c.d_f);
  // The Architecture's forward is Algorithm 9.
  EXPECT_TRUE(architecture(c).forward(m, {}, x, nullptr, {}) == plain);
}

TEST(Bert, AnotherMHAttentionForLine5) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 4, 0.5);
  const Tokens x{7, 1, 2, 3, 8};
  int calls = 0;
  const MHAttentionFn<float> attn = [&](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                                        const Mask& mask, const AttentionOptions& av) {
    ++calls;
    EXPECT_TRUE((mask.array() == 1).all());
    return mh_attention<float>(X, Z, W, mask, nullptr, nullptr, av);
  };
  EXPECT_TRUE(etransformer<float>(x, c, W_of(m), nullptr, attn) == etransformer<float>(x, c, W_of(m)));
  EXPECT_EQ(calls, c.L);
}

TEST(Bert, InputThatDoesNotFitIsRefused) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 5, 0.5);
  EXPECT_THROW(etransformer<float>({}, c, W_of(m)), Error);
  EXPECT_THROW(etransformer<float>(Tokens(c.l_max + 1, 1), c, W_of(m)), Error);
  EXPECT_THROW(etransformer<float>({7, 9}, c, W_of(m)), Error);
  EXPECT_THROW(etransformer<float>({7, 0}, c, W_of(m)), Error);
}

// ---- The exact trace of Algorithm 9: 1 layer, 2 heads, 3 tokens -----------------------------

namespace {

struct Ev {
  EventKind kind;
  int alg, line, depth, l, h, t;
};
constexpr EventKind E = EventKind::Enter, L = EventKind::Line, S = EventKind::SubStep;

// (kind, algorithm, line, depth, l, h, t); the index of each event is in the comment.
const std::vector<Ev> kExpected = {
      // ETransformer is entered; line 1: ℓ ← length(x)
      {E,  9,  0, 0, 0, 0, 0},  // 0
      {L,  9,  1, 0, 0, 0, 0},  // 1
      // line 2, for t ∈ [ℓ]: Algorithm 1 (W_e[:, x[t]]) and Algorithm 2 (W_p[:, t]) for t = 1, 2, 3
      {E,  1,  0, 1, 0, 0, 1},  // 2
      {L,  1,  1, 1, 0, 0, 1},  // 3
      {E,  2,  0, 1, 0, 0, 1},  // 4
      {L,  2,  1, 1, 0, 0, 1},  // 5
      {E,  1,  0, 1, 0, 0, 2},  // 6
      {L,  1,  1, 1, 0, 0, 2},  // 7
      {E,  2,  0, 1, 0, 0, 2},  // 8
      {L,  2,  1, 1, 0, 0, 2},  // 9
      {E,  1,  0, 1, 0, 0, 3},  // 10
      {L,  1,  1, 1, 0, 0, 3},  // 11
      {E,  2,  0, 1, 0, 0, 3},  // 12
      {L,  2,  1, 1, 0, 0, 3},  // 13
      // line 2 done, line 3: X ← [e_1, e_2, e_3]; line 4: for l = 1
      {L,  9,  2, 0, 0, 0, 0},  // 14
      {L,  9,  3, 0, 0, 0, 0},  // 15
      {L,  9,  4, 0, 1, 0, 0},  // 16
      // line 5 calls MHAttention(X | W_1, Mask ≡ 1) (nested, before line 5's event)
      {E,  5,  0, 1, 1, 0, 0},  // 17
      //   MHAttention line 1, h = 1; Attention for head 1 (depth 2): lines 1–5, line 6's three sub-steps, line 6
      {L,  5,  1, 1, 1, 1, 0},  // 18
      {E,  4,  0, 2, 1, 1, 0},  // 19
      {L,  4,  1, 2, 1, 1, 0},  // 20
      {L,  4,  2, 2, 1, 1, 0},  // 21
      {L,  4,  3, 2, 1, 1, 0},  // 22
      {L,  4,  4, 2, 1, 1, 0},  // 23
      {L,  4,  5, 2, 1, 1, 0},  // 24
      {S,  4,  6, 3, 1, 1, 0},  // 25
      {S,  4,  6, 3, 1, 1, 0},  // 26
      {S,  4,  6, 3, 1, 1, 0},  // 27
      {L,  4,  6, 2, 1, 1, 0},  // 28
      //   MHAttention line 2 (Y^1); line 1, h = 2; Attention for head 2
      {L,  5,  2, 1, 1, 1, 0},  // 29
      {L,  5,  1, 1, 1, 2, 0},  // 30
      {E,  4,  0, 2, 1, 2, 0},  // 31
      {L,  4,  1, 2, 1, 2, 0},  // 32
      {L,  4,  2, 2, 1, 2, 0},  // 33
      {L,  4,  3, 2, 1, 2, 0},  // 34
      {L,  4,  4, 2, 1, 2, 0},  // 35
      {L,  4,  5, 2, 1, 2, 0},  // 36
      {S,  4,  6, 3, 1, 2, 0},  // 37
      {S,  4,  6, 3, 1, 2, 0},  // 38
      {S,  4,  6, 3, 1, 2, 0},  // 39
      {L,  4,  6, 2, 1, 2, 0},  // 40
      //   MHAttention line 2 (Y^2), line 3 (Y ← [Y^1; Y^2]), line 4 (W_o Y + b_o 1ᵀ)
      {L,  5,  2, 1, 1, 2, 0},  // 41
      {L,  5,  3, 1, 1, 0, 0},  // 42
      {L,  5,  4, 1, 1, 0, 0},  // 43
      // line 5 done (X + MHAttention); line 6: layer_norm(X[:, t] | γ¹_1, β¹_1) for t = 1, 2, 3
      {L,  9,  5, 0, 1, 0, 0},  // 44
      {E,  6,  0, 1, 1, 0, 1},  // 45
      {L,  6,  1, 1, 1, 0, 1},  // 46
      {L,  6,  2, 1, 1, 0, 1},  // 47
      {L,  6,  3, 1, 1, 0, 1},  // 48
      {E,  6,  0, 1, 1, 0, 2},  // 49
      {L,  6,  1, 1, 1, 0, 2},  // 50
      {L,  6,  2, 1, 1, 0, 2},  // 51
      {L,  6,  3, 1, 1, 0, 2},  // 52
      {E,  6,  0, 1, 1, 0, 3},  // 53
      {L,  6,  1, 1, 1, 0, 3},  // 54
      {L,  6,  2, 1, 1, 0, 3},  // 55
      {L,  6,  3, 1, 1, 0, 3},  // 56
      // line 6 done; line 7's two sub-steps (W_mlp1 X + b_mlp1 1ᵀ, GELU) then line 7
      {L,  9,  6, 0, 1, 0, 0},  // 57
      {S,  9,  7, 1, 1, 0, 0},  // 58
      {S,  9,  7, 1, 1, 0, 0},  // 59
      {L,  9,  7, 0, 1, 0, 0},  // 60
      // line 8: layer_norm(X[:, t] | γ²_1, β²_1) for t = 1, 2, 3
      {E,  6,  0, 1, 1, 0, 1},  // 61
      {L,  6,  1, 1, 1, 0, 1},  // 62
      {L,  6,  2, 1, 1, 0, 1},  // 63
      {L,  6,  3, 1, 1, 0, 1},  // 64
      {E,  6,  0, 1, 1, 0, 2},  // 65
      {L,  6,  1, 1, 1, 0, 2},  // 66
      {L,  6,  2, 1, 1, 0, 2},  // 67
      {L,  6,  3, 1, 1, 0, 2},  // 68
      {E,  6,  0, 1, 1, 0, 3},  // 69
      {L,  6,  1, 1, 1, 0, 3},  // 70
      {L,  6,  2, 1, 1, 0, 3},  // 71
      {L,  6,  3, 1, 1, 0, 3},  // 72
      {L,  9,  8, 0, 1, 0, 0},  // 73
      // (loop over l ends: l is no longer in force) line 10's sub-step (W_f X + b_f 1ᵀ), line 10
      {S,  9, 10, 1, 0, 0, 0},  // 74
      {L,  9, 10, 0, 0, 0, 0},  // 75
      // line 11: layer_norm(X[:, t] | γ, β) for t = 1, 2, 3 (γ, β ∈ ℝ^{d_f})
      {E,  6,  0, 1, 0, 0, 1},  // 76
      {L,  6,  1, 1, 0, 0, 1},  // 77
      {L,  6,  2, 1, 0, 0, 1},  // 78
      {L,  6,  3, 1, 0, 0, 1},  // 79
      {E,  6,  0, 1, 0, 0, 2},  // 80
      {L,  6,  1, 1, 0, 0, 2},  // 81
      {L,  6,  2, 1, 0, 0, 2},  // 82
      {L,  6,  3, 1, 0, 0, 2},  // 83
      {E,  6,  0, 1, 0, 0, 3},  // 84
      {L,  6,  1, 1, 0, 0, 3},  // 85
      {L,  6,  2, 1, 0, 0, 3},  // 86
      {L,  6,  3, 1, 0, 0, 3},  // 87
      // line 11 done; line 12's sub-step (W_u X) and line 12 (P)
      {L,  9, 11, 0, 0, 0, 0},  // 88
      {S,  9, 12, 1, 0, 0, 0},  // 89
      {L,  9, 12, 0, 0, 0, 0},  // 90
};

}  // namespace

TEST(Bert, ExactEventSequence) {
  ModelConfig c = bert_config();
  c.L = 1;
  c.d_e = 4;
  c.d_attn = 2;
  c.d_mid = 2;
  c.d_f = 3;
  c.vocab = {"a", "b", "c"};  // N_V = 6
  const Model m = Model::initialised(c, 7);
  const Tokens x{5, 1, 3};  // <bos> a c
  Trace trace;
  Tracer tr(trace);
  etransformer<float>(x, c, W_of(m), &tr);
  ASSERT_EQ(kExpected.size(), 91u);
  EXPECT_EQ(trace.size(), kExpected.size());
  for (size_t k = 0; k < std::min(trace.size(), kExpected.size()); ++k) {
    const Event& e = trace.events[k];
    const Ev& w = kExpected[k];
    EXPECT_EQ(e.kind, w.kind) << "event " << k;
    EXPECT_EQ(e.alg, w.alg) << "event " << k;
    EXPECT_EQ(e.line, w.line) << "event " << k;
    EXPECT_EQ(e.depth, w.depth) << "event " << k;
    EXPECT_EQ(e.idx.l, w.l) << "event " << k;
    EXPECT_EQ(e.idx.h, w.h) << "event " << k;
    EXPECT_EQ(e.idx.t, w.t) << "event " << k;
    EXPECT_EQ(e.idx.i, 0) << "event " << k;
    EXPECT_EQ(e.idx.n, 0) << "event " << k;
    EXPECT_EQ(e.label.empty(), e.kind != EventKind::SubStep) << "event " << k;
  }
  ASSERT_EQ(trace.size(), kExpected.size());
  // What the top-level events bind.
  const auto names = [&](size_t k) { return trace.changed(k); };
  EXPECT_EQ(names(0), (std::vector<std::string>{"x", "W_e", "W_p", "W_f", "b_f", "γ", "β", "W_u"}));
  EXPECT_EQ(names(1), (std::vector<std::string>{"ℓ"}));
  EXPECT_EQ(names(16), (std::vector<std::string>{"l"}));
  EXPECT_EQ(names(44), (std::vector<std::string>{"Mask", "X"}));
  EXPECT_EQ(names(90), (std::vector<std::string>{"P", "W_u"}));
  EXPECT_EQ(trace.events[58].label, "W_mlp1 X + b_mlp1 1ᵀ");
  EXPECT_EQ(trace.events[59].label, "GELU(…)");
  EXPECT_EQ(trace.events[74].label, "W_f X + b_f 1ᵀ");
  EXPECT_EQ(trace.events[89].label, "W_u X");
  EXPECT_EQ(value(trace.events[75], "X")->m.rows(), 3);  // d_f
  EXPECT_EQ(value(trace.events[73], "X")->m.rows(), 4);  // d_e
}

// ---- Filling in [MASK] (not a paper algorithm) ---------------------------------------------

TEST(BertFillIn, ArgmaxAtTauZeroWithTopCandidates) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 6, 0.5);
  const int M = c.mask_token();
  const Tokens x{7, 1, M, 3, M, 8};
  const FillResult r = fill_masks(x, m, 0.0, 1, 3);
  const MatF P = etransformer<float>(x, c, W_of(m));
  ASSERT_EQ(r.positions.size(), 2u);
  EXPECT_EQ(r.positions[0].t, 3);
  EXPECT_EQ(r.positions[1].t, 5);
  Tokens want = x;
  for (const FillPosition& pos : r.positions) {
    Eigen::Index best = 0;
    P.col(pos.t - 1).maxCoeff(&best);
    EXPECT_EQ(pos.chosen, best + 1);
    EXPECT_TRUE(pos.p == VecF(P.col(pos.t - 1)));
    ASSERT_EQ(pos.top.size(), 3u);
    EXPECT_EQ(pos.top[0].id, pos.chosen);
    EXPECT_GE(pos.top[0].p, pos.top[1].p);
    EXPECT_GE(pos.top[1].p, pos.top[2].p);
    for (const FillCandidate& f : pos.top) EXPECT_EQ(f.p, P(f.id - 1, pos.t - 1));
    // Every token not listed is at most as likely as the last one listed.
    for (int v = 1; v <= c.N_V(); ++v)
      if (v != pos.top[0].id && v != pos.top[1].id && v != pos.top[2].id) {
        EXPECT_LE(P(v - 1, pos.t - 1), pos.top[2].p);
      }
    want[pos.t - 1] = pos.chosen;
  }
  EXPECT_EQ(r.filled, want);
  EXPECT_EQ(fill_masks(x, m, 0.0, 1, 100).positions[0].top.size(), static_cast<size_t>(c.N_V()));
}

TEST(BertFillIn, SamplingIsSeededAndFollowsQ) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 7, 0.5);
  const int M = c.mask_token();
  const Tokens x{7, M, 2, 8};
  EXPECT_EQ(fill_masks(x, m, 1.0, 42, 0).filled, fill_masks(x, m, 1.0, 42, 0).filled);
  // Over many seeds, the frequency of each token approaches P[:, 2] at τ = 1.
  const VecF p = etransformer<float>(x, c, W_of(m)).col(1);
  VecF freq = VecF::Zero(c.N_V());
  const int n = 4000;
  for (int s = 0; s < n; ++s) freq(fill_masks(x, m, 1.0, static_cast<uint64_t>(s) + 1, 0).filled[1] - 1) += 1.0f / n;
  EXPECT_LT((freq - p).cwiseAbs().maxCoeff(), 0.03f);
  // A tracer sees one Algorithm 9 pass.
  Trace trace;
  Tracer tr(trace);
  fill_masks(x, m, 0.0, 1, 2, &tr);
  ASSERT_FALSE(trace.events.empty());
  EXPECT_EQ(trace.events[0].alg, 9);
  EXPECT_EQ(trace.events[0].depth, 0);
}

TEST(BertFillIn, RefusesAPromptWithoutMaskAndOtherArchitectures) {
  const ModelConfig c = bert_config();
  const Model m = spread_model(c, 8, 0.5);
  try {
    fill_masks({7, 1, 2, 8}, m, 0.0, 1, 3);
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_STREQ(e.what(), "the prompt has no [MASK] to fill");
  }
  EXPECT_THROW(fill_masks({7, 6, 8}, m, -1.0, 1, 3), Error);
  EXPECT_THROW(fill_masks({7, 6, 8}, m, 0.0, 1, -1), Error);
  ModelConfig g = c;
  g.arch = "gpt";
  EXPECT_THROW(fill_masks({7, 6, 8}, Model::initialised(g, 1), 0.0, 1, 3), Error);
}

}  // namespace test_bert
