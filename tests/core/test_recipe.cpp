// The training recipes (core/training/recipe.hpp) are what docs/training.md and `stepformer-cli
// train --help` say, and `train --until-accuracy` stops once the greedy validation accuracy is
// reached (not timed: the wall times are measured in docs/training.md, not here).
#include <gtest/gtest.h>

#include <algorithm>

#include "core/arch/architecture.hpp"
#include "core/gradients/grad.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "core/model/rng.hpp"
#include "core/training/accuracy.hpp"
#include "core/training/datasets.hpp"
#include "core/training/recipe.hpp"
#include "float_bounds.hpp"

namespace test_recipe {

using namespace sf;
using sf::test::binomial_tolerance;

TEST(Recipe, ClassroomIsWhatTheDocsSay) {
  for (const std::string& name : recipe_names()) {
    SCOPED_TRACE(name);
    const Recipe r = recipe(name);
    EXPECT_EQ(r.name, name);
    EXPECT_EQ(r.config.L, 2);
    EXPECT_EQ(r.config.H, 4);
    EXPECT_EQ(r.config.d_e, 32);
    EXPECT_EQ(r.config.d_attn, 8);
    EXPECT_EQ(r.config.d_mid, 8);
    EXPECT_EQ(r.config.d_mlp, name == "classroom-bert" ? 64 : 128);
    EXPECT_EQ(r.config.l_max, 32);
    EXPECT_TRUE(r.config.vocab.empty());
    EXPECT_EQ(r.options.mode, TrainMode::Practical);
    EXPECT_DOUBLE_EQ(r.options.lr, 1e-2);
    EXPECT_DOUBLE_EQ(r.options.min_lr, 1e-3);
    EXPECT_EQ(r.options.warmup, 50);
    EXPECT_EQ(r.options.steps, name == "classroom-bert" ? 3000 : 2000);
    EXPECT_EQ(r.options.batch, 32);
    EXPECT_EQ(r.options.threads, 2);
    EXPECT_EQ(r.eval_every, 50);
    EXPECT_DOUBLE_EQ(r.until_accuracy, 0.95);
    // BERT's recipe masks half of the answer's positions only (docs/training.md, "BERT").
    EXPECT_EQ(r.options.mask_answer, name == "classroom-bert");
    EXPECT_DOUBLE_EQ(r.options.p_mask, name == "classroom-bert" ? 0.5 : 0.15);
  }
  EXPECT_EQ(recipe("classroom").config.arch, "gpt");
  EXPECT_EQ(recipe("classroom").task, "sort");
  EXPECT_EQ(recipe("classroom-bert").config.arch, "bert");
  EXPECT_EQ(recipe("classroom-bert").task, "sort");
  EXPECT_EQ(recipe("classroom-ed").config.arch, "ed");
  EXPECT_EQ(recipe("classroom-ed").task, "dates");
}

TEST(Recipe, UnknownNameListsTheRecipes) {
  try {
    recipe("lecture");
    FAIL() << "no error";
  } catch (const Error& e) {
    EXPECT_EQ(std::string(e.what()),
              "unknown recipe \"lecture\" (the recipes: classroom, classroom-bert, classroom-ed; and vit-digits, "
              "the vision transformer's, which stepformer-cli train runs)");
  }
}

// classroom-bert's minibatches (Algorithm 12 lines 4–7 with mask_answer): on the sort task, only the
// answer's letters (after "=", eos_token excluded) are masked and scored, each with probability
// p_mask = 0.5; the question, "=", bos_token and eos_token are given as they are.
TEST(Recipe, BertMasksHalfOfTheAnswerOnly) {
  const Recipe r = recipe("classroom-bert");
  TaskOptions t;
  t.train_size = 64;
  t.val_size = 0;
  t.max_chars = r.config.l_max - 2;
  const Dataset d = make_task(r.task, t);
  ModelConfig c = r.config;
  c.vocab = d.vocab;
  const Architecture& arch = architecture(c);
  const std::vector<Example> data = arch.examples(d.train, c);
  std::vector<size_t> pick(data.size());
  for (size_t i = 0; i < pick.size(); ++i) pick[i] = i;
  const int equals = tokenize({"="}, c).front()[1];
  Rng rng(5);
  Batch b;
  int answer = 0, masked = 0;
  for (int round = 0; round < 20; ++round) {
    arch.make_batch(c, data, pick, r.config.l_max, 0, r.options, rng, b);
    for (int s = 0; s < b.B; ++s) {
      const Tokens& x = data[s].x;
      const int q = static_cast<int>(std::find(x.begin(), x.end(), equals) - x.begin());
      ASSERT_LT(q, static_cast<int>(x.size()));
      for (int p = 0; p < b.lengths[s]; ++p) {
        const size_t k = static_cast<size_t>(s) * b.l + p;
        const bool in_answer = p > q && p + 1 < b.lengths[s];
        if (!in_answer) {
          EXPECT_EQ(b.tokens[k], x[p]) << "sequence " << s << " position " << p;
          EXPECT_EQ(b.targets[k], 0);
          continue;
        }
        ++answer;
        const bool is_masked = b.tokens[k] == c.mask_token();
        EXPECT_EQ(b.tokens[k], is_masked ? c.mask_token() : x[p]);
        EXPECT_EQ(b.targets[k], is_masked ? x[p] : 0);
        masked += is_masked;
      }
    }
  }
  // Each answer position is chosen independently with probability p_mask: 5σ of Binomial.
  EXPECT_NEAR(static_cast<double>(masked) / answer, 0.5, binomial_tolerance(0.5, answer)) << answer << " positions";
}

// The check of --until-accuracy and the Training tab's recipe (screened_accuracy): the first 100
// validation sequences, and all 500 only when those are within 5 points of the target. The shipped
// sorting model (assets/README.md: 498 of 500) passes the screen, so all 500 are counted; on the
// reverse task it is far below, so only the first 100 are. The counts are greedy_accuracy's own.
TEST(Recipe, ScreenedAccuracyCountsAllOnlyNearTheTarget) {
  const Model m = load_checkpoint(std::string(STEPFORMER_TEST_DATA) + "/../../assets/default.safetensors").model;
  TaskOptions t;
  t.seed = 1;
  t.max_chars = m.config.l_max - 2;
  const std::vector<std::string> sort = make_task("sort", t).val, reverse = make_task("reverse", t).val;
  ASSERT_EQ(sort.size(), 500u);
  const Accuracy all = screened_accuracy(m, sort, 0.95, 2);
  EXPECT_FALSE(all.screen);
  EXPECT_EQ(all.total, 500);
  EXPECT_EQ(all.correct, greedy_accuracy(m, sort).correct);
  const Accuracy first = greedy_accuracy(m, reverse, kScreenExamples);
  ASSERT_LT(first.fraction(), 0.95 - kScreenMargin) << first.correct;
  const Accuracy screened = screened_accuracy(m, reverse, 0.95, 2);
  EXPECT_TRUE(screened.screen);
  EXPECT_EQ(screened.total, 100);
  EXPECT_EQ(screened.correct, first.correct);
  // No target (the tab unticked): all of them.
  const Accuracy unscreened = screened_accuracy(m, reverse, 0, 2);
  EXPECT_FALSE(unscreened.screen);
  EXPECT_EQ(unscreened.total, 500);
}

}  // namespace test_recipe
