// Greedy validation accuracy (core/training/accuracy.hpp), against independent computations on the
// shipped models: GPT against Algorithm 14's own loop (dinference, no KV cache, τ = 0) run to the
// end, BERT against a forward pass per masked letter and a column argmax written here, the encoder-decoder against
// Algorithm 15 (edinference, no KV cache, τ = 0); and assets/README.md's figure (the default model
// sorts 498 of the 500 validation sequences).
#include <gtest/gtest.h>

#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/checkpoint.hpp"
#include "core/training/accuracy.hpp"
#include "core/training/datasets.hpp"
#include "core/training/pair_tasks.hpp"

namespace test_accuracy {

using namespace sf;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

// The validation sequences each shipped model was trained against (assets/README.md: seed 1).
std::vector<std::string> val(const std::string& task, bool pairs) {
  TaskOptions t;
  t.seed = 1;
  t.max_chars = 62;
  return (pairs ? make_pair_task(task, t) : make_task(task, t)).val;
}

// The 0-based index of "=" in a tokenized sequence.
size_t equals_at(const Tokens& x, const ModelConfig& c) { return std::find(x.begin(), x.end(), tokenize({"="}, c)[0][1]) - x.begin(); }

}  // namespace

TEST(Accuracy, DefaultModelSortsWhatAlgorithm14Sorts) {
  const Model m = load_checkpoint(asset("default.safetensors")).model;
  const std::vector<std::string> v = val("sort", false);
  ASSERT_EQ(v.size(), 500u);
  // Independent: Algorithm 14 without the cache, run for the whole answer and eos_token.
  const size_t n = 100;
  int expected = 0;
  for (const Tokens& x : tokenize({v.begin(), v.begin() + n}, m.config)) {
    const size_t q = equals_at(x, m.config);
    InferenceOptions o;
    o.tau = 0;
    o.l_gen = static_cast<int>(x.size() - q - 1);
    o.trim_context = false;
    const InferenceResult r = dinference(Tokens(x.begin(), x.begin() + q + 1), m, o);
    expected += r.y == Tokens(x.begin() + q + 1, x.end());
  }
  const Accuracy a = greedy_accuracy(m, v, n);
  EXPECT_EQ(a.total, 100);
  EXPECT_EQ(a.correct, expected);
  EXPECT_GE(a.correct, 95);
  // Shared among threads (the CLI's and the Training tab's): the same count.
  for (int threads : {2, 3}) {
    const Accuracy p = greedy_accuracy(m, v, n, threads);
    EXPECT_EQ(p.total, 100) << threads;
    EXPECT_EQ(p.correct, expected) << threads;
  }
  // assets/README.md: greedy decoding sorts 498 of the 500 validation sequences.
  const Accuracy all = greedy_accuracy(m, v);
  EXPECT_EQ(all.total, 500);
  EXPECT_EQ(all.correct, 498);
  EXPECT_DOUBLE_EQ(all.fraction(), 498.0 / 500.0);
  EXPECT_EQ(accuracy_verb(m.config, "sort, seed 1"), "sorts");
}

TEST(Accuracy, GreedyRefusesAWrongAnswer) {
  // A sequence whose answer is wrong cannot be reproduced by a model that sorts.
  const Model m = load_checkpoint(asset("default.safetensors")).model;
  const Accuracy a = greedy_accuracy(m, {"dcab=abcd", "dcab=abdc", "cba=abc", "cba=ab"});
  EXPECT_EQ(a.total, 4);
  EXPECT_EQ(a.correct, 2);
}

TEST(Accuracy, SequencesWithoutAnAnswerAreNotCounted) {
  const Model m = load_checkpoint(asset("default.safetensors")).model;
  const Accuracy a = greedy_accuracy(m, {"abcabcabc", "hello", "dcab=abcd"});
  EXPECT_EQ(a.total, 1);
  EXPECT_EQ(greedy_accuracy(m, {"abcabcabc", "hello", "dcab=abcd"}, 0, 2).total, 1);
  EXPECT_EQ(a.correct, 1);
  EXPECT_EQ(greedy_accuracy(m, {"abcabc"}).total, 0);
  EXPECT_EQ(greedy_accuracy(m, {"abcabc"}).fraction(), 0.0);
}

TEST(Accuracy, BertFillsEachSortedLetterAsAForwardPassDoes) {
  const Model m = load_checkpoint(asset("bert.safetensors")).model;
  const std::vector<std::string> v = val("sort", false);
  const size_t n = 200;
  // Independent: each letter of the sorted half masked alone, one ETransformer pass, the argmax
  // of its column.
  int expected = 0;
  for (const Tokens& x : tokenize({v.begin(), v.begin() + n}, m.config)) {
    const size_t q = equals_at(x, m.config);
    bool all = true;
    for (size_t t = q + 1; t + 1 < x.size(); ++t) {
      Tokens masked = x;
      masked[t] = m.config.mask_token();
      const MatF P = architecture(m.config).forward(m, {}, masked);  // (N_V, ℓ)
      Eigen::Index best = 0;
      P.col(static_cast<Eigen::Index>(t)).maxCoeff(&best);
      all = all && static_cast<int>(best) + 1 == x[t];
    }
    expected += all;
  }
  const Accuracy a = greedy_accuracy(m, v, n);
  EXPECT_EQ(a.total, 200);
  EXPECT_EQ(a.correct, expected);
  EXPECT_EQ(greedy_accuracy(m, v, n, 2).correct, expected);
  EXPECT_EQ(accuracy_verb(m.config, "sort, seed 1"), "fills in");
}

TEST(Accuracy, EncoderDecoderTranslatesWhatAlgorithm15Writes) {
  const Model m = load_checkpoint(asset("ed.safetensors")).model;
  const std::vector<std::string> v = val("dates", true);
  const size_t n = 100;
  const std::vector<Example> ex = architecture(m.config).examples({v.begin(), v.begin() + n}, m.config);
  int expected = 0;
  for (const Example& e : ex) {
    EdInferenceOptions o;
    o.tau = 0;
    expected += edinference(e.z, m, o).x_hat == e.x;
  }
  const Accuracy a = greedy_accuracy(m, v, n);
  EXPECT_EQ(a.total, 100);
  EXPECT_EQ(a.correct, expected);
  EXPECT_EQ(greedy_accuracy(m, v, n, 2).correct, expected);
  EXPECT_GE(a.correct, 95);  // assets/README.md: validation loss below 0.0001 nats per token
  EXPECT_EQ(accuracy_verb(m.config, "dates, seed 1"), "translates");
}

}  // namespace test_accuracy
