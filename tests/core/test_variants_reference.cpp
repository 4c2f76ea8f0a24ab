// The variants of docs/variants.md against PyTorch (tests/data/variants_reference.json, written in
// float64 by tests/reference/gen_variants_reference.py, independently of the C++): for every case
// (each variant alone on the architectures it applies to, and the combinations of issue 10) the
// parameter table has exactly the reference's tensor names and shapes, Architecture::forward gives
// its P (traced and untraced, float), the architecture's batch has its targets (GPT's prefix rule,
// the encoder-decoder's next token), and the batched gradient of the summed loss (double through
// GptGradient / BertGradient / EdGradient, float through Architecture::gradient) matches for every
// tensor. A failure names the case, the tensor and the error.
#include <gtest/gtest.h>

#include <functional>
#include <set>
#include <string>

#include "core/arch/architecture.hpp"
#include "core/gradients/grad.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/training/training.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"
#include "test_ed_support.hpp"

namespace test_variants_reference {

using namespace sf;
using namespace sf::test;

namespace {

struct Case {
  std::string name;
  const json* doc;
  ModelConfig c;
};

const json& reference_doc() {
  static const json doc = load_test_json("variants_reference.json");
  return doc;
}

std::vector<Case> cases() {
  std::vector<Case> out;
  for (const json& k : reference_doc().at("cases"))
    out.push_back({k.at("name").get<std::string>(), &k, config_from_json(k.at("config").dump())});
  return out;
}

// The case's model: the reference's parameters loaded by name through the ParamTable (throws when
// a table's name or shape is not in the file).
Model model_of(const Case& k) {
  Model m(k.c);
  m.theta = exact_floats(json_tensors(k.doc->at("params"), m.table));
  return m;
}

// Runs f for every case; an exception is that case's failure (named), not the end of the test.
void for_each_case(const std::function<void(const Case&)>& f) {
  const std::vector<Case> all = cases();
  ASSERT_GE(all.size(), 30u);
  for (const Case& k : all) {
    SCOPED_TRACE("case " + k.name + " (" + k.doc->at("what").get<std::string>() + ")");
    try {
      f(k);
    } catch (const std::exception& e) {
      ADD_FAILURE() << k.name << ": threw: " << e.what();
    }
  }
}

Tokens tokens(const json& seq, const char* key) { return seq.contains(key) ? seq.at(key).get<Tokens>() : Tokens{}; }

// The case's sequences as one Batch padded to the longest (pad id 1, padded keys masked), with the
// reference's explicit targets.
Batch batch_of(const Case& k) {
  const json& seqs = k.doc->at("grads").at("sequences");
  std::vector<Tokens> xs, zs;
  for (const json& s : seqs) {
    xs.push_back(tokens(s, "x"));
    zs.push_back(tokens(s, "z"));
  }
  Batch b;
  b.B = static_cast<int>(xs.size());
  std::vector<const Tokens*> px, pz;
  for (int n = 0; n < b.B; ++n) {
    b.l = std::max(b.l, static_cast<int>(xs[n].size()));
    b.l_z = std::max(b.l_z, static_cast<int>(zs[n].size()));
    px.push_back(&xs[n]);
    pz.push_back(&zs[n]);
  }
  pad_sequences(px, b.l, 1, "a sequence", b.tokens, b.lengths);
  if (b.l_z > 0) pad_sequences(pz, b.l_z, 1, "a context z", b.z_tokens, b.z_lengths);
  b.targets.assign(b.tokens.size(), 0);
  for (int n = 0; n < b.B; ++n) {
    const std::vector<int> t = seqs.at(n).at("targets").get<std::vector<int>>();
    for (size_t i = 0; i < t.size(); ++i) b.targets[n * b.l + i] = t[i];
  }
  return b;
}

TEST(VariantsReference, EveryCaseTableHasExactlyTheReferenceTensors) {
  for_each_case([](const Case& k) {
    EXPECT_EQ(validate(k.c), "");
    const ParamTable table(k.c);
    std::set<std::string> in_table, in_file;
    for (const ParamEntry& e : table.entries()) in_table.insert(e.name);
    for (const auto& [name, t] : k.doc->at("params").items()) in_file.insert(name);
    EXPECT_EQ(in_table, in_file);
    json_tensors(k.doc->at("params"), table);  // the shapes (throws naming the tensor)
    EXPECT_EQ(json_tensors(k.doc->at("grads").at("grads"), table).size(), table.total());
  });
}

TEST(VariantsReference, TheFileCoversEveryVariant) {
  std::set<std::string> names;
  for_each_case([&](const Case& k) {
    names.insert(k.name);
    EXPECT_NE(variant_summary(k.c), "") << k.name << " is the paper's model";
  });
  for (const char* n : {"gpt_post_ln", "gpt_rms_norm", "gpt_sinusoidal_lmax", "gpt_sinusoidal_10000", "gpt_rope",
                        "gpt_alibi", "gpt_no_position", "gpt_gelu_tanh", "gpt_relu", "gpt_swiglu", "gpt_tied",
                        "gpt_mqa", "gpt_gqa", "gpt_prefix", "gpt_modern", "gpt_gpt1_alibi", "bert_pre_ln",
                        "bert_alibi", "bert_tied", "ed_pre_ln", "ed_rope", "ed_swiglu", "ed_tied", "ed_mqa",
                        "bert_extras", "bert_extras_tied", "gpt_extras", "ed_extras"})
    EXPECT_TRUE(names.count(n)) << n;
  // Issue 25: the sliding window and T5's relative position bias.
  for (const char* n : {"gpt_window", "gpt_relative", "gpt_prefix_window_relative", "bert_window", "bert_relative", "ed_window",
                        "ed_relative"})  // ed_relative: bidirectional buckets in the encoder, causal in the decoder
    EXPECT_TRUE(names.count(n)) << n;
}

TEST(VariantsReference, ForwardUntracedMatchesP) {
  for_each_case([](const Case& k) {
    const Model m = model_of(k);
    const json& f = k.doc->at("forward");
    const MatF P = architecture(k.c).forward(m, tokens(f, "z"), tokens(f, "x"));
    EXPECT_LT(gap(P.cast<double>(), json_matrix(f.at("P"))), kRefFloat) << k.name << ": P (untraced)";
  });
}

TEST(VariantsReference, ForwardTracedMatchesP) {
  for_each_case([](const Case& k) {
    const Model m = model_of(k);
    const json& f = k.doc->at("forward");
    Trace trace;
    Tracer tr(trace);
    const MatF P = architecture(k.c).forward(m, tokens(f, "z"), tokens(f, "x"), &tr);
    EXPECT_LT(gap(P.cast<double>(), json_matrix(f.at("P"))), kRefFloat) << k.name << ": P (traced)";
    EXPECT_FALSE(trace.events.empty()) << k.name;
  });
}

// The architecture's own minibatch (Architecture::make_batch) puts the loss terms where the
// reference does: GPT's x[t+1] from t = max(p, 1) under the prefix mask, the encoder-decoder's
// x[t+1]. (BERT's draw its masks at random: its targets are the reference's choice.)
TEST(VariantsReference, MakeBatchTargetsAreTheReferenceTargets) {
  for_each_case([](const Case& k) {
    if (k.c.arch == "bert") return;
    const Batch want = batch_of(k);
    std::vector<Example> data;
    std::vector<size_t> pick;
    for (const json& s : k.doc->at("grads").at("sequences")) {
      pick.push_back(data.size());
      const Tokens x = tokens(s, "x");
      data.push_back({tokens(s, "z"), x, k.c.mask == MaskKind::Prefix ? prefix_position(x, k.c) : 0});
    }
    Batch got;
    Rng rng(1);
    architecture(k.c).make_batch(k.c, data, pick, want.l, want.l_z, TrainOptions{}, rng, got);
    EXPECT_EQ(got.tokens, want.tokens) << k.name;
    EXPECT_EQ(got.z_tokens, want.z_tokens) << k.name;
    EXPECT_EQ(got.targets, want.targets) << k.name;
  });
}

// loss and ∇loss in T through the architecture's batched gradient, into `grad` (θ's layout).
template <class G, auto bind, class T>
T batched_gradient(const Case& k, const ParamTable& table, const std::vector<T>& theta, const Batch& b,
                   std::vector<double>& grad) {
  G g(table);
  const T loss = g.loss_and_gradient(k.c, bind(table, theta.data()), b, T(1));
  grad.assign(g.grad.begin(), g.grad.end());
  return loss;
}

double double_gradient(const Case& k, const ParamTable& table, const std::vector<double>& theta, const Batch& b,
                       std::vector<double>& grad) {
  if (k.c.arch == "gpt") return batched_gradient<GptGradient<double>, &bind_gpt<const double>>(k, table, theta, b, grad);
  if (k.c.arch == "bert")
    return batched_gradient<BertGradient<double>, &bind_bert<const double>>(k, table, theta, b, grad);
  return batched_gradient<EdGradient<double>, &bind_ed<const double>>(k, table, theta, b, grad);
}

// Every tensor's gradient against the reference: relative error (2-norm) below tol; a tensor whose
// reference gradient is 0 up to rounding (b_k without RoPE: the column softmax ignores the shift it
// adds) must be as small.
void expect_gradient(const Case& k, const ParamTable& table, double loss, const std::vector<double>& grad,
                     double tol, const char* path) {
  const json& g = k.doc->at("grads");
  const double want_loss = g.at("loss").get<double>();
  EXPECT_NEAR(loss, want_loss, tol * std::abs(want_loss)) << k.name << ": loss (" << path << ")";
  const std::vector<double> want = json_tensors(g.at("grads"), table);
  ASSERT_EQ(grad.size(), want.size());
  const double all = Eigen::Map<const Vec<double>>(want.data(), want.size()).norm();
  for (const ParamEntry& e : table.entries()) {
    const Eigen::Map<const MatD> ref(want.data() + e.offset, e.rows, e.cols * e.count);
    const Eigen::Map<const MatD> got(grad.data() + e.offset, e.rows, e.cols * e.count);
    if (ref.norm() < 1e-9 * all) {
      EXPECT_LT(got.norm(), tol * all) << k.name << ": " << e.name << " (" << path << ", reference ≈ 0)";
      continue;
    }
    EXPECT_LT(relative_error(got, ref), tol) << k.name << ": " << e.name << " (" << path << ")";
  }
}

TEST(VariantsReference, GradientOfTheSummedLossDouble) {
  for_each_case([](const Case& k) {
    const ParamTable table(k.c);
    const std::vector<double> theta = json_tensors(k.doc->at("params"), table);
    std::vector<double> grad;
    const double loss = double_gradient(k, table, theta, batch_of(k), grad);
    expect_gradient(k, table, loss, grad, kRefDoubleGradient, "double");
  });
}

TEST(VariantsReference, GradientOfTheSummedLossFloatThroughTheArchitecture) {
  for_each_case([](const Case& k) {
    const Model m = model_of(k);
    const std::unique_ptr<ModelGradient> g = architecture(k.c).gradient(m.table);
    const float loss = g->loss_and_gradient(m, batch_of(k), 1.0f);
    const std::vector<double> grad(g->grad(), g->grad() + g->grad_size());
    expect_gradient(k, m.table, loss, grad, kRefFloatGradient, "float, Architecture::gradient");
  });
}

}  // namespace

}  // namespace test_variants_reference
