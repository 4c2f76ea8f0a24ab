// What the traced backward (core/backprop/) binds, and under which names (issue 24, session 12):
//  - one key, one value: core's BoundValueKey (core/backprop/bound_value_key.hpp) identifies every
//    value the Line and Enter events of a whole GPT, BERT or encoder-decoder backward bind, and a
//    sub-step never shows another value under its line's key;
//  - within a line's adjoint (its event and its sub-steps) a name means one value (pre-LN BERT's line 10
//    names ∇ of the final norm's output apart from its ∇X);
//  - the three architectures bind the same names on corresponding residual lines (GPT's lines 5–8,
//    BERT's 5–8, the encoder's 5–8, the decoder's 14–19);
//  - a tied model binds ∇W_u on its unembedding line, and ∇W_e = (the untied model's ∇W_e) + ∇W_uᵀ.
// Models: the torch reference's seven (tests/data/backprop/, the variant mixes BackpropTorch checks)
// and the GPT mixes of test_backprop_support.hpp (prefix-LM, sinusoidal, the ecosystem extras).
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "core/backprop/bound_value_key.hpp"
#include "grad_check.hpp"
#include "test_backprop_support.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"

namespace test_backprop_names {

using namespace sf;
using namespace sf::test;

namespace {

std::vector<NamedRun> all_runs() {
  std::vector<NamedRun> runs = torch_reference_runs();
  EXPECT_EQ(runs.size(), 7u) << "the torch reference's models (tests/data/backprop/index.json)";
  for (const Mix& m : gpt_mixes()) {
    Model model = spread_model(m.c, 3);
    Batch b = dtraining_batch(sample_x(), m.c);
    runs.push_back({"gpt " + m.name, std::move(model), std::move(b)});
  }
  return runs;
}

Trace traced(const NamedRun& r) {
  Trace t;
  Tracer tr(t);
  traced_backward<double>(r.model, r.batch, &tr);
  return t;
}

// Two bindings name the same value when their numbers (and token ids) are identical: both are float
// copies of the same double, so equal means bitwise equal.
bool same_numbers(const Value& a, const Value& b) {
  return a.tokens == b.tokens && a.m.rows() == b.m.rows() && a.m.cols() == b.m.cols() && MatF(a.m) == MatF(b.m);
}

}  // namespace

// Over a whole backward, no two values bound by Line or Enter events share a key. Before the key named
// the architecture's line (the contract's (alg, line, pass, l, h, t, name)), the encoder-decoder's
// self- and cross-attention of one decoder layer, and its encoder's and decoder's layer l, collided.
TEST(BackpropNames, EveryLineAndEntryBindingHasItsOwnKey) {
  for (const NamedRun& r : all_runs()) {
    SCOPED_TRACE(r.name);
    const Trace t = traced(r);
    std::set<BoundValueKey> seen, without_call;
    size_t count = 0;
    for (size_t k = 0; k < t.size(); ++k) {
      if (t.events[k].kind == EventKind::SubStep) continue;
      for (const Value& v : t.events[k].values) {
        BoundValueKey key = bound_value_key(t, k, v);
        EXPECT_TRUE(seen.insert(key).second) << "two bound values share the key " << describe(key);
        key.call = {};
        without_call.insert(key);
        ++count;
      }
    }
    EXPECT_GT(count, 300u);  // the smallest torch case binds 337 values
    // The contract's key alone, (alg, line, pass, l, h, t, name), is not enough for the encoder-decoder.
    if (r.model.config.arch == "ed") EXPECT_LT(without_call.size(), seen.size());
  }
}

// A sub-step shows part of its line's work: any name it binds that its line binds too is the same
// value (one key, one value, sub-steps included). Pre-LN BERT's line 10 bound ∇X twice: ∇ of the final
// norm's output on a sub-step, ∇ of its input on the line; the sub-step's is now "∇X (final norm's output)".
TEST(BackpropNames, WithinALinesAdjointANameMeansOneValue) {
  for (const NamedRun& r : all_runs()) {
    SCOPED_TRACE(r.name);
    const Trace t = traced(r);
    std::map<BoundValueKey, const Value*> first;
    for (size_t k = 0; k < t.size(); ++k)
      for (const Value& v : t.events[k].values) {
        const auto [it, fresh] = first.emplace(bound_value_key(t, k, v), &v);
        EXPECT_TRUE(fresh || same_numbers(*it->second, v)) << describe(it->first) << " is bound with two values";
      }
  }
  // The partial is bound under its own name, with a note.
  for (const NamedRun& r : torch_reference_runs()) {
    if (r.name != "bert_pre_ln") continue;
    const Trace t = traced(r);
    const size_t sub = find_event(t, lines::e_transformer::final_gelu.adjoint(), EventKind::SubStep);
    const size_t with_partial = [&] {
      for (size_t k = sub; k < t.size(); ++k)
        if (bound(t, k, "∇X (final norm's output)")) return k;
      return t.size();
    }();
    ASSERT_LT(with_partial, t.size());
    EXPECT_EQ(t.events[with_partial].kind, EventKind::SubStep);
    EXPECT_FALSE(bound(t, with_partial, "∇X (final norm's output)")->note.empty());
  }
}

namespace {

// The names the Line events of layer 1 bind, per line, of the frame of algorithm `alg` (its own lines).
std::map<int, std::set<std::string>> layer1_names(const Trace& t, int alg) {
  std::map<int, std::set<std::string>> out;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.kind != EventKind::Line || e.alg != alg || e.idx.l != 1 || e.pass != Pass::Backward) continue;
    for (const Value& v : e.values) out[e.line].insert(v.name);
  }
  return out;
}

