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

#include "core/training/training.hpp"

namespace sf {

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
  // Copies the state into `s` when it changed since s.version.
  void snapshot(TrainSnapshot& s) const;
  // A copy of the model, the dataset, the options, Algorithm 13's position (under the mutex).
  bool copy_state(std::unique_ptr<Model>* m, Dataset* d, TrainOptions* o, int* i, int* n) const;
  // The last practical minibatch (Trainer::last_minibatch); B = 0 when there is none.
  Batch last_minibatch() const;
  int eval_every = 50;  // evaluate() every this many updates

 private:
  void loop();
  bool one_update_locked();  // false: stop playing
  mutable std::mutex mu_;
  std::unique_ptr<Trainer> trainer_;
  std::thread worker_;
  std::atomic<bool> run_{false};
  uint64_t version_ = 1;
  int64_t bad_step_ = 0;
  std::string error_;
  double last_loss_ = 0;
};

}  // namespace sf
