// Training a decoder-only transformer, in two modes:
//
//  - Paper: Algorithm 13, θ̂ ← DTraining(x_{1:N_data}, θ), exactly as printed: one sequence at
//    a time in order, for N_epochs epochs, the summed loss −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t],
//    and plain SGD θ ← θ − η·∇loss(θ). (core/alg13_dtraining.cpp)
//  - Practical (§7–8 of the paper name these): minibatches of sequences padded to one length,
//    the mean loss per predicted token, Adam or AdamW, linear warmup then cosine decay of the
//    learning rate, and clipping of the gradient norm. (core/trainer.cpp)
//
// A Trainer runs either mode one update at a time, so that a user interface can drive it from a
// worker thread (play, pause, single step), change the learning rate or the mode without
// starting over, reset to a seeded initialisation, and save or resume a checkpoint. It holds no
// global state; it is not thread-safe: the caller serialises access (e.g. a mutex around
// step() and the readers).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/checkpoint.hpp"
#include "core/datasets.hpp"
#include "core/grad.hpp"
#include "core/optim.hpp"
#include "core/trace.hpp"

namespace sf {

// Algorithm 13, run one update at a time. Lines 1–2 are the loop position (i, n); step() runs
// lines 3–6 for the current (i, n), then advances it.
//
// With a tracer, step() records one pass through lines 1–6 as a frame of Algorithm 13 (indices
// i and n set): line 1 binds i, line 2 n, line 3 x_n and ℓ; line 4 calls DTransformer with the
// tracer (its events nest) and binds P; line 5 binds the loss terms −log P[x_n[t+1], t] for
// t = 1 … ℓ−1 (a 1×(ℓ−1) row) and their sum, the loss; line 6 binds η, ‖∇loss(θ)‖, the norm of
// each tensor's gradient (a column, one row per tensor of the parameter table in table order)
// and, for models of at most kTraceCopyLimit parameters, for every tensor NAME of the table:
// "∇NAME", "NAME (before)" and "NAME (after)" (per-head tensors [H, rows, cols] as rows ×
// H·cols, the heads side by side). Without a tracer nothing is copied.
//
// Deviation from the paper, stated: when the loss or the gradient is not finite, θ is left as
// it was and the position does not advance (the caller decides what to do).
class DTraining {
 public:
  static constexpr size_t kTraceCopyLimit = 1'000'000;

  DTraining(int N_data, int N_epochs);
  int N_data() const { return N_data_; }
  int N_epochs() const { return N_epochs_; }
  bool done() const { return i_ > N_epochs_; }
  int i() const { return i_; }  // the next update's epoch, 1-based
  int n() const { return n_; }  // the next update's sequence, 1-based
  // Moves to epoch i, sequence n (a resumed run). Throws sf::Error when out of range.
  void seek(int i, int n);

  struct Update {
    float loss = 0;                    // the summed loss of x_n (line 5)
    int l = 0;                         // ℓ = length(x_n)
    double grad_norm = 0;              // ‖∇loss(θ)‖
    std::vector<double> tensor_norms;  // ‖∇loss(θ)‖ of each tensor of the table, in table order
    bool finite = true;                // false: θ was not updated
  };
  // Lines 1–6 for (i, n) with data[n − 1] = x_n; updates model.theta with learning rate η.
  // Afterwards g.grad holds η·∇loss(θ) (see sgd_update).
  Update step(const std::vector<Tokens>& data, Model& model, float eta, GptGradient<float>& g, Tracer* tr = nullptr);

