// Training (core/training.hpp): Algorithm 13 as printed (one sequence, summed loss, plain SGD,
// matched against an update computed here by hand), its trace, the Trainer's practical mode
// (learning the sorting task), exact resumption from a checkpoint, the NaN guard, settings
// changed without reset, and reset by seed.
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <cmath>
#include <cstring>
#include <filesystem>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/training/training.hpp"
#include "float_bounds.hpp"
#include "grad_check.hpp"
#include "reference_json.hpp"

namespace test_training {

using namespace sf;
using namespace sf::test;
namespace fs = std::filesystem;

namespace {

ModelConfig tiny(const std::vector<std::string>& vocab, int l_max = 20) {
  ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.d_e = 16;
  c.d_attn = 8;
  c.d_mid = 8;
  c.d_mlp = 32;
  c.l_max = l_max;
  c.vocab = vocab;
  return c;
}

Dataset sort_data(int train = 400, int val = 100, uint64_t seed = 1) {
  TaskOptions t;
  t.seed = seed;
  t.train_size = train;
  t.val_size = val;
  t.max_chars = 18;
  return make_task("sort", t);
}

Dataset one_sequence(const std::string& text) {
  Dataset d;
  d.name = "one sequence";
  d.train = {text};
  d.vocab = {"a", "b", "c", "="};
  return d;
}

fs::path temp_path(const std::string& name) {
  return fs::temp_directory_path() / ("stepformer_training_" + std::to_string(::getpid()) + "_" + name);
}

// −Σ_{t=1}^{ℓ−1} log P[x[t+1], t] by core's Algorithm 10 in double.
double summed_loss(const Tokens& x, const ModelConfig& c, const std::vector<double>& theta) {
  const ParamTable table(c);
  const MatD P = dtransformer<double>(x, c, bind_gpt<const double>(table, theta.data()));
  double loss = 0;
  for (size_t t = 0; t + 1 < x.size(); ++t) loss -= std::log(P(x[t + 1] - 1, t));
  return loss;
}

TEST(Training, PaperModeIsOneSgdStepOnTheSummedLossOfOneSequence) {
  const ModelConfig c = tiny({"a", "b", "c", "="});
  const Model start = Model::initialised(c, 3);
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  opt.lr = 0.05;
  opt.epochs = 1;
  Trainer trainer(start, one_sequence("cab=abc"), opt);
  const StepInfo info = trainer.step();
  ASSERT_TRUE(info.finite);
  EXPECT_TRUE(trainer.finished());  // N_data = 1, N_epochs = 1

  // By hand: x = [bos, c, a, b, =, a, b, c, eos]; ∇loss(θ) by central differences of the summed
  // loss of core's Algorithm 10 in double; θ ← θ − η·∇loss(θ).
  const Tokens x{c.bos_token(), 3, 1, 2, 4, 1, 2, 3, c.eos_token()};
  std::vector<double> theta(start.theta.begin(), start.theta.end());
  // Float against double: the loss is a sum of 8 terms −log P, each from a forward pass whose
  // relative error is ≲ 1e-6 (reference_json.hpp's estimate for models of this size): 1e-4 relative
  // leaves a factor 100.
  EXPECT_NEAR(info.loss, summed_loss(x, c, theta), 1e-4 * info.loss);
  const MatD g = numeric_gradient(theta.data(), static_cast<Eigen::Index>(theta.size()), 1,
                                  [&] { return summed_loss(x, c, theta); });
  const Eigen::Map<const VecF> before(start.theta.data(), start.theta.size());
  const Eigen::Map<const VecF> after(trainer.model().theta.data(), start.theta.size());
  const Vec<double> want = before.cast<double>() - opt.lr * g;
  // θ − η·g rounded to float (≤ u·|θ| = 6e-8 for |θ| ≤ 1, u = 2⁻²⁴) plus η = 0.05 times the float
  // gradient's error (≲ 1e-6 relative of |g| ≲ 1, so ≲ 5e-8) plus the central differences' (1e-11):
  // ≲ 1.1e-7 < 2e-7.
  EXPECT_LT((after.cast<double>() - want).cwiseAbs().maxCoeff(), 2e-7);
  // The step over η is the float gradient, within kRefFloatGradient of the double one (reference_json.hpp),
  // plus θ's rounding over η (u·‖θ‖/η); the norm is off by at most the gradient's error.
  const double step_error = kRefFloatGradient + kFloatU * before.cast<double>().norm() / (opt.lr * g.norm());
  EXPECT_LT(relative_error(((before - after).cast<double>() / opt.lr).eval(), g), step_error);
  EXPECT_NEAR(info.grad_norm, g.norm(), kRefFloatGradient * g.norm());
}

TEST(Training, PaperModeTakesTheSequencesInOrderForEveryEpoch) {
  Dataset d = one_sequence("ab=ab");
  d.train = {"ab=ab", "ba=ab", "cab=abc"};
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  opt.epochs = 2;
  Trainer trainer(Model::initialised(tiny(d.vocab), 1), d, opt);
  std::vector<std::pair<int, int>> seen;
  while (!trainer.finished()) {
    seen.emplace_back(trainer.paper_position().i(), trainer.paper_position().n());
    const StepInfo s = trainer.step();
    EXPECT_EQ(s.tokens, static_cast<int>(d.train[seen.back().second - 1].size()) + 2);
  }
  EXPECT_EQ(seen, (std::vector<std::pair<int, int>>{{1, 1}, {1, 2}, {1, 3}, {2, 1}, {2, 2}, {2, 3}}));
  EXPECT_EQ(trainer.steps_done(), 6);
  EXPECT_THROW(trainer.step(), Error);
}

const Value* find(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

TEST(Training, Algorithm13TraceBindsLinesOneToSixWithDTransformerNested) {
  const ModelConfig c = tiny({"a", "b", "c", "="});
  Model model = Model::initialised(c, 2);
  const std::vector<Example> data{{{}, {c.bos_token(), 1, 2, 4, 1, 2, c.eos_token()}},
                                  {{}, {c.bos_token(), 3, 4, 3, c.eos_token()}}};
  DTraining alg(2, 1);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(model.table);
  const TrainOptions opt;
  Rng rng(1);
  alg.step(data, model, 0.1f, opt, *g, rng);  // x_1 untraced
  const std::vector<float> before = model.theta;
  Trace trace;
  Tracer tracer(trace);
  const PaperTraining::Update u = alg.step(data, model, 0.1f, opt, *g, rng, &tracer);  // x_2, traced
  ASSERT_TRUE(u.finite);
  EXPECT_TRUE(alg.done());

  ASSERT_FALSE(trace.events.empty());
  EXPECT_EQ(trace.events[0].kind, EventKind::Enter);
  EXPECT_EQ(trace.events[0].alg, 13);
  std::vector<int> lines;
  size_t line4 = 0, alg10_enter = 0;
  for (size_t k = 0; k < trace.size(); ++k) {
    const Event& e = trace.events[k];
    if (e.alg == 13 && e.kind == EventKind::Line && e.pass == Pass::Forward) {  // (13:5̄ is line 6's backward)
      lines.push_back(e.line);
      EXPECT_EQ(e.idx.i, 1);
      EXPECT_EQ(e.idx.n, e.line == 1 ? 0 : 2);  // n is in force from line 2 on
      if (e.line == 4) line4 = k;
    }
    if (e.alg == 10 && e.kind == EventKind::Enter && !alg10_enter) {
      alg10_enter = k;
      EXPECT_EQ(e.depth, 1);  // nested under Algorithm 13
    }
  }
  EXPECT_EQ(lines, (std::vector<int>{1, 2, 3, 4, 5, 6}));
  EXPECT_GT(alg10_enter, 0u);
  EXPECT_LT(alg10_enter, line4);  // DTransformer's events come before the line that called it

  auto line = [&](int n) -> const Event& {
    for (const Event& e : trace.events)
      if (e.alg == 13 && e.kind == EventKind::Line && e.line == n) return e;
    throw std::runtime_error("no line");
  };
  EXPECT_EQ(find(line(3), "ℓ")->m(0, 0), 5.0f);
  EXPECT_EQ(find(line(4), "P")->m.cols(), 5);
  const Value* terms = find(line(5), "−log P[x_n[t+1], t]");
  ASSERT_NE(terms, nullptr);
  EXPECT_EQ(terms->m.cols(), 4);  // t = 1 … ℓ−1
  // The same 4 positive terms summed, maybe in another order: 2·γ_4·Σ.
  const double sum_error = 2 * float_gamma(4) * terms->m.sum();
  EXPECT_NEAR(terms->m.sum(), find(line(5), "loss")->m(0, 0), sum_error);
  EXPECT_NEAR(terms->m.sum(), u.loss, sum_error);
  // The terms are the −log P of DTransformer's own P: only the float log's rounding (k·u·|log P|).
  const MatF& P = find(line(4), "P")->m;
  for (int t = 0; t < 4; ++t) {
    const double log_p = std::log(P(data[1].x[t + 1] - 1, t));
    EXPECT_NEAR(terms->m(0, t), -log_p, kFunctionRoundings * kFloatU * std::abs(log_p));
  }

  const Event& l6 = line(6);
  const Value* norms = find(l6, "‖∇loss(θ)‖ per tensor");
  ASSERT_NE(norms, nullptr);
  EXPECT_EQ(norms->m.rows(), static_cast<Eigen::Index>(model.table.entries().size()));
  // Both from the same per-tensor norms (stored as float: u each), squared and summed in float or
  // double, maybe in another order: 2·γ_{n+2}·‖∇‖.
  EXPECT_NEAR(find(l6, "‖∇loss(θ)‖")->m(0, 0), norms->m.norm(), 2 * float_gamma(norms->m.size() + 2.0) * norms->m.norm());
  for (const ParamEntry& e : model.table.entries()) {
    const Value *grad = find(l6, "∇" + e.name), *b = find(l6, e.name + " (before)"), *a = find(l6, e.name + " (after)");
    ASSERT_TRUE(grad && b && a) << e.name;
    EXPECT_EQ(b->m.rows(), e.rows);
    EXPECT_EQ(b->m.cols(), e.cols * e.count);
    EXPECT_EQ(b->m, Eigen::Map<const MatF>(before.data() + e.offset, e.rows, e.cols * e.count)) << e.name;
    EXPECT_EQ(a->m, Eigen::Map<const MatF>(model.theta.data() + e.offset, e.rows, e.cols * e.count)) << e.name;
    // θ − η·g in float both ways; one side may be contracted into an FMA: ≤ u·(2|θ| + |η·g|) apart
    // (as in test_bert_training.cpp).
    const Eigen::ArrayXXf step = 0.1f * grad->m.array();
    const Eigen::ArrayXXf bound = float(kFloatU) * (2 * a->m.array().abs() + step.abs());
    EXPECT_LE(((a->m.array() - (b->m.array() - step)).abs() - bound).maxCoeff(), 0.0f) << e.name;
  }
}

TEST(Training, PracticalModeLearnsToSort) {
  // The reference architecture's shape at a smaller width, trained for a few seconds on the
  // sorting task ("dcab=abcd"). A uniform guess scores ln N_V = ln 30 = 3.40 per token; the
  // random input letters alone cost ≥ 1.4 nats per token on average, so a validation loss under
  // 1.9 means most of the sorted half is predicted. (This run reaches 1.66 in about 2 s; seeds
  // 2–4 give 1.64–1.68.)
  const Dataset d = sort_data(4000, 200);
  ModelConfig c = tiny(d.vocab);
  c.L = 2;
  c.d_e = 32;
  c.d_mlp = 64;
  TrainOptions opt;
  opt.lr = 1e-2;
  opt.min_lr = 1e-3;
  opt.steps = 600;
  opt.warmup = 30;
  opt.batch = 32;
  Trainer trainer(Model::initialised(c, 1), d, opt);
  const double initial = trainer.evaluate();
  EXPECT_NEAR(initial, std::log(c.N_V()), 0.3);
  const auto t0 = std::chrono::steady_clock::now();
  while (!trainer.finished()) ASSERT_TRUE(trainer.step().finite);
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  const double val = trainer.evaluate();
  RecordProperty("validation_loss", std::to_string(val));
  RecordProperty("seconds", std::to_string(seconds));
  EXPECT_LT(val, 1.9) << "after " << seconds << " s";
  EXPECT_EQ(trainer.train_history().size(), 600u);
  EXPECT_EQ(trainer.val_history().size(), 2u);
  EXPECT_GT(trainer.tokens_per_second(), 0);
}

// The losses and θ of `steps` updates in one go, and in two halves with a checkpoint between.
void check_resume(TrainMode mode) {
  const Dataset d = sort_data(60, 20);
  const ModelConfig c = tiny(d.vocab);
  TrainOptions opt;
  opt.mode = mode;
  opt.batch = 8;  // 60 sequences: the data wraps into a second epoch
  opt.steps = 20;
  opt.warmup = 4;
  opt.epochs = 1;
  opt.lr = mode == TrainMode::Paper ? 0.02 : 3e-3;
  opt.adam.weight_decay = 0.01;
  Trainer whole(Model::initialised(c, 4), d, opt);
  for (int k = 0; k < 20; ++k) whole.step();
  whole.evaluate();

  Trainer first(Model::initialised(c, 4), d, opt);
  for (int k = 0; k < 9; ++k) first.step();
  first.evaluate();
  const fs::path ckpt = temp_path(std::string("resume_") + to_string(mode) + ".safetensors");
  first.save(ckpt.string());
  const Checkpoint loaded = load_checkpoint(ckpt.string());
  Trainer second(Model(c), d, opt);  // θ comes from the checkpoint
  second.restore(loaded);
  EXPECT_EQ(second.steps_done(), 9);
  for (int k = 0; k < 11; ++k) second.step();
  second.evaluate();
  fs::remove(ckpt);

  EXPECT_EQ(second.model().theta, whole.model().theta);  // bitwise
  ASSERT_EQ(second.train_history().size(), whole.train_history().size());
  for (size_t k = 0; k < whole.train_history().size(); ++k) {
    EXPECT_EQ(second.train_history()[k].loss, whole.train_history()[k].loss) << "step " << k + 1;
    EXPECT_EQ(second.train_history()[k].step, whole.train_history()[k].step);
  }
  ASSERT_EQ(second.val_history().size(), 2u);
  EXPECT_EQ(second.val_history()[0].step, 9);
  EXPECT_EQ(second.val_history()[1].loss, whole.val_history()[0].loss);
  if (mode == TrainMode::Practical) {
    EXPECT_EQ(second.adam().t, 20);
    EXPECT_EQ(second.adam().m, whole.adam().m);
    EXPECT_EQ(second.epoch(), whole.epoch());
    EXPECT_EQ(second.cursor(), whole.cursor());
  }
}

TEST(Training, ResumingFromACheckpointGivesBitwiseTheSameRunPractical) { check_resume(TrainMode::Practical); }
TEST(Training, ResumingFromACheckpointGivesBitwiseTheSameRunPaper) { check_resume(TrainMode::Paper); }

TEST(Training, RestoreRefusesAnotherRunsCheckpoint) {
  const Dataset d = sort_data(40, 10);
  const ModelConfig c = tiny(d.vocab);
  Trainer a(Model::initialised(c, 1), d, TrainOptions{});
  a.step();
  const fs::path p = temp_path("other.safetensors");
  a.save(p.string());
  Trainer other_data(Model::initialised(c, 1), sort_data(40, 10, 2), TrainOptions{});
  EXPECT_THROW(other_data.restore(load_checkpoint(p.string())), Error);
  ModelConfig wider = c;
  wider.d_mlp = 48;
  Trainer other_model(Model::initialised(wider, 1), d, TrainOptions{});
  EXPECT_THROW(other_model.restore(load_checkpoint(p.string())), Error);
  save_checkpoint(p.string(), Model::initialised(c, 1));  // no training state
  EXPECT_THROW(a.restore(load_checkpoint(p.string())), Error);
  fs::remove(p);
}

TEST(Training, ANonFiniteLossLeavesThetaAndTheRunUnchanged) {
  for (TrainMode mode : {TrainMode::Practical, TrainMode::Paper}) {
    const Dataset d = sort_data(40, 10);
    TrainOptions opt;
    opt.mode = mode;
    Trainer trainer(Model::initialised(tiny(d.vocab), 1), d, opt);
    trainer.step();
    trainer.model().theta[trainer.model().table.find("gamma")->offset] = NAN;
    const std::vector<float> poisoned = trainer.model().theta;
    const StepInfo s = trainer.step();
    EXPECT_FALSE(s.finite) << to_string(mode);
    EXPECT_TRUE(std::isnan(s.loss));
    EXPECT_EQ(s.step, 1);
    EXPECT_EQ(trainer.steps_done(), 1);
    EXPECT_EQ(trainer.train_history().size(), 1u);
    EXPECT_EQ(std::memcmp(trainer.model().theta.data(), poisoned.data(), poisoned.size() * sizeof(float)), 0);
  }
}

TEST(Training, LearningRateAndModeChangeWithoutReset) {
  const Dataset d = sort_data(40, 10);
  TrainOptions opt;
  opt.steps = 100;
  opt.warmup = 10;
  Trainer trainer(Model::initialised(tiny(d.vocab), 1), d, opt);
  EXPECT_NEAR(trainer.current_lr(), opt.lr / 10, 1e-12);  // warmup: step 1 of 10
  for (int k = 0; k < 10; ++k) trainer.step();
  EXPECT_LT(trainer.current_lr(), opt.lr);
  trainer.set_lr(0.01);
  EXPECT_GT(trainer.current_lr(), 0.009);  // the cosine scales the new peak
  EXPECT_EQ(trainer.steps_done(), 10);
  trainer.set_mode(TrainMode::Paper);
  EXPECT_EQ(trainer.current_lr(), 0.01);  // the paper's constant η
  const StepInfo s = trainer.step();
  EXPECT_TRUE(s.finite);
  EXPECT_EQ(s.tokens, static_cast<int>(d.train[0].size()) + 2);  // x_1: one sequence
  EXPECT_EQ(trainer.steps_done(), 11);
  EXPECT_EQ(trainer.grad_norms().size(), trainer.model().table.entries().size());
  EXPECT_THROW(trainer.set_lr(-1), Error);
}

TEST(Training, ResetBySeedStartsTheSameRunAgain) {
  const Dataset d = sort_data(40, 10);
  const ModelConfig c = tiny(d.vocab);
  Trainer trainer(Model::initialised(c, 7), d, TrainOptions{});
  std::vector<float> first;
  for (int k = 0; k < 5; ++k) first.push_back(static_cast<float>(trainer.step().loss));
  trainer.reset(7);
  EXPECT_EQ(trainer.steps_done(), 0);
  EXPECT_TRUE(trainer.train_history().empty());
  EXPECT_EQ(trainer.model().theta, Model::initialised(c, 7).theta);
  for (int k = 0; k < 5; ++k) EXPECT_EQ(static_cast<float>(trainer.step().loss), first[k]) << k;
}

// Each update from the same θ (copied from the 1-thread run): not θ after Adam, which divides by
// √v and so moves a component whose gradient is at rounding level by up to η either way (issue 21).
// The loss is a sum of n = B·ℓ nonnegative terms (plus one addition per share), cut differently:
// within 2γ_n·loss. The summed gradients are compared in test_parallel_training.cpp.
TEST(Training, ThreadsSplitTheMinibatchAndAgreeWithOneThread) {
  const Dataset d = sort_data(64, 10);
  TrainOptions one, two;
  one.batch = two.batch = 16;
  two.threads = 2;
  Trainer a(Model::initialised(tiny(d.vocab), 1), d, one), b(Model::initialised(tiny(d.vocab), 1), d, two);
  for (int k = 0; k < 5; ++k) {
    b.model().theta = a.model().theta;
    const double want = a.step().loss, got = b.step().loss;
    const Batch minibatch = a.last_minibatch();
    const double n = static_cast<double>(minibatch.B) * minibatch.l + two.threads;
    EXPECT_LE(std::abs(got - want), 2 * test::float_gamma(n) * want) << "update " << k + 1;
  }
  EXPECT_NE(a.model().theta, Model::initialised(tiny(d.vocab), 1).theta);  // the updates did move θ
}

TEST(Training, TheDataMustFitTheModel) {
  const Dataset d = sort_data(40, 10);
  EXPECT_THROW(Trainer(Model::initialised(tiny({"a", "b"}), 1), d, TrainOptions{}), Error);   // vocabulary
  EXPECT_THROW(Trainer(Model::initialised(tiny(d.vocab, 12), 1), d, TrainOptions{}), Error);  // ℓ_max
  TrainOptions bad;
  bad.batch = 0;
  EXPECT_THROW(Trainer(Model::initialised(tiny(d.vocab), 1), d, bad), Error);
}

}  // namespace

}  // namespace test_training
