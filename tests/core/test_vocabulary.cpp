// The trace vocabulary (core/trace/vocabulary.hpp) is complete and true: every constant names a
// numbered line of the pseudocode table, every numbered line has a constant, and every line event
// that a traced pass emits (the three forward algorithms in both norm positions, the training
// algorithms, the inference algorithms) is at a named line.
#include <gtest/gtest.h>

#include <algorithm>
#include <memory>
#include <set>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/model/config.hpp"
#include "core/model/params.hpp"
#include "core/model/rng.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/training/training.hpp"
#include "core/trace/vocabulary.hpp"

namespace test_vocabulary {

using namespace sf;

namespace {

std::string text(LineRef r) { return "Algorithm " + std::to_string(r.alg) + " line " + std::to_string(r.line); }

// A backward line (core/backprop/) is named by its forward line's constant: LineRef::adjoint().
bool named(LineRef r) {
  const LineRef forward{r.alg, r.line};
  return std::find(std::begin(lines::kAll), std::end(lines::kAll), forward) != std::end(lines::kAll);
}

ModelConfig small(const char* arch, NormPosition norm) {
  ModelConfig c;
  c.arch = arch;
  c.L = c.L_enc = c.L_dec = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = 10;
  c.vocab = {"a", "b", "c"};
  c.norm_position = norm;
  return c;
}

// Every Line and SubStep event of t is at a line the vocabulary names.
void expect_all_named(const Trace& t, const std::string& what) {
  for (const Event& e : t.events)
    if (e.kind != EventKind::Enter) EXPECT_TRUE(named(e.ref())) << what << ": " << text(e.ref()) << " has no constant";
}

// The examples each architecture trains on here: x = bos a c b eos, and for the encoder-decoder z = bos b a eos.
std::vector<Example> examples(const ModelConfig& c) {
  const Tokens x{c.bos_token(), 1, 3, 2, c.eos_token()};
  if (architecture(c).has_context()) return {Example{{c.bos_token(), 2, 1, c.eos_token()}, x}};
  return {Example{{}, x}};
}

}  // namespace

TEST(Vocabulary, EveryConstantIsANumberedLineOfThePseudocode) {
  std::set<LineRef> seen;
  for (const LineRef r : lines::kAll) {
    EXPECT_EQ(r.pass, Pass::Forward) << text(r);
    EXPECT_NE(pseudocode_line(r.alg, r.line), nullptr) << text(r) << " is not in the pseudocode table";
    EXPECT_TRUE(seen.insert(r).second) << text(r) << " is named twice";
  }
}

TEST(Vocabulary, EveryNumberedLineOfThePseudocodeHasAConstant) {
  for (const PseudoAlgorithm& a : pseudocode_all())
    for (const PseudoLine& l : a.lines)
      if (l.number > 0) EXPECT_TRUE(named({a.number, l.number})) << text({a.number, l.number});
}

TEST(Vocabulary, EveryLineAForwardPassEmitsIsNamed) {
  for (const char* arch : {"gpt", "bert", "ed"})
    for (const NormPosition norm : {NormPosition::Pre, NormPosition::Post}) {
      const ModelConfig c = small(arch, norm);
      const Model m = Model::initialised(c, 5);
      const Example ex = examples(c).front();
      Trace t;
      Tracer tr(t);
      architecture(c).forward(m, ex.z, ex.x, &tr);
      ASSERT_GT(t.size(), 50u) << arch;  // a real pass: 2 layers of 2 heads each
      expect_all_named(t, std::string(arch) + " forward, " + to_string(norm) + "-LN");
    }
}

TEST(Vocabulary, EveryLineATrainingStepEmitsIsNamed) {
  for (const char* arch : {"gpt", "bert", "ed"}) {
    const ModelConfig c = small(arch, NormPosition::Pre);
    Model m = Model::initialised(c, 5);
    const Architecture& a = architecture(c);
    const std::unique_ptr<PaperTraining> alg = a.paper_training(1, 1);
    const std::unique_ptr<ModelGradient> g = a.gradient(m.table);
    Trace t;
    Tracer tr(t);
    Rng rng(1);
    alg->step(examples(c), m, 0.1f, TrainOptions{}, *g, rng, &tr);
    // the update line is named after the training algorithm's own constant
    const LineRef update{alg->algorithm(), alg->update_line()};
    EXPECT_TRUE(update == lines::d_training::update || update == lines::e_training::update ||
                update == lines::ed_training::update)
        << text(update);
    expect_all_named(t, std::string(arch) + " training step");
  }
}

TEST(Vocabulary, EveryLineTheInferenceAlgorithmsEmitIsNamed) {
  const ModelConfig gpt = small("gpt", NormPosition::Pre);
  const Model m = Model::initialised(gpt, 5);
  InferenceOptions opt;
  opt.l_gen = 2;
  Trace t14;
  Tracer tr14(t14);
  dinference({gpt.bos_token(), 1}, m, opt, &tr14);
  ASSERT_GT(t14.size(), 50u);  // two passes of Algorithm 10 inside
  expect_all_named(t14, "Algorithm 14");
  const ModelConfig ed = small("ed", NormPosition::Post);
  const Model me = Model::initialised(ed, 5);
  const EdInferenceOptions eopt;  // stops at eos_token or ℓ_max = 10
  Trace t15;
  Tracer tr15(t15);
  edinference({ed.bos_token(), 1, ed.eos_token()}, me, eopt, &tr15);
  ASSERT_GT(t15.size(), 50u);  // at least one pass of Algorithm 8 inside
  expect_all_named(t15, "Algorithm 15");
}

TEST(Vocabulary, LinesAreValuesWithABackwardCounterpart) {
  constexpr LineRef f = lines::attention::V_tilde;
  static_assert(f == LineRef{4, 6});
  static_assert(f.adjoint() != f && f.adjoint().pass == Pass::Backward && f.adjoint().line == 6);
  static_assert(LineRef{}.none() && !f.none());
  // The session file's text form, and back, for forward, backward and "no line".
  static_assert(session_code(lines::d_transformer::attention) == 10006);
  static_assert(session_code(LineRef{}) == 0);
  for (const LineRef r : {f, f.adjoint(), LineRef{}, lines::ed_transformer::cross_attention})
    EXPECT_EQ(from_session_code(session_code(r)), r) << text(r);
}

}  // namespace test_vocabulary