// `names` with each layer norm's superscript (¹ … ⁵) replaced by `to` and the decoder's MLP weights
// (mlp3, mlp4) by the encoder's (mlp1, mlp2): how Algorithm 8's decoder names what GPT's layer names.
std::set<std::string> renamed(const std::set<std::string>& names, const std::string& from, const std::string& to) {
  std::set<std::string> out;
  for (std::string n : names) {
    for (const auto& [a, b] : std::vector<std::pair<std::string, std::string>>{{from, to}, {"mlp3", "mlp1"}, {"mlp4", "mlp2"}})
      for (size_t p = n.find(a); p != std::string::npos; p = n.find(a, p + b.size())) n.replace(p, a.size(), b);
    out.insert(n);
  }
  return out;
}

// The three architectures with the same sizes (2 layers of 2 heads, d_f = d_e) and norm position.
struct ThreeArchs {
  Trace gpt, bert, ed;
};
ThreeArchs three_archs(NormPosition p) {
  ModelConfig g = small_gpt();
  ModelConfig b = bert_test_config(2, 2, 8, 4, 3, 10, 8, 12, {"a", "b", "c", "d", "e"});
  ModelConfig e = ed_test_config(2, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d", "e"});
  for (ModelConfig* c : {&g, &b, &e}) c->norm_position = p;
  const Tokens x{7, 1, 3, 2, 5, 4, 8};
  ThreeArchs out;
  for (auto [c, batch, trace] : {std::tuple{g, dtraining_batch(sample_x(), g), &out.gpt},
                                 std::tuple{b, masked_batch(x, {3, 5}, b.mask_token()), &out.bert},
                                 std::tuple{e, next_token_batch({7, 1, 2, 1, 8}, {7, 4, 3, 5, 8}), &out.ed}})
    *trace = traced(NamedRun{"", spread_model(c, 9), batch});
  return out;
}

}  // namespace

