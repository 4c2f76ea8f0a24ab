// Inspector tab "Training", in the spirit of TensorFlow Playground: a task and its data, the
// paper's Algorithm 13 or the practical recipe of §7–8, η, batch size and seed; play, pause and
// one update (a worker thread runs the Trainer, see app/training_runner.hpp); live loss curves,
// tokens/s and per-tensor gradient norms; the greedy validation accuracy beside the loss curves
// ("sorts 95% of validation sequences … after N updates, 7.9 s"); "use this model"; and one
// traced update of Algorithm 13 put into the stepper. By default it follows the classroom recipe
// (core/training/recipe.hpp, docs/training.md): the recipe's small model and settings, playing
// until 95% greedy validation accuracy; unticked, the open model's sizes.
#pragma once
#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/training_runner.hpp"
#include "app/widgets/line_chart.hpp"
#include "core/training/recipe.hpp"

namespace sf {

class TrainingPanel {
 public:
  void draw(App& app);

  // For App::apply_action (train-task:, train-mode:, train-step:, train-trace, train-use,
  // train-play, train-pause, eta:).
  // NAME is a task (sort, reverse, copy, add, words) or the path of a UTF-8 text file.
  bool set_task(App& app, const std::string& name, std::string& error);
  void set_mode(App& app, TrainMode m);
  void step_sync(App& app, int n);
  bool trace_update(App& app, std::string& error);
  bool use_model(App& app, std::string& error);
  bool play(App& app, std::string& error);  // ▶ Play; fails once the schedule has finished
  void pause() { runner_.pause(); }         // ‖ Pause (nothing when not playing)
  // Once a frame (App::draw): when another model is open, not the one this tab trains nor one of its
  // configuration, the run can no longer go on (the tab's next use starts over for the new model),
  // so its trainer, the model it trains, the optimiser's state and the history are let go now
  // rather than held until then.
  void drop_if_stale(const App& app);
  // Lets go of the run (pausing it first): the tab as at start, configured on its next use.
  void release();
  bool set_eta(App& app, double eta, std::string& error);  // the η slider: 1e-5 ≤ η ≤ 1
  // The trainer's state (refreshed under the runner's mutex), for --dump-state.
  const TrainSnapshot& snapshot() const;
  const std::string& task_label() const { return task_label_; }
  // The settings a session saves (app/classroom/session_feature.cpp) and puts back.
  const std::string& task() const { return task_; }
  TrainMode mode() const { return mode_; }
  float eta() const { return lr_; }
  int batch() const { return batch_; }
  int seed() const { return seed_; }
  void set_rates(float eta, int batch, int seed) {
    lr_ = eta, batch_ = batch, seed_ = seed;
    runner_.set_lr(lr_);
    runner_.set_batch(batch_);
  }
  size_t drawn_frame() const { return drawn_frame_; }
  // What the accuracy chart drew last frame (its rectangle, x tick labels, the 95% line), for --dump-state.
  const ChartDrawn& accuracy_chart() const { return accuracy_chart_; }
  // The last practical minibatch the trainer made (B = 0 before the first), for --dump-state.
  Batch last_minibatch() const { return runner_.last_minibatch(); }  // ui.frame_index when the tab last drew

 private:
  bool ensure(App& app);  // configures the default task on first use
  // The runner was configured for the session's model: its architecture and its configuration but for the vocabulary.
  bool configured_for(const App& app) const;
  // The last minibatch: each sequence's tokens with its padding shaded, and one sequence's
  // attention mask with the padded keys masked.
  void draw_padding(App& app);
  void draw_minibatch_rows(const App& app, const Batch& b) const;
  void draw_padded_mask(const App& app, const Batch& b);
  bool configure(App& app, std::string& error);
  // The default η for a mode: the recipe's (practical, recipe on), 3e-3 (practical), 1e-2 (paper).
  float default_lr(App& app, TrainMode m) const;
  // The accuracy chart beside the loss curves, and the line once the recipe's target is reached.
  void draw_accuracy(const TrainSnapshot& s, ImVec2 size, bool dark);
  void draw_reached(const TrainSnapshot& s) const;
  // What the learner sees, top to bottom: the task row, the recipe, Algorithm 12's masking, the
  // data; the mode radios and the optimiser's controls; the play row; the charts; the gradient
  // norms; "use this model" and the traced update.
  void draw_task_row(App& app);
  void draw_recipe(App& app);
  void draw_masking(App& app);
  void draw_data(const App& app) const;
  void draw_mode_radios(App& app, const PaperTraining& paper);
  void draw_optimiser_controls();
  void draw_play_row(const TrainSnapshot& s);
  void draw_charts(const App& app, const TrainSnapshot& s);
  void draw_gradient_norms(const App& app, const TrainSnapshot& s) const;
  void draw_use_and_trace(App& app, const PaperTraining& paper);
  void draw_traced_update(App& app, const PaperTraining& paper);

  TrainingRunner runner_;
  ChartDrawn accuracy_chart_;
  mutable TrainSnapshot snap_;
  bool configured_ = false;
  std::string task_ = "sort";  // a task name, or a text file path
  std::string task_label_;
  char path_[512] = "";
  TrainMode mode_ = TrainMode::Practical;
  bool recipe_ = true;  // the classroom recipe's model and settings (else the open model's sizes)
  float lr_ = static_cast<float>(recipe("classroom").options.lr);
  int batch_ = recipe("classroom").options.batch;
  int seed_ = 1;
  const Architecture* arch_ = nullptr;  // the session model's architecture the runner was configured for
  std::weak_ptr<const Model> checked_model_;  // the session's model drop_if_stale last looked at
  std::string config_key_;  // … and its configuration but for the vocabulary (a new model, File › New model…, retrains)
  float p_mask_ = 0.15f;                // Algorithm 12's p_mask (models that fill in [MASK])
  bool bert_80_10_10_ = false;          // BERT's 80/10/10 rule (not the paper's)
  int eval_every_ = 50;
  std::vector<std::string> preview_;
  size_t n_train_ = 0, n_val_ = 0;
  std::string description_;
  std::string verb_;  // "sorts", "fills in", "translates" (accuracy_verb)
  std::string error_;
  bool log_y_ = true;
  float ema_ = 0.6f;
  int param_ = 0;
  size_t drawn_frame_ = SIZE_MAX;  // parameter picked for the traced update's tensor view
  Batch minibatch_;          // the last practical minibatch (refreshed when the step changes)
  int64_t minibatch_step_ = -1;  // the step minibatch_ was fetched at
  std::unique_ptr<Tokenizer> train_tok_;  // the trained model's vocabulary (labels of minibatch_)
  ModelConfig train_config_;                  // the trained model's configuration (its mask, its separator)
  int batch_seq_ = 1;        // the sequence b (1-based) whose attention mask is drawn
};

// The App's training panel (defined in app/app.cpp, where App::Panels is complete).
const TrainingPanel& training_panel(const App& app);

}  // namespace sf
