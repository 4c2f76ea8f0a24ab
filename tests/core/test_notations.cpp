// The three notations (core/pseudocode/notations): every (algorithm, line) that the traced
// forward, training and inference algorithms of the three architectures emit has an entry in
// each notation — a text, or an explicit "no counterpart" with its reason — and the names and
// index forms are the seeds'.
#include <gtest/gtest.h>

#include <set>
#include <utility>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/pseudocode/notations.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/training/training.hpp"

namespace test_notations {

namespace {

using namespace sf;

ModelConfig small(const std::string& arch) {
  ModelConfig c;
  c.arch = arch;
  c.L = c.L_enc = c.L_dec = 1;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.d_f = 8;
  c.l_max = 12;
  c.vocab = {"a", "b", "c", "="};
  return c;
}

// The distinct (alg, line) of every Line and SubStep event.
void collect(const Trace& t, std::set<std::pair<int, int>>& out) {
  for (const Event& e : t.events)
    if (e.kind != EventKind::Enter) out.insert({e.alg, e.line});
}

// Forward traced, one paper-mode update traced, and the architecture's inference traced.
std::set<std::pair<int, int>> traced_lines(const std::string& arch) {
  const ModelConfig c = small(arch);
  const Model m = Model::initialised(c, 1);
  const Architecture& a = architecture(c);
  std::set<std::pair<int, int>> lines;
  const Tokens z{c.bos_token(), 1, 2, c.eos_token()}, x{c.bos_token(), 3, 1, 2};
  {
    Trace t;
    Tracer tr(t);
    a.forward(m, a.has_context() ? z : Tokens{}, x, &tr);
    collect(t, lines);
  }
  {
    Dataset d;
    d.train = {a.has_context() ? "cab\tabc" : "cab=abc"};
    d.vocab = c.vocab;
    TrainOptions opt;
    opt.mode = TrainMode::Paper;
    opt.epochs = 1;
    opt.p_mask = 0.5;
    Trainer trainer(m, d, opt);
    Trace t;
    Tracer tr(t);
    EXPECT_TRUE(trainer.step(&tr).finite) << arch;
    collect(t, lines);
  }
  Trace t;
  Tracer tr(t);
  if (a.output() == OutputKind::Continuation) {
    InferenceOptions opt;
    opt.l_gen = 2;
    dinference(x, m, opt, &tr);
  } else if (a.output() == OutputKind::Translation) {
    edinference(z, m, EdInferenceOptions{}, &tr);
  }
  collect(t, lines);
  return lines;
}

TEST(Notations, EveryTracedLineHasAnEntryInEachNotation) {
  std::set<int> algorithms;
  for (const std::string arch : {"gpt", "bert", "ed"}) {
    const auto lines = traced_lines(arch);
    ASSERT_GT(lines.size(), 10u) << arch;
    for (const auto& [alg, line] : lines) {
      algorithms.insert(alg);
      const std::string where = arch + ": Algorithm " + std::to_string(alg) + " line " + std::to_string(line);
      ASSERT_NE(notation_entry(alg, line), nullptr) << where;
      ASSERT_NE(pseudocode_line(alg, line), nullptr) << where;
      EXPECT_EQ(notation_text(Notation::PhuongHutter, alg, line).text, pseudocode_line(alg, line)->text) << where;
      for (Notation n : {Notation::Carpenter, Notation::DinanYaidaZhang}) {
        const NotationText nt = notation_text(n, alg, line);
        // Exactly one of the two: a text, or the reason there is none.
        EXPECT_NE(nt.text.empty(), nt.no_counterpart.empty()) << where << " in " << to_string(n);
      }
    }
  }
  // The traces reached every architecture's forward, training and inference algorithms and the
  // shared ones (embedding, attention, multi-head attention, layer_norm).
  for (int alg : {1, 2, 4, 5, 6, 8, 9, 10, 11, 12, 13, 14, 15}) EXPECT_TRUE(algorithms.count(alg)) << "Algorithm " << alg;
}

TEST(Notations, EveryEntryIsAPaperLineAndWritesEachNotationOrSaysWhyNot) {
  std::set<std::pair<int, int>> seen;
  for (const NotationEntry& e : notation_entries()) {
    EXPECT_TRUE(seen.insert({e.alg, e.line}).second) << "duplicate entry for Algorithm " << e.alg << " line " << e.line;
    EXPECT_NE(pseudocode_line(e.alg, e.line), nullptr) << "Algorithm " << e.alg << " has no line " << e.line;
    for (const NotationText* nt : {&e.carpenter, &e.dyz}) EXPECT_NE(nt->text.empty(), nt->no_counterpart.empty());
  }
  // Every numbered line of every algorithm the app traces is mapped (Algorithm 3 included).
  for (const PseudoAlgorithm& a : pseudocode_all())
    for (const PseudoLine& l : a.lines)
      if (l.number > 0) {
        EXPECT_NE(notation_entry(a.number, l.number), nullptr) << "Algorithm " << a.number << " line " << l.number;
      }
}

TEST(Notations, TextsAreTheSeeds) {
  EXPECT_EQ(notation_text(Notation::Carpenter, 4, 1).text, "ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query   // optionally add intercept");
  EXPECT_EQ(notation_text(Notation::DinanYaidaZhang, 4, 1).text.rfind("q^h_{α;t;c} ≡ Σ_{i=1}^{n} Q^h_{ci} s_{α;t;i}", 0), 0u);
  EXPECT_NE(notation_text(Notation::DinanYaidaZhang, 4, 1).text.find("C = n/H"), std::string::npos);
  EXPECT_EQ(notation_text(Notation::Carpenter, 10, 2).text, "DECODE: xs[n, 1:V] = alpha[tok[n], 1:V] + POS(n)   // embedding of token n");
  // Carpenter is post-LN: the paper's pre-LN norm lines have no counterpart, and say why.
  EXPECT_TRUE(notation_text(Notation::Carpenter, 10, 5).text.empty());
  EXPECT_NE(notation_text(Notation::Carpenter, 10, 5).no_counterpart.find("post-LN"), std::string::npos);
  EXPECT_NE(notation_text(Notation::Carpenter, 8, 16).no_counterpart.find("decoder-only"), std::string::npos);
  EXPECT_NE(notation_text(Notation::DinanYaidaZhang, 8, 16).no_counterpart.find("cross-attention"), std::string::npos);
  EXPECT_EQ(notation_text(Notation::PhuongHutter, 6, 1).text, "m ← Σ_{i=1}^{d_e} e[i] / d_e");
  EXPECT_NE(notation_text(Notation::Carpenter, 99, 1).no_counterpart.find("no line"), std::string::npos);
}

TEST(Notations, ValueNamesAndIndexForms) {
  EXPECT_EQ(notation_name(4, "Q").carpenter, "q[n, 1:K]");
  EXPECT_EQ(notation_name(10, "X").carpenter, "xs[n, 1:V]");
  EXPECT_EQ(notation_name(10, "X").dyz, "z");
  // Ṽ is ATTEND's u in Algorithm 4 and MULTI_HEAD_ATTEND's w in Algorithm 5.
  EXPECT_EQ(notation_name(4, "Ṽ").carpenter, "u[n, 1:V]");
  EXPECT_EQ(notation_name(5, "Ṽ").carpenter, "w[n, 1:V]");
  EXPECT_EQ(notation_name(5, "Y^2").carpenter, "u[h, n, 1:V/H]");
  EXPECT_TRUE(notation_name(4, "no such value").carpenter.empty());
  EXPECT_EQ(dyz_entry(notation_name(4, "Q"), 3, 5, 2), "q^2_{1;3;5}");
  EXPECT_EQ(dyz_entry(notation_name(10, "X"), 1, 4, 0), "z_{1;1;4}");
  EXPECT_EQ(dyz_entry(notation_name(4, "softmax(S/√d_attn)"), 2, 1, 1), "Ω^1_{1;2,1}");
  EXPECT_STREQ(notation_key(Notation::Carpenter), "carpenter");
  Notation n = Notation::PhuongHutter;
  EXPECT_TRUE(notation_from_key("dyz", n));
  EXPECT_EQ(n, Notation::DinanYaidaZhang);
  EXPECT_FALSE(notation_from_key("knuth", n));
  EXPECT_EQ(n, Notation::DinanYaidaZhang);
  EXPECT_STREQ(to_string(Notation::DinanYaidaZhang), "Dinan–Yaida–Zhang");
}

}  // namespace

}  // namespace test_notations
