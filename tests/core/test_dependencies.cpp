// Dependency tracing (core/trace/dependencies.hpp), checked by PERTURBATION: for a cell of a value
// a line bound, the rules are followed back to the frame's inputs; changing an input cell the rules
// name must change the cell, changing any other must not. The cell is recomputed by re-running the
// algorithm functions themselves (attention, mh_attention, layer_norm, the forward passes), not
// through the rules. Every matrix a GPT, BERT, encoder-decoder or training trace binds has a rule.
#include <gtest/gtest.h>

#include <cmath>
#include <map>
#include <set>
#include <tuple>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/trace/dependencies.hpp"
#include "core/training/training.hpp"
#include "test_bert_support.hpp"
#include "test_ed_support.hpp"
#include "dependency_closure.hpp"

namespace test_dependencies {

using namespace sf;

namespace {

using Cell = test::DependencyCell;  // an input's name and 0-based cell
using MatD = Mat<double>;

MatD spread(int rows, int cols, double seed) {
  MatD m(rows, cols);
  for (int i = 0; i < m.size(); ++i) m.data()[i] = std::sin(seed * 12.9898 + i * 78.233) * 1.3;
  return m;
}

bool same(double a, double b) { return a == b || std::abs(a - b) <= 1e-12 * (1 + std::abs(a)); }

// Perturbs every cell of every input; the target changes exactly for the cells in `named`.
template <class Target>
void expect_perturbation(const std::set<Cell>& named, const std::map<std::string, MatD*>& inputs, Target target,
                         const std::string& what) {
  const double base = target();
  for (const auto& [name, M] : inputs)
    for (int i = 0; i < M->rows(); ++i)
      for (int j = 0; j < M->cols(); ++j) {
        const double old = (*M)(i, j);
        (*M)(i, j) += 0.25 + 0.1 * i;
        const bool changed = !same(target(), base);
        (*M)(i, j) = old;
        EXPECT_EQ(changed, named.count({name, i, j}) > 0)
            << what << ": changing " << name << "[" << i + 1 << ", " << j + 1 << "] "
            << (changed ? "changed it, but the rules do not name it" : "did not change it, but the rules name it");
      }
}

// One attention head's weights, as matrices the test can perturb.
struct Head {
  MatD W_q = spread(2, 3, 1), b_q = spread(2, 1, 2), W_k = spread(2, 3, 3), b_k = spread(2, 1, 4),
       W_v = spread(2, 3, 5), b_v = spread(2, 1, 6);
  AttentionHeadW<const double> W() const {
    using M = MapM<const double>;
    using V = MapV<const double>;
    return {M(W_q.data(), 2, 3), V(b_q.data(), 2), M(W_k.data(), 2, 3), V(b_k.data(), 2), M(W_v.data(), 2, 3),
            V(b_v.data(), 2)};
  }
};

// ℓ_z = 4 keys, ℓ_x = 3 queries; column 1 sees keys 1, 2; column 2 keys 1, 3, 4; column 3 all.
Mask test_mask() {
  Mask m = Mask::Zero(4, 3);
  m(0, 0) = m(1, 0) = 1;
  m(0, 1) = m(2, 1) = m(3, 1) = 1;
  m.col(2).setOnes();
  return m;
}

// The Line event of (alg, line) in the trace's top frame.
size_t find_line(const Trace& trace, int alg, int line) {
  for (size_t k = 0; k < trace.size(); ++k)
    if (trace.events[k].alg == alg && trace.events[k].line == line && trace.events[k].kind == EventKind::Line) return k;
  ADD_FAILURE() << "no Algorithm " << alg << " line " << line;
  return 0;
}

double record_cell(const AttentionRecord<double>& rec, const std::string& name, int line, int r, int c) {
  if (name == "Q") return rec.Q(r, c);
  if (name == "K") return rec.K(r, c);
  if (name == "V") return rec.V(r, c);
  if (name == "S") return line == 4 ? rec.S(r, c) : rec.S_masked(r, c);
  if (name == "S/√d_attn") return rec.S_masked(r, c) / std::sqrt(2.0);
  if (name == "softmax(S/√d_attn)") return rec.A(r, c);
  if (name == "Ṽ") return rec.Vt(r, c);
  ADD_FAILURE() << "no record for " << name;
  return 0;
}

}  // namespace

TEST(Dependencies, AttentionLinesByPerturbation) {
  MatD X = spread(3, 3, 7), Z = spread(3, 4, 8);
  Head h;
  const Mask mask = test_mask();
  Trace trace;
  Tracer tr(trace);
  attention<double>(X, Z, h.W(), mask, &tr);
  std::map<std::string, MatD*> inputs{{"X", &X},     {"Z", &Z},     {"W_q", &h.W_q}, {"b_q", &h.b_q},
                                      {"W_k", &h.W_k}, {"b_k", &h.b_k}, {"W_v", &h.W_v}, {"b_v", &h.b_v}};
  int checked = 0;
  for (size_t k = 1; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    for (const Value& v : e.values) {
      if (v.kind != ValueKind::Matrix) continue;
      for (int r = 0; r < v.m.rows(); ++r)
        for (int c = 0; c < v.m.cols(); ++c) {
          const std::set<Cell> named = test::dependency_inputs(trace, k, v.name, r, c, 0);
          auto target = [&] {
            AttentionRecord<double> rec;
            attention<double>(X, Z, h.W(), mask, nullptr, &rec);
            return record_cell(rec, v.name, e.line, r, c);
          };
          // softmax is shift-invariant: b_k adds the same qᵀb_k to every score of a column, so the
          // weights (and Ṽ) do not read it although S does. Checked here, then left out.
          const bool weights = v.name == "softmax(S/√d_attn)" || v.name == "Ṽ";
          std::set<Cell> expected = named;
          if (weights)
            for (int i = 0; i < h.b_k.rows(); ++i) expected.erase({"b_k", i, 0});
          expect_perturbation(expected, inputs, target,
                              "Algorithm 4 line " + std::to_string(e.line) + " " + v.name + "[" + std::to_string(r + 1) +
                                  ", " + std::to_string(c + 1) + "]");
          ++checked;
        }
    }
  }
  EXPECT_GT(checked, 60);
}

TEST(Dependencies, AttentionRulesInThePapersNotation) {
  MatD X = spread(3, 3, 7), Z = spread(3, 4, 8);
  Head h;
  Trace trace;
  Tracer tr(trace);
  attention<double>(X, Z, h.W(), test_mask(), &tr);
  const size_t line4 = find_line(trace, 4, 4), line5 = find_line(trace, 4, 5), line6 = find_line(trace, 4, 6);
  const CellDependencies s = cell_dependencies(trace, line4, "S", 2, 1);
  EXPECT_EQ(s.reason, "S[3, 2] = K[:, 3] · Q[:, 2]");
  EXPECT_EQ(s.summary(), "← K[:, 3] and Q[:, 2]");
  ASSERT_EQ(s.sources.size(), 2u);
  EXPECT_EQ(s.sources[0].blocks, (std::vector<CellBlock>{{0, 2, 2, 1}}));
  // Line 5 on a masked cell: only the mask matters (S is −∞ whatever line 4 computed).
  const CellDependencies masked = cell_dependencies(trace, line5, "S", 1, 1);
  ASSERT_EQ(masked.sources.size(), 1u);
  EXPECT_EQ(masked.sources[0].value, "Mask");
  // Line 5 on a kept cell reads line 4's S (an earlier event than line 5's own S).
  const CellDependencies kept = cell_dependencies(trace, line5, "S", 0, 1);
  ASSERT_EQ(kept.sources.size(), 2u);
  EXPECT_EQ(kept.sources[0].event, line4);
  // Ṽ[1, 2] reads row 1 of V at the keys column 2 may see (1, 3, 4), and those weights.
  const CellDependencies vt = cell_dependencies(trace, line6, "Ṽ", 0, 1);
  ASSERT_EQ(vt.sources.size(), 2u);
  EXPECT_EQ(vt.sources[0].blocks, (std::vector<CellBlock>{{0, 0, 1, 1}, {0, 2, 1, 2}}));
  EXPECT_EQ(vt.sources[0].text, "V[1, 1], V[1, 3…4]");
  EXPECT_FALSE(cell_dependencies(trace, line4, "S", 9, 9).rule);  // outside S: no rule, said why
}

TEST(Dependencies, MultiHeadLinesByPerturbation) {
  MatD X = spread(3, 3, 9), Z = spread(3, 4, 10), W_o = spread(3, 4, 11), b_o = spread(3, 1, 12);
  Head h1, h2;
  h2.W_q = spread(2, 3, 13), h2.W_v = spread(2, 3, 14);
  const Mask mask = test_mask();
  auto W = [&] {
    return MHAttentionW<const double>{{h1.W(), h2.W()}, MapM<const double>(W_o.data(), 3, 4),
                                      MapV<const double>(b_o.data(), 3)};
  };
  Trace trace;
  Tracer tr(trace);
  mh_attention<double>(X, Z, W(), mask, &tr);
  const std::map<std::string, MatD*> inputs{{"X", &X}, {"Z", &Z}, {"W_o", &W_o}, {"b_o", &b_o}};
  int checked = 0;
  for (size_t k = 1; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    if (e.alg != 5 || e.kind != EventKind::Line) continue;
    for (const Value& v : e.values) {
      if (v.kind != ValueKind::Matrix) continue;
      for (int r = 0; r < v.m.rows(); ++r)
        for (int c = 0; c < v.m.cols(); ++c) {
          auto target = [&] {
            std::vector<AttentionRecord<double>> recs;
            const MatD Vt = mh_attention<double>(X, Z, W(), mask, nullptr, &recs);
            if (v.name == "Ṽ") return Vt(r, c);
            if (v.name == "Y") return recs[r / 2].Vt(r % 2, c);
            return recs[v.name == "Y^1" ? 0 : 1].Vt(r, c);
          };
          expect_perturbation(test::dependency_inputs(trace, k, v.name, r, c, 0), inputs, target, "Algorithm 5 " + v.name);
          ++checked;
        }
    }
  }
  EXPECT_EQ(checked, 2 * 6 + 12 + 9);  // Y^1, Y^2 (2×3), Y (4×3), Ṽ (3×3)
}

TEST(Dependencies, LayerNormByPerturbation) {
  MatD e = spread(5, 1, 15), gamma = spread(5, 1, 16), beta = spread(5, 1, 17);
  auto run = [&](Tracer* tr) {
    return layer_norm<double>(e.col(0), MapV<const double>(gamma.data(), 5), MapV<const double>(beta.data(), 5), 1e-5, tr);
  };
  Trace trace;
  Tracer tr(trace);
  run(&tr);
  const std::map<std::string, MatD*> inputs{{"e", &e}, {"γ", &gamma}, {"β", &beta}};
  const size_t line3 = trace.size() - 1;
  ASSERT_EQ(trace.events[line3].line, 3);
  for (int i = 0; i < 5; ++i) {
    const std::set<Cell> named = test::dependency_inputs(trace, line3, "ê", i, 0, 0);
    EXPECT_EQ(named.size(), 5u + 2u);  // all of e (through m and v), γ[i], β[i]
    expect_perturbation(named, inputs, [&] { return run(nullptr)(i); }, "ê[" + std::to_string(i + 1) + "]");
  }
}

namespace {

ModelConfig small_gpt() {
  ModelConfig c;
  c.L = 2, c.H = 2, c.d_e = 4, c.d_attn = 2, c.d_mid = 2, c.d_mlp = 8, c.l_max = 8;
  c.vocab = {"a", "b", "c"};
  return c;
}

struct Traced {
  Trace trace;
  Traced(const Model& m, const Tokens& z, const Tokens& x) {
    Tracer tr(trace);
    architecture(m.config).forward(m, z, x, &tr);
  }
};

// For every column of every token-indexed matrix a forward algorithm's own lines bind: the
// input tokens token_dependencies names are exactly those whose change changes that column.
void expect_token_dependencies(const Model& m, const Tokens& z, const Tokens& x, const char* what) {
  const Traced base(m, z, x);
  const int N_V = m.config.N_V();
  auto other = [&](int id) { return id % (N_V - 3) + 1; };  // another ordinary token
  std::vector<Traced> changed_x, changed_z;
  for (size_t u = 0; u < x.size(); ++u) {
    Tokens y = x;
    y[u] = other(y[u]);
    changed_x.emplace_back(m, z, y);
  }
  for (size_t u = 0; u < z.size(); ++u) {
    Tokens y = z;
    y[u] = other(y[u]);
    changed_z.emplace_back(m, y, x);
  }
  const int forward = base.trace.events[0].alg;
  int checked = 0;
  for (size_t k = 0; k < base.trace.size(); ++k) {
    const Event& e = base.trace.events[k];
    if (e.alg != forward || e.depth != 0 || e.kind != EventKind::Line) continue;
    for (size_t vi = 0; vi < e.values.size(); ++vi) {
      const Value& v = e.values[vi];
      if (v.kind != ValueKind::Matrix || (v.cols != Axis::TokenX && v.cols != Axis::TokenZ)) continue;
      for (int c = 0; c < v.m.cols(); ++c) {
        const TokenDependencies d = token_dependencies(base.trace, k, v.name, c);
        auto expect = [&](const std::vector<Traced>& runs, const std::vector<int>& named, const char* seq) {
          for (size_t u = 0; u < runs.size(); ++u) {
            const Value& w = runs[u].trace.events[k].values[vi];
            // Exactly: a column that does not read the changed token is computed from the same numbers in the
            // same order; one that does may move little (P of a small model is near uniform).
            const bool changed = MatF(w.m.col(c)) != MatF(v.m.col(c));
            const bool in = std::find(named.begin(), named.end(), static_cast<int>(u) + 1) != named.end();
            EXPECT_EQ(changed, in) << what << " line " << e.line << " " << v.name << "[:, " << c + 1 << "] and " << seq
                                   << "[" << u + 1 << "]";
          }
        };
        expect(changed_x, d.x, "x");
        expect(changed_z, d.z, "z");
        ++checked;
      }
    }
  }
  EXPECT_GT(checked, 20) << what;
}

}  // namespace

TEST(Dependencies, GptTokensThroughTheCausalMask) {
  const Model m = Model::initialised(small_gpt(), 3);
  const Tokens x{6, 1, 3, 2, 1};
  expect_token_dependencies(m, {}, x, "GPT");
  const Traced r(m, {}, x);
  const size_t last = r.trace.size() - 1;
  ASSERT_EQ(r.trace.events[last].line, 11);
  EXPECT_EQ(token_dependencies(r.trace, last, "P", 2).x, (std::vector<int>{1, 2, 3}));
  const CellDependencies p = cell_dependencies(r.trace, last, "P", 0, 2);
  EXPECT_EQ(p.tokens, "x[1…3]");
}

TEST(Dependencies, BertTokensAllPositions) {
  const Model m = Model::initialised(test::bert_test_config(2, 2, 4, 2, 2, 8, 4, 8, {"a", "b", "c"}), 4);
  const Tokens x{5, 1, 4, 2};  // <bos> a [MASK] b
  expect_token_dependencies(m, {}, x, "BERT");
  const Traced r(m, {}, x);
  EXPECT_EQ(token_dependencies(r.trace, r.trace.size() - 1, "P", 0).x, (std::vector<int>{1, 2, 3, 4}));
}

TEST(Dependencies, EncoderDecoderTokensThroughCrossAttention) {
  const Model m = Model::initialised(test::ed_test_config(1, 2, 2, 4, 2, 2, 8, 8, {"a", "b", "c"}), 5);
  const Tokens z{5, 1, 2, 6}, x{5, 3, 1};
  expect_token_dependencies(m, z, x, "encoder-decoder");
  const Traced r(m, z, x);
  const TokenDependencies d = token_dependencies(r.trace, r.trace.size() - 1, "P", 1);
  EXPECT_EQ(d.x, (std::vector<int>{1, 2}));
  EXPECT_EQ(d.z, (std::vector<int>{1, 2, 3, 4}));
  EXPECT_EQ(cell_dependencies(r.trace, r.trace.size() - 1, "P", 0, 1).tokens, "z[1…4] and x[1…2]");
}

namespace {

// Every Line and SubStep event that binds a matrix has a rule for its first and last cells.
void expect_rules_everywhere(const Trace& trace, const char* what) {
  std::set<std::string> lines;
  for (size_t k = 0; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    // (the backward listings' values have their own rules: tests/core/test_backward_dependencies.cpp)
    if (e.kind == EventKind::Enter || e.pass == Pass::Backward) continue;
    for (const Value& v : e.values) {
      if (v.kind != ValueKind::Matrix && v.kind != ValueKind::Mask) continue;
      for (auto [r, c] : {std::pair<int, int>{0, 0}, {static_cast<int>(v.m.rows()) - 1, static_cast<int>(v.m.cols()) - 1}}) {
        const CellDependencies d = cell_dependencies(trace, k, v.name, r, c);
        EXPECT_TRUE(d.rule) << what << ": " << d.reason;
        if (v.kind == ValueKind::Matrix && d.rule && v.name != "W_p" && v.name.find("(before)") == std::string::npos) {
          EXPECT_FALSE(d.sources.empty()) << what << ": " << v.name << " at Algorithm " << e.alg << " line " << e.line;
        }
      }
      lines.insert(std::to_string(e.alg) + ":" + std::to_string(e.line));
    }
  }
  EXPECT_GT(lines.size(), 10u) << what;
}

}  // namespace

TEST(Dependencies, EveryMatrixLineOfTheForwardTracesHasARule) {
  const Model gpt = Model::initialised(small_gpt(), 3);
  expect_rules_everywhere(Traced(gpt, {}, {6, 1, 3, 2}).trace, "GPT");
  const Model bert = Model::initialised(test::bert_test_config(1, 2, 4, 2, 2, 8, 4, 8, {"a", "b", "c"}), 4);
  expect_rules_everywhere(Traced(bert, {}, {5, 1, 4}).trace, "BERT");
  const Model ed = Model::initialised(test::ed_test_config(1, 1, 2, 4, 2, 2, 8, 8, {"a", "b", "c"}), 5);
  expect_rules_everywhere(Traced(ed, {5, 1, 6}, {5, 2}).trace, "encoder-decoder");
}

TEST(Dependencies, TrainingUpdateLines) {
  Model model = Model::initialised(small_gpt(), 6);
  const std::vector<Example> data{{{}, {6, 1, 3, 2, 1}}};
  DTraining alg(1, 1);
  const std::unique_ptr<ModelGradient> g = architecture(model.config).gradient(model.table);
  Rng rng(1);
  Trace trace;
  Tracer tracer(trace);
  alg.step(data, model, 0.1f, TrainOptions{}, *g, rng, &tracer);
  expect_rules_everywhere(trace, "Algorithm 13");
  // Line 5's term for t = 2 reads P[x_n[3], 2]; the update of W_e[1, 2] reads its value before and ∇W_e[1, 2].
  const size_t line4 = find_line(trace, 13, 4), line5 = find_line(trace, 13, 5), line6 = find_line(trace, 13, 6);
  const CellDependencies term = cell_dependencies(trace, line5, "−log P[x_n[t+1], t]", 0, 1);
  ASSERT_EQ(term.sources.size(), 2u);
  EXPECT_EQ(term.sources[0].blocks, (std::vector<CellBlock>{{2, 1, 1, 1}}));  // x_n[3] = 3 → row 3
  EXPECT_EQ(term.sources[0].event, line4);
  const CellDependencies w = cell_dependencies(trace, line6, "W_e (after)", 0, 1);
  ASSERT_EQ(w.sources.size(), 3u);
  EXPECT_EQ(w.sources[1].text, "∇W_e[1, 2]");
  // Line 4's P comes from the nested DTransformer: column 3 depends on x_n[1…3].
  EXPECT_EQ(cell_dependencies(trace, line4, "P", 0, 2).tokens, "x[1…3]");
}

}  // namespace test_dependencies