// Pre-LN, the attention line's adjoint (GPT's 6, BERT's 6, the decoder's 15 and 17) binds ∇X̃ and the
// residual's partial ∇X in every architecture (GPT bound no partial before); the other residual lines
// bind the same names too. Post-LN alike. The cross-attention's line adds ∇Z, its gradient into Z.
TEST(BackpropNames, TheArchitecturesBindTheSameNamesOnCorrespondingResidualLines) {
  for (NormPosition p : {NormPosition::Pre, NormPosition::Post}) {
    SCOPED_TRACE(p == NormPosition::Pre ? "pre-LN" : "post-LN");
    const ThreeArchs a = three_archs(p);
    const auto gpt = layer1_names(a.gpt, 10), bert = layer1_names(a.bert, 9), ed = layer1_names(a.ed, 8);
    for (int line = 5; line <= 8; ++line) {
      SCOPED_TRACE("line " + std::to_string(line));
      ASSERT_TRUE(gpt.count(line));
      EXPECT_EQ(bert.at(line), gpt.at(line));
      EXPECT_EQ(renamed(ed.at(line), "Z", "X"), gpt.at(line)) << "the encoder's layer (its stream is Z)";
    }
    // The decoder's lines 14–19: self-attention (γ³), cross-attention (γ⁴; its attention line adds ∇Z),
    // the MLP (γ⁵, W_mlp3, W_mlp4), as GPT's 5, 6, 5, 6, 7, 8.
    const int cross = p == NormPosition::Pre ? 17 : 16;
    for (int line = 14; line <= 19; ++line) {
      const int gpt_line = line <= 17 ? 5 + (line - 14) % 2 : line - 11;
      std::set<std::string> names = renamed(ed.at(line), line <= 15 ? "³" : line <= 17 ? "⁴" : "⁵", line <= 17 ? "¹" : "²");
      if (line == cross) EXPECT_EQ(names.erase("∇Z"), 1u) << "the cross-attention's line binds ∇Z";
      EXPECT_EQ(names, gpt.at(gpt_line)) << "decoder line " << line << " against GPT's line " << gpt_line;
    }
    if (p == NormPosition::Pre) {
      EXPECT_TRUE(gpt.at(6).count("∇X̃") && gpt.at(6).count("∇X")) << "pre-LN line 6: ∇X̃ and the residual's ∇X";
      const Value* partial = bound(a.gpt, find_event(a.gpt, lines::d_transformer::attention.adjoint(), EventKind::Line, 1), "∇X");
      ASSERT_NE(partial, nullptr);
      EXPECT_NE(partial->note.find("residual path"), std::string::npos) << partial->note;
    }
  }
}

namespace {

// The untied twin of a tied model: the same θ, and W_u = W_eᵀ as a tensor of its own. Its forward is
// the tied model's, so its ∇W_u is the tied model's ∇W_u and its ∇W_e the tied ∇W_e without ∇W_uᵀ.
Model untied_twin(const Model& tied) {
  ModelConfig c = tied.config;
  c.tied_unembedding = false;
  Model u = Model::initialised(c, 1);
  for (const ParamEntry& e : tied.table.entries())
    std::copy_n(tied.theta.begin() + e.offset, e.size(), u.theta.begin() + u.table.at(e.name).offset);
  const ParamEntry &W_e = tied.table.at("W_e"), &W_u = u.table.at("W_u");
  MapM<float>(u.theta.data() + W_u.offset, W_u.rows, W_u.cols) =
      MapM<const float>(tied.theta.data() + W_e.offset, W_e.rows, W_e.cols).transpose();
  return u;
}

MatD grad_of(const Model& m, const TracedGradient<double>& g, const std::string& name) {
  const ParamEntry& e = m.table.at(name);
  return Eigen::Map<const MatD>(g.grad.data() + e.offset, e.rows, e.cols);
}

// The value `name` bound by the Line event at `at` (the first), as double.
MatD bound_at(const Trace& t, LineRef at, const std::string& name) {
  const Value* v = bound(t, find_event(t, at), name);
  EXPECT_NE(v, nullptr) << name << " at line " << at.line << " of Algorithm " << at.alg;
  return v ? MatD(MatF(v->m).cast<double>()) : MatD();
}

}  // namespace

