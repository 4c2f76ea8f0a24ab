// Threads under ThreadSanitizer (scripts/tsan.sh; TSAN_OPTIONS=halt_on_error=1 makes any report fatal):
// the Training tab's runner driven from the "UI" thread while its worker trains, the Trainer splitting a
// minibatch across 2 threads, the session's background trace job (requests superseding one another) and
// core's parallel_for pool. Small models: TSan makes everything 5–15× slower.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cmath>
#include <memory>
#include <thread>
#include <vector>

#include "app/session.hpp"
#include "app/training_runner.hpp"
#include "core/parallel/parallel.hpp"
#include "core/training/datasets.hpp"
#include "tests/core/float_bounds.hpp"

namespace sf {
namespace {

// The sorting task on a model small enough for TSan: d_e = 16, L = 1, H = 2, ℓ_max = 20.
struct Small {
  Model model;
  Dataset data;
  TrainOptions options;
};

Small small_sort(int threads) {
  TaskOptions to;
  to.train_size = 256;
  to.val_size = 32;
  to.max_chars = 18;
  Dataset d = make_task("sort", to);
  ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.d_e = 16;
  c.d_attn = c.d_mid = 8;
  c.d_mlp = 32;
  c.l_max = 20;
  c.vocab = d.vocab;
  TrainOptions o;
  o.batch = 8;
  o.steps = 100000;  // never finishes during a test
  o.warmup = 5;
  o.eval_sequences = 16;
  o.threads = threads;
  return {Model::initialised(c, 1), std::move(d), o};
}

void wait_for_steps(const TrainingRunner& r, int64_t steps) {
  TrainSnapshot s;
  for (int k = 0; k < 20000; ++k) {
    r.snapshot(s);
    if (s.step >= steps) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  FAIL() << "the runner did not reach " << steps << " updates";
}

TEST(Tsan, RunnerControlledWhileTraining) {
  TrainingRunner r;
  r.eval_every = 5;
  Small s = small_sort(2);
  r.configure(std::move(s.model), std::move(s.data), s.options);

  // Another thread copies the snapshot in a loop, as the UI does every frame.
  std::atomic<bool> stop{false};
  std::atomic<int64_t> seen{0};
  std::thread ui([&] {
    TrainSnapshot snap;
    while (!stop.load()) {
      r.snapshot(snap);
      seen = std::max<int64_t>(seen.load(), snap.step);
      (void)r.last_minibatch();
    }
  });

  r.play();
  wait_for_steps(r, 3);
  r.set_lr(3e-3);  // changing η while playing
  r.set_batch(4);
  wait_for_steps(r, 6);
  std::unique_ptr<Model> used;  // "use this model" while training
  Dataset d;
  TrainOptions o;
  int i = 0, n = 0;
  ASSERT_TRUE(r.copy_state(&used, &d, &o, &i, &n));
  EXPECT_EQ(o.batch, 4);
  EXPECT_EQ(used->config.d_e, 16);
  r.set_mode(TrainMode::Paper);
  wait_for_steps(r, 8);
  r.set_mode(TrainMode::Practical);
  r.pause();
  EXPECT_FALSE(r.playing());
  r.step_sync(2);
  r.play();
  wait_for_steps(r, 12);
  r.reset(2);  // pauses, starts over
  TrainSnapshot after;
  r.snapshot(after);
  EXPECT_EQ(after.step, 0);
  EXPECT_FALSE(after.playing);
  r.play();
  wait_for_steps(r, 2);
  stop = true;
  ui.join();
  r.pause();
  TrainSnapshot last;
  r.snapshot(last);
  EXPECT_GE(last.step, 2);
  EXPECT_TRUE(std::isfinite(last.last_loss));
  EXPECT_TRUE(last.error.empty()) << last.error;
  EXPECT_GE(seen.load(), 2);
}

TEST(Tsan, TrainerOnTwoThreadsMatchesOne) {
  Small one = small_sort(1), two = small_sort(2);
  Trainer a(std::move(one.model), std::move(one.data), one.options);
  Trainer b(std::move(two.model), std::move(two.data), two.options);
  // The first update's loss is taken at the same θ on both: one and two threads only sum the
  // minibatch's n nonnegative terms −log P in another order, so they differ by at most
  // 2·γ_n·loss (tests/core/float_bounds.hpp). Later losses follow Adam's updates, which divide
  // by √v and can move a parameter whose gradient is at rounding level by up to η either way:
  // those are only required to be finite (this test is about races; tests/core's ParallelTraining
  // compares the gradients).
  const StepInfo x = a.step(), y = b.step();
  const double n = x.tokens;
  EXPECT_EQ(x.tokens, y.tokens);
  EXPECT_LE(std::abs(x.loss - y.loss), 2 * test::float_gamma(n) * x.loss);
  for (int k = 0; k < 2; ++k) {
    EXPECT_TRUE(a.step().finite);
    EXPECT_TRUE(b.step().finite);
  }
}

TEST(Tsan, SessionTraceJobsOnAWorker) {
  Session s;
  s.async_min_params = 0;  // every trace goes to the worker thread
  const std::vector<std::string> prompts = {"abc", "the cat", "sorted", "hello world", "x"};
  for (int round = 0; round < 3; ++round)
    for (const std::string& p : prompts) {
      s.set_prompt(p);  // supersedes the running request
      s.poll();
      (void)s.trace_progress();
    }
  s.trace_generate(2, true);
  s.poll();
  s.set_prompt("last");
  s.wait_for_trace();
  EXPECT_FALSE(s.tracing());
  EXPECT_EQ(s.prompt(), "last");
  EXPECT_GT(s.trace().size(), 0u);
}

TEST(Tsan, ParallelForOnTwoThreads) {
  set_compute_threads(2);
  std::vector<double> out(64, 0.0);
  // Many short jobs back to back: a helper woken for one job may find it already done by the
  // caller; the next job must not start before that helper has left (a race CI once caught).
  const int reps = 2000;
  for (int rep = 0; rep < reps; ++rep)
    parallel_for(static_cast<int>(out.size()), [&](int k) { out[k] += k; }, 1e9);
  for (int k = 0; k < 64; ++k) EXPECT_EQ(out[k], double(reps) * k);
  // Two callers at once: one holds the pool, the other runs its tasks itself.
  Mat<float> A = Mat<float>::Random(512, 256), B = Mat<float>::Random(256, 64);
  Mat<float> Y1, Y2;
  std::thread other([&] { Y2 = product<float>(A, B); });
  Y1 = product<float>(A, B);
  other.join();
  EXPECT_EQ((Y1 - Y2).cwiseAbs().maxCoeff(), 0.0f);
  EXPECT_LT((Y1 - A * B).cwiseAbs().maxCoeff(), 1e-3f);
}

}  // namespace
}  // namespace sf
