// Experiments (core/experiments/): an intervention changes exactly what it should and nothing
// upstream, checked on the shipped GPT, BERT and encoder-decoder models against independent routes
// (an edited model copy, Algorithm 4 called directly, prompt B's own run).
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "core/experiments/compare.hpp"
#include "core/experiments/interventions.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {
namespace test_experiments {

struct Case {
  const char* file;
  const char* prompt_a;
  const char* prompt_b;  // the same length as prompt_a (activation patching)
};

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

class Experiments : public ::testing::TestWithParam<Case> {
 protected:
  void SetUp() override {
    model = std::make_unique<Model>(load_checkpoint(asset(GetParam().file)).model);
    const auto tok = make_tokenizer(model->config);
    a = tok->encode_sequence(GetParam().prompt_a, false);
    b = tok->encode_sequence(GetParam().prompt_b, false);
    ASSERT_EQ(a.size(), b.size());
    if (architecture(model->config).has_context()) z = tok->encode_sequence("abc", true);
    P_a = traced(a, {}, original);
  }
  // The forward algorithm on x under the interventions, traced into t. Returns P.
  MatF traced(const Tokens& x, const std::vector<Intervention>& list, Trace& t, const Model* m = nullptr) const {
    Tracer tr(t);
    return run_experiment(m ? *m : *model, z, x, list, &tr);
  }
  MatF plain(const Model& m, const Tokens& x) const { return architecture(m.config).forward(m, z, x); }
  // The calling line of layer l's (first) MHAttention, e.g. Algorithm 10 line 6.
  LineRef call(int l, int h = 1) const { return attention_call(original, l, h); }
  // The table prefix of that MHAttention's tensors.
  std::string attn_prefix(int l) const {
    const std::string arch = model->config.arch;
    return (arch == "ed" ? "enc.layer" : "layer") + std::to_string(l) + ".attn.";
  }

