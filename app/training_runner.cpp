#include "app/training_runner.hpp"

#include <chrono>

#include "core/model/error.hpp"

namespace sf {

TrainingRunner::~TrainingRunner() { pause(); }

void TrainingRunner::configure(Model m, Dataset d, TrainOptions o) {
  pause();
  auto t = std::make_unique<Trainer>(std::move(m), std::move(d), o);
  std::lock_guard<std::mutex> lock(mu_);
  trainer_ = std::move(t);
  clear_locked();
}

void TrainingRunner::clear_locked() {
  bad_step_ = 0;
  error_.clear();
  last_loss_ = 0;
  accuracy_.clear();
  seconds_ = 0;
  reached_ = {};
  reached_seconds_ = 0;
  ++version_;
}

void TrainingRunner::play() {
  {
    std::lock_guard<std::mutex> lock(mu_);
    if (!trainer_ || trainer_->finished()) return;
    bad_step_ = 0;
    error_.clear();
  }
  if (run_.exchange(true)) return;
  if (worker_.joinable()) worker_.join();
  worker_ = std::thread([this] { loop(); });
}

void TrainingRunner::pause() {
  run_ = false;
  if (worker_.joinable()) worker_.join();
  std::lock_guard<std::mutex> lock(mu_);
  ++version_;
}

bool TrainingRunner::one_update_locked(AccuracyJob* job) {
  if (!trainer_ || trainer_->finished()) return false;
  try {
    const StepInfo info = trainer_->step();
    ++version_;
    if (!info.finite) {
      bad_step_ = info.step + 1;
      return false;
    }
    last_loss_ = info.token_loss;
    if (eval_every > 0 && trainer_->steps_done() % eval_every == 0) {
      trainer_->evaluate();
      job->model = std::make_unique<Model>(trainer_->model());
      job->val = trainer_->data().val;
      job->step = trainer_->steps_done();
      job->threads = trainer_->options().threads;
      job->until = until_accuracy;
    }
  } catch (const std::exception& e) {
    error_ = e.what();
    ++version_;
    return false;
  }
  return true;
}

bool TrainingRunner::record_locked(const AccuracyJob& job, const Accuracy& a) {
  if (a.total == 0) return true;  // nothing to check (copy, words, a text file)
  accuracy_.push_back({job.step, a});
  ++version_;
  if (reached_.step > 0 || until_accuracy <= 0 || a.fraction() < until_accuracy) return true;
  reached_ = accuracy_.back();
  reached_seconds_ = seconds_;
  return false;
}

void TrainingRunner::loop() {
  using clock = std::chrono::steady_clock;
  while (run_.load()) {
    const auto start = clock::now();
    bool more;
    AccuracyJob job;
    {
      std::lock_guard<std::mutex> lock(mu_);
      more = one_update_locked(&job);
    }
    // The accuracy of a copy, so that the UI thread's snapshot never waits for it.
    const Accuracy a = job.model ? screened_accuracy(*job.model, job.val, job.until, job.threads) : Accuracy{};
    {
      std::lock_guard<std::mutex> lock(mu_);
      seconds_ += std::chrono::duration<double>(clock::now() - start).count();
      if (job.model) more = record_locked(job, a) && more;
    }
    if (!more) {
      run_ = false;
      break;
    }
    std::this_thread::yield();
  }
}

void TrainingRunner::step_sync(int n) {
  pause();
  std::lock_guard<std::mutex> lock(mu_);
  bad_step_ = 0;
  error_.clear();
  for (int k = 0; k < n; ++k) {
    const auto start = std::chrono::steady_clock::now();
    AccuracyJob job;
    if (!one_update_locked(&job)) break;
    const Accuracy a = job.model ? screened_accuracy(*job.model, job.val, job.until, job.threads) : Accuracy{};
    seconds_ += std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    if (job.model) record_locked(job, a);  // n updates even past until_accuracy (only playing pauses there)
  }
}

void TrainingRunner::set_lr(double lr) {
  std::lock_guard<std::mutex> lock(mu_);
  if (trainer_) trainer_->set_lr(lr);
  ++version_;
}

void TrainingRunner::set_mode(TrainMode m) {
  std::lock_guard<std::mutex> lock(mu_);
  if (trainer_) trainer_->set_mode(m);
  ++version_;
}

void TrainingRunner::set_batch(int batch) {
  std::lock_guard<std::mutex> lock(mu_);
  if (!trainer_) return;
  TrainOptions o = trainer_->options();
  o.batch = batch;
  try {
    trainer_->set_options(o);
  } catch (const std::exception& e) {
    error_ = e.what();
  }
  ++version_;
}

void TrainingRunner::reset(uint64_t seed) {
  pause();
  std::lock_guard<std::mutex> lock(mu_);
  if (trainer_) trainer_->reset(seed);
  clear_locked();
}

void TrainingRunner::release() {
  pause();
  std::lock_guard<std::mutex> lock(mu_);
  trainer_.reset();
  clear_locked();
}

Batch TrainingRunner::last_minibatch() const {
  std::lock_guard<std::mutex> lock(mu_);
  return trainer_ ? trainer_->last_minibatch() : Batch{};
}

void TrainingRunner::snapshot(TrainSnapshot& s) const {
  std::lock_guard<std::mutex> lock(mu_);
  s.playing = run_.load();
  if (s.version == version_) return;
  s.version = version_;
  s.ready = trainer_ != nullptr;
  s.bad_step = bad_step_;
  s.error = error_;
  s.last_loss = last_loss_;
  if (!trainer_) return;
  const Trainer& t = *trainer_;
  s.finished = t.finished();
  s.step = t.steps_done();
  s.lr = t.current_lr();
  s.tokens_per_s = t.tokens_per_second();
  s.train = t.train_history();
  s.val = t.val_history();
  s.accuracy = accuracy_;
  s.seconds = seconds_;
  s.reached = reached_;
  s.reached_seconds = reached_seconds_;
  s.grad_norms = t.grad_norms();
  s.mode = t.options().mode;
}

bool TrainingRunner::copy_state(std::unique_ptr<Model>* m, Dataset* d, TrainOptions* o, int* i, int* n) const {
  std::lock_guard<std::mutex> lock(mu_);
  if (!trainer_) return false;
  if (m) *m = std::make_unique<Model>(trainer_->model());
  if (d) *d = trainer_->data();
  if (o) *o = trainer_->options();
  if (i) *i = trainer_->paper_position().i();
  if (n) *n = trainer_->paper_position().n();
  return true;
}

}  // namespace sf
