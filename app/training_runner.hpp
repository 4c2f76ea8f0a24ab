// Runs a Trainer on a worker thread for the Training tab: play, pause, one update, and a
// snapshot the UI thread copies each frame under the mutex (so drawing never waits for more
// than the update in progress).
#pragma once
#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

#include "core/training/accuracy.hpp"
#include "core/training/training.hpp"

namespace sf {

// The greedy validation accuracy (core/training/accuracy.hpp) measured after update `step`.
struct AccuracyPoint {
  int64_t step = 0;
  Accuracy accuracy;
};

struct TrainSnapshot {
  uint64_t version = 0;  // changes whenever the trainer does
  bool ready = false;    // a trainer exists
  bool playing = false;
  bool finished = false;
  int64_t step = 0;
  double lr = 0;
  double tokens_per_s = 0;
  double last_loss = 0;  // the last update's mean −log P per token
  std::vector<LossPoint> train, val;
  std::vector<AccuracyPoint> accuracy;  // at each evaluation, when the task has answers to check
  double seconds = 0;                   // wall time spent training (updates and evaluations)
  // The first evaluation whose accuracy reached until_accuracy (step 0: not yet), and `seconds` then.
  AccuracyPoint reached;
  double reached_seconds = 0;
  std::vector<double> grad_norms;
  int64_t bad_step = 0;  // > 0: the update that gave a non-finite loss (training paused there)
  std::string error;     // an exception from the worker
  TrainMode mode = TrainMode::Practical;
};

class TrainingRunner {
 public:
  TrainingRunner() = default;
  ~TrainingRunner();
  TrainingRunner(const TrainingRunner&) = delete;
  TrainingRunner& operator=(const TrainingRunner&) = delete;

  // Stops the worker and starts over with a new trainer. Throws sf::Error (from Trainer).
  void configure(Model m, Dataset d, TrainOptions o);
  void play();
  void pause();  // stops and joins the worker
  bool playing() const { return run_.load(); }
  // Pauses, then runs n updates on the calling thread (deterministic; for tests and "one update").
  void step_sync(int n);
  void set_lr(double lr);
  void set_mode(TrainMode m);
  void set_batch(int batch);
  void reset(uint64_t seed);  // pauses first
  // Pauses and lets go of the trainer (its model, optimiser state and history); configure() starts again.
  void release();
  // Copies the state into `s` when it changed since s.version.
  void snapshot(TrainSnapshot& s) const;
  // A copy of the model, the dataset, the options, Algorithm 13's position (under the mutex).
  bool copy_state(std::unique_ptr<Model>* m, Dataset* d, TrainOptions* o, int* i, int* n) const;
  // The last practical minibatch (Trainer::last_minibatch); B = 0 when there is none.
  Batch last_minibatch() const;
  // Evaluate() and measure the greedy validation accuracy every this many updates; read by the
  // worker, so atomic (the Training tab sets it while a run may be playing).
  std::atomic<int> eval_every = 50;
  // Playing pauses at the first evaluation whose accuracy is at least this (0: never).
  std::atomic<double> until_accuracy = 0;

 private:
  // A copy of the model after an evaluation, whose accuracy is measured off the mutex.
  struct AccuracyJob {
    std::unique_ptr<Model> model;
    std::vector<std::string> val;
    int64_t step = 0;
    int threads = 1;  // the trainer's (TrainOptions::threads)
    double until = 0;  // until_accuracy then: screened_accuracy's target
  };
  void loop();
  bool one_update_locked(AccuracyJob* job);  // false: stop playing
  // Appends a measured point (under the mutex); false when it reached until_accuracy.
  bool record_locked(const AccuracyJob& job, const Accuracy& a);
  void clear_locked();  // a new trainer or a reset: no history
  mutable std::mutex mu_;
  std::unique_ptr<Trainer> trainer_;
  std::thread worker_;
  std::atomic<bool> run_{false};
  uint64_t version_ = 1;
  int64_t bad_step_ = 0;
  std::string error_;
  double last_loss_ = 0;
  std::vector<AccuracyPoint> accuracy_;
  double seconds_ = 0;
  AccuracyPoint reached_;
  double reached_seconds_ = 0;
};

}  // namespace sf
