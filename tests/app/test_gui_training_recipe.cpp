// The Training tab follows the classroom recipe (core/training/recipe.hpp): the real app under
// Xvfb trains 100 updates of the recipe's model on the sorting task, and the accuracy curve it
// shows (measured on the worker's side, --dump-state "train_accuracy") has the points a headless
// run of the same recipe gives (TrainingRunner with the same model, data and options). Not timed.
#include <gtest/gtest.h>

#include "app/training_runner.hpp"
#include "core/training/datasets.hpp"
#include "core/training/recipe.hpp"
#include "gui_harness.hpp"

using namespace gui;

TEST(GuiTrainingRecipe, AccuracyCurveEqualsAHeadlessRun) {
  const AppRun r = run_app("", "open:training,train-task:sort,train-step:100");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["training_tab_shown"].get<bool>());
  EXPECT_EQ(r.state["train_step"], 100);
  ASSERT_TRUE(r.state["train_accuracy"].is_array()) << r.state.dump();

  // The same run headless: the tab's data (seed 1), the recipe's model initialised with seed 1.
  const sf::Recipe rec = sf::recipe("classroom");
  sf::TaskOptions t;
  t.seed = 1;
  t.max_chars = rec.config.l_max - 2;
  sf::Dataset d = sf::make_task("sort", t);
  sf::ModelConfig c = rec.config;
  c.vocab = d.vocab;
  sf::TrainOptions o = rec.options;
  o.epochs = 3;
  o.eval_sequences = 256;
  o.data_seed = 1;
  sf::TrainingRunner run;
  run.eval_every = static_cast<int>(rec.eval_every);
  run.configure(sf::Model::initialised(c, 1), d, o);
  run.step_sync(100);
  sf::TrainSnapshot s;
  run.snapshot(s);

  const json& shown = r.state["train_accuracy"];
  ASSERT_EQ(shown.size(), s.accuracy.size());
  ASSERT_EQ(shown.size(), 2u);  // after updates 50 and 100
  for (size_t k = 0; k < shown.size(); ++k) {
    EXPECT_EQ(shown[k]["step"], s.accuracy[k].step);
    EXPECT_EQ(shown[k]["correct"], s.accuracy[k].accuracy.correct);
    EXPECT_EQ(shown[k]["total"], 500);
  }
}