  std::unique_ptr<Model> model;
  Tokens z, a, b;
  Trace original;
  MatF P_a;
};

// Every value of events [0, k) of t equals the original's bit for bit (−∞ = −∞).
void expect_unchanged_before(const Trace& original, const Trace& t, size_t k) {
  ASSERT_EQ(original.size(), t.size());
  for (size_t j = 0; j < k; ++j)
    for (size_t i = 0; i < t.events[j].values.size(); ++i)
      ASSERT_EQ(changed_cells(original.events[j].values[i].m, t.events[j].values[i].m), 0)
          << "event " << j << " value " << t.events[j].values[i].name;
}

TEST_P(Experiments, EditingQChangesItAndWhatDependsOnItOnly) {
  const int L = 1, h = 2;
  const PatchPoint q{call(L, h), 4, 1, L, h, "Q"};
  const Value* before = value_at(original, q);
  ASSERT_NE(before, nullptr);
  const float v = before->m(0, 1) + 3.0f;
  Trace t;
  const MatF P = traced(a, {edit_cell(q, 1, 2, v)}, t);
  const size_t k = find_point(t, q);
  ASSERT_EQ(k, find_point(original, q));
  expect_unchanged_before(original, t, k);
  const Value* after = value_at(t, q);
  EXPECT_EQ(after->m(0, 1), v);
  EXPECT_EQ(changed_cells(before->m, after->m), 1);
  // S = Kᵀ Q: column 2 changes (where the mask lets it), column 1 does not
  const Value* S0 = value_at(original, {q.call, 4, 4, L, h, "S"});
  const Value* S1 = value_at(t, {q.call, 4, 4, L, h, "S"});
  EXPECT_GT(difference(S0->m, S1->m).col(1).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_EQ(difference(S0->m, S1->m).col(0).cwiseAbs().maxCoeff(), 0.0f);
  // the next head of the same layer reads the same input: untouched
  EXPECT_EQ(changed_cells(value_at(original, {q.call, 4, 6, L, h + 1, "Ṽ"})->m, value_at(t, {q.call, 4, 6, L, h + 1, "Ṽ"})->m), 0);
  EXPECT_GT((P - P_a).cwiseAbs().maxCoeff(), 0.0f);
  const TraceComparison c = compare_traces(original, t);
  EXPECT_EQ(c.matched, original.size());
  EXPECT_GT(c.max_abs_dP, 0.0f);
  EXPECT_FALSE(c.diffs.empty());
  EXPECT_EQ(c.diffs.front().event_a, k);  // the first value that differs is the edited one
}

TEST_P(Experiments, AblatingAHeadEqualsZeroingItsColumnsOfW_o) {
  const int L = model->config.arch == "ed" ? model->config.L_enc : model->config.L, h = 2;
  Trace t;
  const MatF P = traced(a, {ablate_head(call(L, h), L, h)}, t);
  // independent route: W_o's columns of head h (Y^h's rows in Y) zeroed, the unpatched forward pass
  Model zeroed = *model;
  const ParamEntry& W_o = zeroed.table.at(attn_prefix(L) + "W_o");
  const int d_mid = model->config.d_mid;
  for (int col = (h - 1) * d_mid; col < h * d_mid; ++col)
    for (int row = 0; row < W_o.rows; ++row) zeroed.theta[W_o.offset + static_cast<size_t>(col) * W_o.rows + row] = 0;
  // Two routes to the same numbers (a patched trace, zeroed weights): the same sums, the patched one
  // adding exact zeros in another place; p moves by ≤ 2p·max|δlogit| ≲ 1e-7 for these small models
  // (test_variants_forward.cpp's kSameModel derivation), while ablating a head moves it by > 1e-6.
  EXPECT_LT((P - plain(zeroed, a)).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_GT((P - P_a).cwiseAbs().maxCoeff(), 1e-6f);
  for (int g = 1; g <= model->config.H; ++g) {
    const PatchPoint vt{call(L, h), 4, 6, L, g, "Ṽ"};
    const int changed = changed_cells(value_at(original, vt)->m, value_at(t, vt)->m);
    if (g == h)
      EXPECT_TRUE(value_at(t, vt)->m.isZero(0));
    else
      EXPECT_EQ(changed, 0) << "head " << g;
  }
}

TEST_P(Experiments, PatchingEveryPositionOfLayer1sInputGivesPromptBsP) {
  Trace tb;
  const MatF P_b = traced(b, {}, tb);
  const bool ed = model->config.arch == "ed";
  const PatchPoint input{{}, model->config.arch == "gpt" ? 10 : ed ? 8 : 9, ed ? 12 : 3, 0, 0, "X"};
  Trace t;
  const MatF P = traced(a, {patch_from(input, value_at(tb, input)->m, 0, "B")}, t);
  EXPECT_LT((P - P_b).cwiseAbs().maxCoeff(), 1e-6f);  // the same sums from layer 1 on (as above)
  EXPECT_GT((P_a - P_b).cwiseAbs().maxCoeff(), 1e-4f);  // the prompts differ
  // with A's own value: A's P, bit for bit
  Trace own;
  EXPECT_TRUE(traced(a, {patch_from(input, value_at(original, input)->m, 0, "A")}, own) == P_a);
  // one column: only that position's value is B's
  Trace one;
  traced(a, {patch_from(input, value_at(tb, input)->m, 2, "B")}, one);
  const MatF d = difference(value_at(original, input)->m, value_at(one, input)->m);
  EXPECT_EQ(d.col(0).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_TRUE(MatF(value_at(one, input)->m.col(1)) == MatF(value_at(tb, input)->m.col(1)));
}

TEST_P(Experiments, PatchingFromALongerPromptIsRefusedClearly) {
  Trace tb;
  Tokens longer = b;
  longer.push_back(b.back());
  traced(longer, {}, tb);
  const PatchPoint x1{{}, model->config.arch == "gpt" ? 10 : model->config.arch == "ed" ? 8 : 9,
                      model->config.arch == "ed" ? 12 : 3, 0, 0, "X"};
  try {
    Trace t;
    traced(a, {patch_from(x1, value_at(tb, x1)->m, 0, "B")}, t);
    FAIL() << "a value of another shape was patched in";
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("does not fit X"), std::string::npos) << e.what();
  }
  EXPECT_THROW(patch_from(x1, value_at(tb, x1)->m, 99, "B"), Error);
}

TEST_P(Experiments, TogglingAMaskCellEqualsAttentionWithThatMask) {
  const int L = 1, h = 1, t_z = 3, t_x = 2;
  const LineRef c = call(L, h);
  Trace t;
  traced(a, {toggle_mask(c, L, h, t_z, t_x)}, t);
  // independent route: Algorithm 4 on the same input with the custom mask
  const Event& enter = t.events[t.frame_start(find_point(t, {c, 4, 6, L, h, "Ṽ"}))];
  ASSERT_EQ(enter.alg, 4);
  const MatF X = enter.values[0].m, Z = enter.values[1].m;  // the head's inputs (unchanged upstream)
  Mask mask = value_at(original, {c, 4, 5, L, h, "S"})->m.array().isFinite().cast<unsigned char>().matrix();
  mask(t_z - 1, t_x - 1) ^= 1;
  const MHAttentionW<const float> W = bind_mh_attention<const float>(model->table, model->theta.data(), attn_prefix(L));
  const MatF expected = attention<float>(X, Z, W.heads[h - 1], mask, nullptr, nullptr, attention_options(model->config, true));
  // One attention from the same inputs both ways: Ṽ's entries ≲ 1 are sums of ≤ ℓ_z ≤ 12 terms,
  // within γ_12 ≈ 7e-7 of each other at most.
  EXPECT_LT((value_at(t, {c, 4, 6, L, h, "Ṽ"})->m - expected).cwiseAbs().maxCoeff(), 1e-6f);
  EXPECT_GT(difference(value_at(original, {c, 4, 6, L, h, "Ṽ"})->m, value_at(t, {c, 4, 6, L, h, "Ṽ"})->m).cwiseAbs().maxCoeff(), 0.0f);
  // the trace binds the mask line 5 read
  EXPECT_EQ(enter.values[8].name, "Mask");
  EXPECT_EQ(enter.values[8].m(t_z - 1, t_x - 1), mask(t_z - 1, t_x - 1));
}

TEST_P(Experiments, AWeightEditEqualsAnEditedModelAndLeavesTheModelAlone) {
  const std::vector<float> theta = model->theta;
  const std::string name = attn_prefix(1) + "W_q";
  const ParamEntry& e = model->table.at(name);
  const size_t at = e.offset + 1 * e.matrix_size() + 2 * static_cast<size_t>(e.rows) + 1;  // head 2, cell [2, 3]
  Trace t;
  const MatF P = traced(a, {edit_weight(name, 1, 2, 3, 0.75f, "W_q")}, t);
  Model edited = *model;
  edited.theta[at] = 0.75f;
  EXPECT_TRUE(P == plain(edited, a));
  EXPECT_GT((P - P_a).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_TRUE(model->theta == theta);
  EXPECT_THROW(edited_model(*model, {edit_weight(name, 1, e.rows + 1, 1, 1.0f, "W_q")}), Error);
  EXPECT_THROW(edited_model(*model, {edit_weight("no.such.tensor", 0, 1, 1, 1.0f, "W")}), Error);
}

TEST_P(Experiments, NoInterventionIsTheOriginalAndAComparisonWithItselfIsZero) {
  Trace t;
  EXPECT_TRUE(traced(a, {}, t) == P_a);
  EXPECT_TRUE(plain(*model, a) == P_a);
  const TraceComparison c = compare_traces(original, t);
  EXPECT_EQ(c.matched, original.size());
  EXPECT_TRUE(c.diffs.empty());
  EXPECT_EQ(c.max_abs, 0.0f);
  EXPECT_EQ(c.max_abs_dP, 0.0f);
  ASSERT_EQ(c.dP.cols(), static_cast<Eigen::Index>(a.size()));
}

TEST_P(Experiments, AnInterventionThatMeetsNoPatchPointIsRefused) {
  Trace t;
  try {
    traced(a, {ablate_head(call(1), 1, model->config.H + 1)}, t);
    FAIL();
  } catch (const Error& e) {
    EXPECT_NE(std::string(e.what()).find("met no patch point"), std::string::npos) << e.what();
  }
}

TEST_P(Experiments, PointOfFindsWhereAValueInScopeWasComputed) {
  const size_t k = find_point(original, {call(1, 2), 4, 6, 1, 2, "Ṽ"});
  ASSERT_LT(k, original.size());
  const PatchPoint s = point_of(original, k, "S");  // bound on line 5 (masked), in scope at line 6
  EXPECT_EQ(s.alg, 4);
  EXPECT_EQ(s.line, 5);
  EXPECT_EQ(s.h, 2);
  EXPECT_EQ(s.call, call(1, 2));
  EXPECT_EQ(point_of(original, k, "Mask").line, 5);
  EXPECT_THROW(point_of(original, k, "W_q"), Error);  // a parameter: edited as a weight
  EXPECT_THROW(point_of(original, k, "nothing"), Error);
}

INSTANTIATE_TEST_SUITE_P(Models, Experiments,
                         ::testing::Values(Case{"default.safetensors", "hello=", "world="},
                                           Case{"bert.safetensors", "hello", "a cat"},
                                           Case{"ed.safetensors", "hello", "world"}),
                         [](const auto& info) { return std::string(info.param.file).substr(0, std::string(info.param.file).find('.')); });

TEST(ExperimentCompare, CheckpointsOfAnotherShapeAreNamed) {
  const Model a = load_checkpoint(asset("default.safetensors")).model;
  const Model b = load_checkpoint(asset("bert.safetensors")).model;
  EXPECT_EQ(shape_mismatch(a, a), "");
  EXPECT_NE(shape_mismatch(a, b).find("checkpoints differ in shape"), std::string::npos);
}

TEST(ExperimentCompare, MaskedCellsCountAsEqualAndAToggledOneAsInfinite) {
  MatF a(2, 1), b(2, 1);
  a << -INFINITY, 1.0f;
  b << -INFINITY, 1.5f;
  EXPECT_EQ(changed_cells(TraceMat(a), TraceMat(b)), 1);
  EXPECT_EQ(difference(TraceMat(a), TraceMat(b))(0, 0), 0.0f);
  EXPECT_EQ(difference(TraceMat(a), TraceMat(b))(1, 0), 0.5f);
  b(0, 0) = 2.0f;
  EXPECT_TRUE(std::isinf(difference(TraceMat(a), TraceMat(b))(0, 0)));
}

TEST(ExperimentCompare, TopChangesAreTheLikeliestTokensBeforeOrAfter) {
  MatF a(4, 1), b(4, 1);
  a << 0.1f, 0.6f, 0.2f, 0.1f;
  b << 0.7f, 0.1f, 0.1f, 0.1f;
  const auto top = top_changes(TraceMat(a), TraceMat(b), 0, 2);
  ASSERT_EQ(top.size(), 2u);
  EXPECT_EQ(top[0].id, 1);
  EXPECT_FLOAT_EQ(top[0].after, 0.7f);
  EXPECT_EQ(top[1].id, 2);
  EXPECT_FLOAT_EQ(top[1].before, 0.6f);
}

}  // namespace test_experiments
}  // namespace sf