// A tied model's unembedding line binds ∇W_u ∈ ℝ^{N_V×d_e} with the tied note, and ∇W_e is the untied
// part plus ∇W_uᵀ: in GPT, BERT (d_f = d_e) and the encoder-decoder (∇W_e's last line is z's embedding).
TEST(BackpropNames, ATiedModelBindsGradWuAndGradWeGainsItsTranspose) {
  ModelConfig g = small_gpt();
  ModelConfig b = bert_test_config(2, 2, 8, 4, 3, 10, 8, 12, {"a", "b", "c", "d", "e"});
  ModelConfig e = ed_test_config(1, 2, 2, 8, 4, 3, 10, 12, {"a", "b", "c", "d", "e"});
  const Tokens x{7, 1, 3, 2, 5, 4, 8};
  const std::vector<std::tuple<ModelConfig, Batch, LineRef, LineRef>> cases{
      {g, dtraining_batch(sample_x(), g), lines::d_transformer::P.adjoint(), lines::d_transformer::embed.adjoint()},
      {b, masked_batch(x, {3, 5}, b.mask_token()), lines::e_transformer::P.adjoint(), lines::e_transformer::embed.adjoint()},
      {e, next_token_batch({7, 1, 2, 1, 8}, {7, 4, 3, 5, 8}), lines::ed_transformer::P.adjoint(),
       lines::ed_transformer::enc_embed.adjoint()}};
  for (auto [c, batch, unembed, embed] : cases) {
    SCOPED_TRACE(c.arch);
    c.tied_unembedding = true;
    const Model tied = spread_model(c, 4), untied = untied_twin(tied);
    Trace t_tied, t_untied;
    Tracer tr_tied(t_tied), tr_untied(t_untied);
    const TracedGradient<double> gt = traced_backward<double>(tied, batch, &tr_tied);
    const TracedGradient<double> gu = traced_backward<double>(untied, batch, &tr_untied);
    // The bound ∇W_u, (N_V, d_e), with the note; float copies of the double gradients (2⁻²⁴ relative
    // each) of two runs whose sums differ in order only (≈ 1e-15): 2·2⁻²⁴ relative to the largest entry.
    const Value* dW_u = bound(t_tied, find_event(t_tied, unembed), "∇W_u");
    ASSERT_NE(dW_u, nullptr) << "the tied model's unembedding line binds ∇W_u";
    EXPECT_NE(dW_u->note.find("W_u = W_eᵀ, so ∇W_e gains ∇W_uᵀ"), std::string::npos) << dW_u->note;
    const MatD untied_W_u = grad_of(untied, gu, "W_u");
    ASSERT_EQ(dW_u->m.rows(), untied_W_u.rows());
    ASSERT_EQ(dW_u->m.cols(), untied_W_u.cols());
    EXPECT_LT(relative_error(MatF(dW_u->m).cast<double>(), untied_W_u), 2 * kFloatU);
    // ∇θ in double: ∇W_e (tied) = ∇W_e (untied) + ∇W_uᵀ (untied), the same sums reordered (≈ 1e-15).
    const MatD sum = grad_of(untied, gu, "W_e") + untied_W_u.transpose();
    EXPECT_LT(relative_error(grad_of(tied, gt, "W_e"), sum), 1e-12);
    // And the trace's: the embedding line's ∇W_e is the untied one's plus the bound ∇W_uᵀ. Each is a
    // float copy (2⁻²⁴ of its own size) of a double within 1e-12 of the sum: u·(‖a‖ + ‖b‖ + ‖c‖) bounds it.
    const MatD untied_e = bound_at(t_untied, embed, "∇W_e"), tied_uT = bound_at(t_tied, unembed, "∇W_u").transpose(),
               tied_e = bound_at(t_tied, embed, "∇W_e");
    EXPECT_LE((tied_e - (untied_e + tied_uT)).norm(), kFloatU * (untied_e.norm() + tied_uT.norm() + tied_e.norm()));
  }
}

}  // namespace test_backprop_names
