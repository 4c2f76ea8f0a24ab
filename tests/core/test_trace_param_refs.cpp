// Value::param and Value::head (core/trace/trace.hpp): a parameter of θ bound by tparam inside a
// TraceParameters scope says which entry of the parameter table it is, and which head, from where its
// storage lies. Checked for traced forwards of the three architectures and a traced training step
// (Algorithm 13, whose line 6 runs the traced backward): every such value IS its table slice, bit for
// bit, and known ones name the right entry (an index off by one entry, or a head off by one, fails).
#include <gtest/gtest.h>

#include <memory>
#include <set>

#include "core/arch/architecture.hpp"
#include "core/training/training.hpp"
#include "core/trace/value_keys.hpp"
#include "test_backprop_support.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"

namespace test_trace_param_refs {

using namespace sf;
using namespace sf::test;

namespace {

// The slice of θ that (param, head) names: the whole entry (head 0), or head `head`'s matrix.
MatF table_slice(const ParamTable& table, const std::vector<float>& theta, int param, int head) {
  const ParamEntry& e = table.entries().at(static_cast<size_t>(param));
  const size_t start = e.offset + (head > 0 ? static_cast<size_t>(head - 1) * e.matrix_size() : 0);
  const int cols = head > 0 ? e.cols : e.cols * e.count;
  return Eigen::Map<const MatF>(theta.data() + start, e.rows, cols);
}

// Every value of `tr` with param ≥ 0 equals its slice of θ exactly (a copy or a view of the same
// floats: no arithmetic, so bitwise); the tied W_u = W_eᵀ is W_e's slice transposed. Returns how
// many values named a parameter.
int expect_params_are_slices(const Trace& tr, const ParamTable& table, const std::vector<float>& theta) {
  int n = 0;
  for (size_t k = 0; k < tr.size(); ++k)
    for (const Value& v : tr.events[k].values) {
      if (v.param < 0) continue;
      ++n;
      EXPECT_LT(static_cast<size_t>(v.param), table.entries().size()) << v.name << " at event " << k;
      if (static_cast<size_t>(v.param) >= table.entries().size()) continue;
      const ParamEntry& e = table.entries()[static_cast<size_t>(v.param)];
      EXPECT_TRUE(v.head >= 0 && v.head <= (e.count > 1 ? e.count : 0)) << v.name << " head " << v.head;
      const MatF slice = table_slice(table, theta, v.param, v.head);
      const MatF bound(v.m);
      const MatF expected = keys::tied_unembedding.names(v) ? MatF(slice.transpose()) : slice;
      EXPECT_TRUE(bound.rows() == expected.rows() && bound.cols() == expected.cols() && bound == expected)
          << v.name << " at event " << k << " is not " << e.name << " head " << v.head;
    }
  return n;
}

// Values that are computed, not parameters, say so (param −1, head 0).
void expect_activations_unmarked(const Trace& tr) {
  const std::set<std::string> computed = {"X", "X̃", "Z", "Q", "K", "V", "S", "P", "e", "ê", "m", "v", "Y", "Ṽ", "∇X"};
  int seen = 0;
  for (const Event& e : tr.events)
    for (const Value& v : e.values)
      if (computed.count(v.name)) {
        ++seen;
        EXPECT_EQ(v.param, -1) << v.name;
        EXPECT_EQ(v.head, 0) << v.name;
      }
  EXPECT_GT(seen, 0);
}

// The entry name and head value `name` of event k binds; {"", −1} when it binds none or no parameter.
std::pair<std::string, int> param_of(const Trace& tr, const ParamTable& table, size_t k, const std::string& name) {
  const Value* v = bound(tr, k, name);
  if (!v || v->param < 0) return {"", -1};
  return {table.entries().at(static_cast<size_t>(v->param)).name, v->head};
}

// Algorithm 4's Enter event (its parameters bound) for layer l, head h, in `pass`, from event `from` on.
size_t attention_enter(const Trace& tr, int l, int h, Pass pass = Pass::Forward, size_t from = 0) {
  return find_event(tr, LineRef{lines::attention::Q.alg, 0, pass}, EventKind::Enter, l, h, 0, from);
}

Trace traced_forward(const Model& m, const Tokens& z, const Tokens& x) {
  Trace t;
  Tracer tr(t);
  architecture(m.config).forward(m, z, x, &tr);
  return t;
}

using Entry = std::pair<std::string, int>;

}  // namespace

TEST(TraceParamRefs, GptForwardBindsEachParameterWithItsEntryAndHead) {
  const Model m = spread_model(small_gpt(), 3);  // 2 layers, H = 2
  const Trace tr = traced_forward(m, {}, sample_x());
  EXPECT_GT(expect_params_are_slices(tr, m.table, m.theta), 0);
  expect_activations_unmarked(tr);
  const size_t a22 = attention_enter(tr, 2, 2), a11 = attention_enter(tr, 1, 1);
  ASSERT_LT(a22, tr.size());
  EXPECT_EQ(param_of(tr, m.table, a22, "W_q"), Entry("layer2.attn.W_q", 2));
  EXPECT_EQ(param_of(tr, m.table, a22, "b_v"), Entry("layer2.attn.b_v", 2));
  EXPECT_EQ(param_of(tr, m.table, a11, "W_k"), Entry("layer1.attn.W_k", 1));
  const size_t enter = find_event(tr, LineRef{lines::d_transformer::l.alg, 0}, EventKind::Enter);
  EXPECT_EQ(param_of(tr, m.table, enter, "W_e"), Entry("W_e", 0));
  EXPECT_EQ(param_of(tr, m.table, enter, "W_u"), Entry("W_u", 0));
  EXPECT_EQ(param_of(tr, m.table, enter, "γ"), Entry("gamma", 0));
  // MHAttention's W_o of layer 2 (one matrix for all heads: head 0)
  const size_t mh2 = find_event(tr, LineRef{lines::mh_attention::Y.alg, 0}, EventKind::Enter, 2);
  EXPECT_EQ(param_of(tr, m.table, mh2, "W_o"), Entry("layer2.attn.W_o", 0));
}

TEST(TraceParamRefs, SharedKeyValueHeadsNameTheStorageHeadAndTiedUnembeddingNamesW_e) {
  ModelConfig c = small_gpt();
  c.H = 4;
  c.H_kv = 2;  // query heads 1, 2 share key/value head 1; heads 3, 4 share key/value head 2
  c.tied_unembedding = true;
  const Model m = spread_model(c, 4);
  const Trace tr = traced_forward(m, {}, sample_x());
  EXPECT_GT(expect_params_are_slices(tr, m.table, m.theta), 0);
  for (int h = 1; h <= 4; ++h) {
    const size_t a = attention_enter(tr, 2, h);
    ASSERT_LT(a, tr.size());
    const int kv = (h + 1) / 2;  // the storage's head
    EXPECT_EQ(param_of(tr, m.table, a, "W_q"), Entry("layer2.attn.W_q", h));
    EXPECT_EQ(param_of(tr, m.table, a, "W_k"), Entry("layer2.attn.W_k", kv));
    EXPECT_EQ(param_of(tr, m.table, a, "b_v"), Entry("layer2.attn.b_v", kv));
  }
  const size_t enter = find_event(tr, LineRef{lines::d_transformer::l.alg, 0}, EventKind::Enter);
  EXPECT_EQ(param_of(tr, m.table, enter, keys::tied_unembedding.symbol), Entry("W_e", 0));
}

TEST(TraceParamRefs, ViewsAndCopiesSayTheSame) {
  const Model m = spread_model(small_gpt(), 5);
  Trace viewed;
  Tracer tr(viewed, ParamBinding::View);
  architecture(m.config).forward(m, {}, sample_x(), &tr);
  ASSERT_TRUE(viewed.holds_views);
  EXPECT_GT(expect_params_are_slices(viewed, m.table, m.theta), 0);
  const Trace copied = traced_forward(m, {}, sample_x());
  ASSERT_EQ(viewed.size(), copied.size());
  for (size_t k = 0; k < viewed.size(); ++k)
    for (size_t i = 0; i < viewed.events[k].values.size(); ++i) {
      EXPECT_EQ(viewed.events[k].values[i].param, copied.events[k].values[i].param) << k;
      EXPECT_EQ(viewed.events[k].values[i].head, copied.events[k].values[i].head) << k;
    }
}

TEST(TraceParamRefs, BertForward) {
  const Model m = spread_model(bert_test_config(2, 2, 8, 4, 3, 12, 5, 9, {"a", "b", "c", "d", "e"}), 6);
  const Trace tr = traced_forward(m, {}, {7, 1, 3, 2, 5, 4, 8});
  EXPECT_GT(expect_params_are_slices(tr, m.table, m.theta), 0);
  expect_activations_unmarked(tr);
  const size_t a12 = attention_enter(tr, 1, 2);
  ASSERT_LT(a12, tr.size());
  EXPECT_EQ(param_of(tr, m.table, a12, "W_q"), Entry("layer1.attn.W_q", 2));
  const size_t enter = find_event(tr, LineRef{lines::e_transformer::l.alg, 0}, EventKind::Enter);
  EXPECT_EQ(param_of(tr, m.table, enter, "W_f"), Entry("W_f", 0));
  EXPECT_EQ(param_of(tr, m.table, enter, "b_f"), Entry("b_f", 0));
}

TEST(TraceParamRefs, EncoderDecoderForward) {
  const Model m = spread_model(ed_test_config(2, 2, 2, 8, 4, 3, 12, 9, {"a", "b", "c", "d", "e"}), 7);
  const Trace tr = traced_forward(m, {7, 1, 2, 1, 8}, {7, 4, 3, 5, 8});
  EXPECT_GT(expect_params_are_slices(tr, m.table, m.theta), 0);
  expect_activations_unmarked(tr);
  // Layer 2 of the encoder, then layer 2 of the decoder: its self-attention, then its cross-attention.
  const size_t enc = attention_enter(tr, 2, 2);
  const size_t self = attention_enter(tr, 2, 2, Pass::Forward, enc + 1);
  const size_t cross = attention_enter(tr, 2, 2, Pass::Forward, self + 1);
  ASSERT_LT(cross, tr.size());
  EXPECT_EQ(param_of(tr, m.table, enc, "W_q"), Entry("enc.layer2.attn.W_q", 2));
  EXPECT_EQ(param_of(tr, m.table, self, "W_q"), Entry("dec.layer2.self_attn.W_q", 2));
  EXPECT_EQ(param_of(tr, m.table, cross, "W_k"), Entry("dec.layer2.cross_attn.W_k", 2));
}

TEST(TraceParamRefs, TrainingStepForwardAndBackwardBindTheirEntries) {
  const Model start = spread_model(small_gpt(), 8);
  Model model = start;
  Trace tr;
  Tracer tracer(tr);
  DTraining alg(1, 1);
  const std::unique_ptr<ModelGradient> g = architecture(model.config).gradient(model.table);
  Rng rng(1);
  alg.step({Example{{}, sample_x()}}, model, 0.1f, TrainOptions{}, *g, rng, &tracer);
  ASSERT_NE(model.theta, start.theta);  // the step changed θ; the values were bound before (copies)
  EXPECT_GT(expect_params_are_slices(tr, start.table, start.theta), 0);
  const size_t forward = attention_enter(tr, 2, 2);
  EXPECT_EQ(param_of(tr, start.table, forward, "W_q"), Entry("layer2.attn.W_q", 2));
  // Attention's adjoint (the traced backward under line 6) binds W_q, W_k, W_v of its head too.
  const size_t backward = attention_enter(tr, 2, 2, Pass::Backward);
  ASSERT_LT(backward, tr.size());
  EXPECT_EQ(param_of(tr, start.table, backward, "W_q"), Entry("layer2.attn.W_q", 2));
  EXPECT_EQ(param_of(tr, start.table, backward, "W_v"), Entry("layer2.attn.W_v", 2));
}

TEST(TraceParamRefs, ASingleKeyValueHeadIsTheWholeEntry) {
  ModelConfig c = small_gpt();
  c.H_kv = 1;  // multi-query: W_k, W_v are one matrix each (count 1), so head 0
  const Model m = spread_model(c, 9);
  const Trace tr = traced_forward(m, {}, sample_x());
  EXPECT_GT(expect_params_are_slices(tr, m.table, m.theta), 0);
  const size_t a22 = attention_enter(tr, 2, 2);
  ASSERT_LT(a22, tr.size());
  EXPECT_EQ(param_of(tr, m.table, a22, "W_q"), Entry("layer2.attn.W_q", 2));
  EXPECT_EQ(param_of(tr, m.table, a22, "W_k"), Entry("layer2.attn.W_k", 0));
}

}  // namespace test_trace_param_refs
