// The training recipes (core/training/recipe.hpp) are what docs/training.md and `stepformer-cli
// train --help` say, and `train --until-accuracy` stops once the greedy validation accuracy is
// reached (not timed: the wall times are measured in docs/training.md, not here).
#include <gtest/gtest.h>

#include "core/model/error.hpp"
#include "core/training/recipe.hpp"

using namespace sf;

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
    EXPECT_EQ(r.config.d_mlp, 128);
    EXPECT_EQ(r.config.l_max, 32);
    EXPECT_TRUE(r.config.vocab.empty());
    EXPECT_EQ(r.options.mode, TrainMode::Practical);
    EXPECT_DOUBLE_EQ(r.options.lr, 1e-2);
    EXPECT_DOUBLE_EQ(r.options.min_lr, 1e-3);
    EXPECT_EQ(r.options.warmup, 50);
    EXPECT_EQ(r.options.steps, 2000);
    EXPECT_EQ(r.options.batch, 32);
    EXPECT_EQ(r.options.threads, 2);
    EXPECT_EQ(r.eval_every, 50);
    EXPECT_DOUBLE_EQ(r.until_accuracy, 0.95);
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
    EXPECT_EQ(std::string(e.what()), "unknown recipe \"lecture\" (the recipes: classroom, classroom-bert, classroom-ed)");
  }
}