 private:
  int N_data_, N_epochs_;
  int i_ = 1, n_ = 1;
};

enum class TrainMode { Paper, Practical };
const char* to_string(TrainMode m);

struct TrainOptions {
  TrainMode mode = TrainMode::Practical;
  double lr = 1e-3;  // practical: peak learning rate; paper: the constant η
  // Practical mode.
  int batch = 16;        // sequences per minibatch
  double min_lr = 1e-4;  // where the cosine ends
  int64_t warmup = 100;  // updates of linear warmup
  int64_t steps = 2000;  // updates in all: the cosine reaches min_lr here
  AdamOptions adam;
  double clip = 1.0;       // largest global gradient norm; 0: no clipping
  uint64_t data_seed = 1;  // the order of the minibatches (a fresh shuffle each epoch)
  int threads = 1;         // the minibatch is split across this many threads
  // Paper mode.
  int epochs = 1;  // N_epochs
  // Both: validation uses the first eval_sequences validation sequences (0: all).
  int eval_sequences = 512;
};

struct StepInfo {
  int64_t step = 0;       // updates done, this one included
  double loss = 0;        // the loss differentiated: summed (paper) or mean (practical)
  double token_loss = 0;  // mean −log P per predicted token (comparable across modes)
  double lr = 0;          // the learning rate this update used
  double grad_norm = 0;   // ‖∇loss(θ)‖ before clipping
  int tokens = 0;         // tokens processed (padding excluded)
  double seconds = 0;     // wall-clock time of the update
  bool finite = true;     // false: the loss or gradient was NaN or ±∞ and θ was NOT updated
};

struct LossPoint {
  int64_t step;  // updates done when it was measured
  float loss;    // mean −log P per predicted token
};

class Trainer {
 public:
  // The data must fit the model: its characters in model.config.vocab, its sequences at most
  // ℓ_max tokens with bos_token and eos_token. Throws sf::Error naming what does not fit.
  Trainer(Model model, Dataset data, TrainOptions opt);
  ~Trainer();
  Trainer(const Trainer&) = delete;
  Trainer& operator=(const Trainer&) = delete;

  // One update: paper mode, one sequence (Algorithm 13 lines 1–6, traced when tr is given);
  // practical mode, one minibatch (not a paper algorithm: tr is ignored). Throws sf::Error
  // when finished(). A non-finite loss or gradient leaves θ and the data position unchanged
  // and is returned with finite = false.
  StepInfo step(Tracer* tr = nullptr);
  // Mean −log P per predicted token over the validation sequences, appended to val_history();
  // NaN (and nothing appended) when there are none.
  double evaluate();
  // Paper mode: every epoch done. Practical mode: `steps` updates done.
  bool finished() const;

  // Observable state.
  int64_t steps_done() const { return step_; }
  const std::vector<LossPoint>& train_history() const { return train_history_; }
  const std::vector<LossPoint>& val_history() const { return val_history_; }
  double tokens_per_second() const;  // over the updates since construction, reset or restore
  // ‖∇loss(θ)‖ of each tensor of the table (table order), from the last update.
  const std::vector<double>& grad_norms() const { return grad_norms_; }
  double current_lr() const;  // the learning rate of the next update
  const Model& model() const { return model_; }
  Model& model() { return model_; }
  const Dataset& data() const { return data_; }
  const TrainOptions& options() const { return opt_; }
  const DTraining& paper_position() const { return paper_; }
  int64_t epoch() const { return epoch_; }   // practical mode: completed passes over the data
  size_t cursor() const { return cursor_; }  // practical mode: position in this pass's order
  const AdamState& adam() const { return adam_; }

  // Settings that take effect at the next update, without a reset.
  void set_lr(double lr);
  void set_mode(TrainMode m);
  void set_options(const TrainOptions& opt);  // the same checks as the constructor

  // θ ← a fresh initialisation with this seed; optimizer state, data position, step count and
  // histories cleared.
  void reset(uint64_t seed);

  // A checkpoint with θ, the optimizer state ("optimizer.m", "optimizer.v" and metadata
  // "optimizer.t") and the training state (metadata "train.*": step, mode, data name, data seed,
  // epoch and cursor, Algorithm 13's i and n; tensors "train.loss" (per update),
  // "train.val_step" and "train.val_loss"). `metadata` is added.
  void save(const std::string& path, std::map<std::string, std::string> metadata = {}) const;
  // Continues from a checkpoint written by save(): same configuration and the same data name.
  // Throws sf::Error naming what does not match.
  void restore(const Checkpoint& ckpt);

 private:
  struct Worker;
  StepInfo practical_step();
  void check_options(const TrainOptions& opt) const;
  std::vector<size_t> epoch_order(int64_t epoch) const;

  Model model_;
  Dataset data_;
  TrainOptions opt_;
  std::vector<Tokens> train_, val_;  // tokenized: [bos_token, characters…, eos_token]
  int l_ = 0;                        // minibatches are padded to this length (the longest sequence)
  std::vector<std::unique_ptr<Worker>> workers_;
  DTraining paper_;
  AdamState adam_;
  int64_t step_ = 0;
  int64_t epoch_ = 0;
  size_t cursor_ = 0;
  std::vector<size_t> order_;  // this epoch's order of the training sequences
  std::vector<size_t> pick_;   // the minibatch being assembled
  std::vector<LossPoint> train_history_, val_history_;
  std::vector<double> grad_norms_;
  double seconds_ = 0;
  int64_t tokens_ = 0;
};

}  // namespace sf
