// stepformer-cli train --recipe and --until-accuracy, end to end (the built program): a recipe's
// settings reach the trainer, --until-accuracy prints the greedy validation accuracy at each
// evaluation (equal to greedy_accuracy of the checkpoint written) and stops once it is reached,
// and mistakes are one-line usage errors. Not timed.
#include <gtest/gtest.h>

#ifdef STEPFORMER_CLI

#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <string>

#include "core/io/checkpoint.hpp"
#include "core/training/accuracy.hpp"
#include "core/training/datasets.hpp"
#include "test_cli_support.hpp"

namespace test_recipe_cli {

using namespace sf;
using namespace sf::test;
namespace fs = std::filesystem;

namespace {

std::string asset(const char* f) { return std::string(STEPFORMER_TEST_DATA) + "/../../assets/" + f; }

class RecipeCli : public ::testing::Test {
 protected:
  void SetUp() override {
    dir = fs::temp_directory_path() / ("stepformer_recipe_cli_" + std::to_string(::getpid()));
    fs::create_directories(dir);
    std::ofstream(dir / "tiny.json") << R"({"L": 1, "H": 2, "d_e": 16, "d_attn": 8, "d_mid": 8, "d_mlp": 32, "l_max": 20})";
  }
  void TearDown() override {
    std::error_code ec;
    fs::remove_all(dir, ec);
  }
  std::string path(const char* name) const { return (dir / name).string(); }
  fs::path dir;
};

}  // namespace

TEST_F(RecipeCli, UntilAccuracyStopsOnceReachedAndPrintsWhatTheCheckpointScores) {
  // The shipped sorting model sorts 498 of 500 (assets/README.md); two updates at a tiny learning
  // rate keep it above 90%, so the first evaluation stops the run.
  const CliResult r = run_cli(dir, {"train", "--model", asset("default.safetensors"), "--task", "sort", "--seed", "1",
                                    "--lr", "1e-7", "--steps", "10", "--eval-every", "2", "--until-accuracy", "0.9",
                                    "--out", path("m.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = load_checkpoint(path("m.safetensors")).model;
  TaskOptions t;
  t.seed = 1;
  t.max_chars = m.config.l_max - 2;
  const Accuracy a = greedy_accuracy(m, make_task("sort", t).val);
  ASSERT_GE(a.correct, 450);
  const std::string shown = std::to_string(a.correct) + " of 500";
  char pct[16];
  std::snprintf(pct, sizeof pct, "%.1f%%", 100.0 * a.correct / 500);
  EXPECT_EQ(line_after(r.out, "until ").rfind("90.0% greedy validation accuracy", 0), 0u) << r.out;
  EXPECT_EQ(line_after(r.out, "step 2: greedy validation accuracy ").rfind(std::string(pct) + " (sorts " + shown + "), ", 0), 0u)
      << r.out;
  EXPECT_EQ(line_after(r.out, "reached 90.0%: ").rfind("sorts " + shown + " validation examples after 2 updates, ", 0), 0u)
      << r.out;
  EXPECT_EQ(line_after(r.out, "step 4:"), "") << r.out;
  EXPECT_EQ(line_after(r.out, "trained ").rfind("2 steps", 0), 0u) << r.out;
}

TEST_F(RecipeCli, UntilAccuracyNotReachedSaysSo) {
  const CliResult r = run_cli(dir, {"train", "--config", path("tiny.json"), "--task", "sort", "--train-size", "200",
                                    "--val-size", "20", "--steps", "3", "--eval-every", "1", "--until-accuracy", "1",
                                    "--out", path("t.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"step 1: ", "step 2: ", "step 3: "})
    EXPECT_EQ(line_after(r.out, s).rfind("greedy validation accuracy ", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("\ndid not reach 100.0% greedy validation accuracy in 3 steps\n"), std::string::npos) << r.out;
}

// An untrained model is far below the target: only the first 100 of the 200 validation sequences
// are measured (screened_accuracy), and the line says so.
TEST_F(RecipeCli, UntilAccuracyScreensTheFirstHundred) {
  const CliResult r = run_cli(dir, {"train", "--config", path("tiny.json"), "--task", "sort", "--train-size", "200",
                                    "--val-size", "200", "--steps", "1", "--eval-every", "1", "--until-accuracy",
                                    "0.95", "--out", path("s.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const Model m = load_checkpoint(path("s.safetensors")).model;
  TaskOptions t;
  t.seed = 1;
  t.train_size = 200;
  t.val_size = 200;
  t.max_chars = m.config.l_max - 2;
  const Accuracy first = greedy_accuracy(m, make_task("sort", t).val, kScreenExamples);
  ASSERT_LT(first.fraction(), 0.9);
  EXPECT_NE(line_after(r.out, "step 1: greedy validation accuracy ").find("(sorts " + std::to_string(first.correct) +
                                                                         " of the first 100), "),
            std::string::npos)
      << r.out;
}

TEST_F(RecipeCli, RecipeSettingsReachTheTrainer) {
  const CliResult r = run_cli(dir, {"train", "--recipe", "classroom", "--steps", "1", "--out", path("c.safetensors")});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string mode = line_after(r.out, "mode: ");
  for (const char* s : {"minibatches of 32", "lr 0.01 (warmup 50, cosine to 0.001 at step 1)", "2 threads"})
    EXPECT_NE(mode.find(s), std::string::npos) << s << "\n" << r.out;
  EXPECT_NE(line_after(r.out, "data: ").find("sort, seed 1"), std::string::npos) << r.out;
  const Model m = load_checkpoint(path("c.safetensors")).model;
  EXPECT_EQ(m.config.arch, "gpt");
  EXPECT_EQ(m.config.d_e, 32);
  EXPECT_EQ(m.config.N_V(), 27 + 3);  // a–z and "=", then mask_token, bos_token, eos_token
  // An option given explicitly overrides the recipe's.
  const CliResult e = run_cli(dir, {"train", "--recipe", "classroom-ed", "--steps", "1", "--batch", "8", "--out",
                                    path("e.safetensors")});
  ASSERT_EQ(e.status, 0) << e.err;
  EXPECT_NE(line_after(e.out, "mode: ").find("minibatches of 8"), std::string::npos) << e.out;
  EXPECT_NE(line_after(e.out, "data: ").find("dates (pairs), seed 1"), std::string::npos) << e.out;
  EXPECT_EQ(load_checkpoint(path("e.safetensors")).model.config.arch, "ed");
  // BERT's masking: the recipe's p_mask, only in the answer; --p-mask overrides p_mask.
  const CliResult b = run_cli(dir, {"train", "--recipe", "classroom-bert", "--steps", "1", "--out", path("b.safetensors")});
  ASSERT_EQ(b.status, 0) << b.err;
  EXPECT_NE(line_after(b.out, "mode: ").find("p_mask = 0.5 (each position becomes mask_token with probability p_mask), "
                                             "only the answer's positions (after \"=\"; not the paper's rule)"),
            std::string::npos)
      << b.out;
  const CliResult p = run_cli(dir, {"train", "--recipe", "classroom-bert", "--steps", "1", "--p-mask", "0.25", "--out",
                                    path("p.safetensors")});
  ASSERT_EQ(p.status, 0) << p.err;
  EXPECT_NE(line_after(p.out, "mode: ").find("p_mask = 0.25"), std::string::npos) << p.out;
}

TEST_F(RecipeCli, MistakesAreOneLineErrors) {
  const std::string out = path("x.safetensors");
  const std::string e1 = expect_one_line_error(
      run_cli(dir, {"train", "--recipe", "classroom", "--config", path("tiny.json"), "--out", out}), 2, "--config");
  EXPECT_NE(e1.find("leave out --config"), std::string::npos) << e1;
  const std::string e2 = expect_one_line_error(run_cli(dir, {"train", "--recipe", "lecture", "--out", out}), 1, "name");
  EXPECT_NE(e2.find("classroom, classroom-bert, classroom-ed"), std::string::npos) << e2;
  const std::string e3 = expect_one_line_error(
      run_cli(dir, {"train", "--task", "sort", "--until-accuracy", "0.9", "--eval-every", "0", "--out", out}), 2, "0");
  EXPECT_NE(e3.find("--eval-every"), std::string::npos) << e3;
  // --mask-answer is BERT's, and not the paper's rule.
  const std::string e4 = expect_one_line_error(
      run_cli(dir, {"train", "--recipe", "classroom", "--mask-answer", "--steps", "1", "--out", out}), 2, "mask");
  EXPECT_NE(e4.find("--mask-answer"), std::string::npos) << e4;
  const std::string e5 = expect_one_line_error(
      run_cli(dir, {"train", "--model", asset("bert.safetensors"), "--task", "sort", "--sgd", "--mask-answer", "--out",
                    out}),
      2, "sgd");
  EXPECT_NE(e5.find("leave out --sgd"), std::string::npos) << e5;
  const CliResult copy = run_cli(dir, {"train", "--recipe", "classroom", "--task", "copy", "--steps", "2",
                                       "--eval-every", "1", "--out", out});
  EXPECT_EQ(copy.status, 1);
  EXPECT_NE(copy.err.find("no answers to check"), std::string::npos) << copy.err;
}

TEST_F(RecipeCli, HelpDocumentsTheRecipe) {
  const CliResult r = run_cli(dir, {"help", "train"});
  ASSERT_EQ(r.status, 0) << r.err;
  for (const char* s : {"--recipe NAME", "classroom-bert", "--until-accuracy A", "greedy validation accuracy"})
    EXPECT_NE(r.out.find(s), std::string::npos) << s;
}

#endif

}  // namespace test_recipe_cli
