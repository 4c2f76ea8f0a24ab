// The Trainer on several threads (TrainOptions::threads): the minibatch's shares run on the
// persistent pool of core/parallel and the workers' gradients are summed slice by slice. For a
// given thread count a run repeats bitwise; 1 and 2 threads agree to float rounding (the sum of
// the shares' gradients is rounded differently from one product over the whole minibatch).
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <string>
#include <vector>

#include "core/parallel/parallel.hpp"
#include "core/training/datasets.hpp"
#include "core/training/pair_tasks.hpp"
#include "core/training/training.hpp"

using namespace sf;

namespace {

// The reference configuration's shape (d_e = 64, L = 2, H = 4, …) on a smaller vocabulary and
// ℓ_max, with the data of a built-in task.
struct Run {
  ModelConfig config;
  Dataset data;
};

Run gpt_run() {
  TaskOptions t;
  t.train_size = 64;
  t.val_size = 8;
  t.max_chars = 18;
  Run r{ModelConfig{}, make_task("sort", t)};
  r.config.vocab = r.data.vocab;
  r.config.l_max = 24;
  return r;
}

Run bert_run() {
  Run r = gpt_run();
  r.config.arch = "bert";
  return r;
}

Run ed_run() {
  TaskOptions t;
  t.train_size = 64;
  t.val_size = 8;
  t.max_chars = 10;
  Run r{ModelConfig{}, make_pair_task("reverse", t)};
  r.config.arch = "ed";
  r.config.vocab = r.data.vocab;
  r.config.l_max = 24;
  return r;
}

// θ after `steps` practical updates (minibatches of `batch`) on `threads` threads, and the losses.
struct Result {
  std::vector<float> theta;
  std::vector<double> losses;
};

Result train(const Run& r, int threads, int steps = 4, int batch = 16) {
  TrainOptions opt;
  opt.batch = batch;
  opt.threads = threads;
  opt.warmup = 0;
  opt.lr = 3e-3;
  Trainer trainer(Model::initialised(r.config, 3), r.data, opt);
  Result out;
  for (int k = 0; k < steps; ++k) {
    const StepInfo info = trainer.step();
    EXPECT_TRUE(info.finite);
    out.losses.push_back(info.loss);
  }
  out.theta = trainer.model().theta;
  return out;
}

// Two runs on the same thread count give bitwise the same θ; 1 and `threads` threads give the
// same losses and θ within a tight tolerance.
void check_threads(const Run& r, int threads, int batch = 16) {
  const Result one = train(r, 1, 4, batch), many = train(r, threads, 4, batch), again = train(r, threads, 4, batch);
  EXPECT_EQ(many.theta, again.theta) << threads << " threads: not deterministic";
  EXPECT_EQ(many.losses, again.losses);
  ASSERT_EQ(one.theta.size(), many.theta.size());
  for (size_t k = 0; k < one.losses.size(); ++k) EXPECT_NEAR(one.losses[k], many.losses[k], 1e-5 * one.losses[0]) << k;
  double max_diff = 0;
  for (size_t k = 0; k < one.theta.size(); ++k)
    max_diff = std::max(max_diff, static_cast<double>(std::abs(one.theta[k] - many.theta[k])));
  // Adam's steps are ≈ η = 3e-3 each; rounding of the summed gradient moves them far less.
  EXPECT_LT(max_diff, 1e-5) << threads << " threads";
  // And training did move θ (the comparison is not of two untouched initialisations).
  const std::vector<float> theta0 = Model::initialised(r.config, 3).theta;
  double moved = 0;
  for (size_t k = 0; k < theta0.size(); ++k) moved = std::max(moved, static_cast<double>(std::abs(one.theta[k] - theta0[k])));
  EXPECT_GT(moved, 1e-3);
}

TEST(ParallelTraining, GptTwoThreadsRepeatBitwiseAndAgreeWithOne) { check_threads(gpt_run(), 2); }
TEST(ParallelTraining, BertTwoThreadsRepeatBitwiseAndAgreeWithOne) { check_threads(bert_run(), 2); }
TEST(ParallelTraining, EdTwoThreadsRepeatBitwiseAndAgreeWithOne) { check_threads(ed_run(), 2); }
// Shares of unequal size (7 sequences on 3 threads) and more threads than the machine has cores.
TEST(ParallelTraining, UnequalSharesOnThreeThreads) { check_threads(gpt_run(), 3, 7); }

TEST(ParallelTraining, ParallelForOnRunsEveryTaskOnceWhateverTheComputeThreads) {
  const int old = compute_threads();
  set_compute_threads(1);
  for (int threads : {1, 2, 5}) {
    std::vector<std::atomic<int>> runs(37);
    parallel_for_on(threads, 37, [&](int k) { runs[k].fetch_add(1); });
    for (int k = 0; k < 37; ++k) EXPECT_EQ(runs[k].load(), 1) << threads << " threads, task " << k;
  }
  set_compute_threads(old);
}

TEST(ParallelTraining, ParallelForOnPassesATasksErrorToTheCaller) {
  EXPECT_THROW(parallel_for_on(2, 4, [](int k) {
                 if (k == 3) throw std::runtime_error("task 4 failed");
               }),
               std::runtime_error);
}

}  // namespace
