// Training a transformer of any architecture (core/arch/), in two modes:
//
//  - Paper: the architecture's training algorithm exactly as printed (Algorithm 13 DTraining,
//    12 ETraining or 11 EDTraining): one example at a time in order, for N_epochs epochs, the
//    summed loss, and plain SGD θ ← θ − η·∇loss(θ). (core/algorithms/alg1N_*.cpp)
//  - Practical (§7–8 of the paper name these): minibatches of examples padded to one length,
//    the mean loss per loss term, Adam or AdamW, linear warmup then cosine decay of the
//    learning rate, and clipping of the gradient norm. (core/training/trainer.cpp)
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

#include "core/arch/architecture.hpp"
#include "core/io/checkpoint.hpp"
#include "core/training/datasets.hpp"
#include "core/gradients/grad.hpp"
#include "core/model/rng.hpp"
#include "core/training/optim.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// loss(θ) and ∇loss(θ) of one architecture over a Batch: the batched, untraced forward and
// backward of core/gradients/, behind one interface for the trainer (Architecture::gradient).
class ModelGradient {
 public:
  virtual ~ModelGradient() = default;
  // loss = loss_weight · Σ over the batch's positions with a target of −log P[target, position],
  // and ∇loss(θ) into grad() (θ's layout). Throws sf::Error on a batch the model cannot take.
  virtual float loss_and_gradient(const Model& m, const Batch& b, float loss_weight) = 0;
  // The same loss, forward only (validation).
  virtual float loss(const Model& m, const Batch& b, float loss_weight) = 0;
  // (B·ℓ) −log P[target, position] of the last forward; 0 where a position has no target.
  virtual VecF position_losses() const = 0;
  // (table.total()) the last ∇loss(θ), aligned (see GptGradient::grad).
  virtual float* grad() = 0;
  virtual size_t grad_size() const = 0;
};

// A training algorithm as the paper prints it (13, 12 or 11), run one update at a time:
//   1 for i = 1, 2, …, N_epochs do
//   2   for n = 1, 2, …, N_data do
//         … the architecture's lines: the forward algorithm on example n and loss(θ) …
//   U     θ ← θ − η · ∇loss(θ)          (U = 6 in Algorithms 11 and 13, 10 in Algorithm 12)
// One call of step() runs one pass for the current (i, n), then advances it; running step()
// until done() is the whole algorithm, and θ̂ is model.theta.
//
// With a tracer, step() records the pass as a frame of the algorithm (indices i and n set):
// line 1 binds i, line 2 n, the architecture's lines bind what they compute (the forward
// algorithm's events nest under its line), and line U binds η, ‖∇loss(θ)‖, the norm of each
// tensor's gradient (a column, one row per tensor of the parameter table in table order) and,
// for models of at most kTraceCopyLimit parameters, for every tensor NAME of the table:
// "∇NAME", "NAME (before)" and "NAME (after)" (per-head tensors [H, rows, cols] as rows ×
// H·cols, the heads side by side). Without a tracer nothing is copied.
//
// Deviation from the paper, stated: when the loss or the gradient is not finite, θ is left as
// it was and the position does not advance (the caller decides what to do).
class PaperTraining {
 public:
  static constexpr size_t kTraceCopyLimit = 1'000'000;

  // The lines the loop itself traces: line 1 (for i ∈ [N_epochs]), line 2 (for n ∈ [N_data]) and
  // the update θ ← θ − η · ∇loss(θ), as `lines::` constants of the algorithm (11, 12 or 13).
  struct Lines {
    LineRef epoch, sequence, update;
  };
  PaperTraining(Lines lines, int N_data, int N_epochs);
  virtual ~PaperTraining() = default;
  int algorithm() const { return lines_.update.alg; }
  int update_line() const { return lines_.update.line; }  // U, the line θ ← θ − η · ∇loss(θ)
  int N_data() const { return N_data_; }
  int N_epochs() const { return N_epochs_; }
  bool done() const { return i_ > N_epochs_; }
  int i() const { return i_; }  // the next update's epoch, 1-based
  int n() const { return n_; }  // the next update's example, 1-based
  // Moves to epoch i, example n (a resumed run). Throws sf::Error when out of range.
  void seek(int i, int n);

  struct Update {
    float loss = 0;                    // the summed loss of example n
    int l = 0;                         // ℓ = length(x_n)
    int terms = 0;                     // the number of loss terms (ℓ − 1, or |T̃|)
    double grad_norm = 0;              // ‖∇loss(θ)‖
    std::vector<double> tensor_norms;  // ‖∇loss(θ)‖ of each tensor of the table, in table order
    bool finite = true;                // false: θ was not updated
  };
  // One pass for (i, n) with example data[n − 1]; updates model.theta with learning rate η.
  // `rng` draws what the algorithm draws (Algorithm 12's masks). Afterwards g.grad() holds
  // η·∇loss(θ) (see sgd_update).
  Update step(const std::vector<Example>& data, Model& model, float eta, const TrainOptions& opt, ModelGradient& g,
              Rng& rng, Tracer* tr = nullptr);

 protected:
  struct Loss {
    float loss = 0;
    int l = 0;
    int terms = 0;
  };
  // The architecture's lines between line 2 and the update, for example `ex`: loss(θ) and
  // ∇loss(θ) into g, with their trace events when tr is given (the forward algorithm traced).
  virtual Loss loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt, ModelGradient& g,
                                 Rng& rng, Tracer* tr) = 0;

 private:
  Lines lines_;
  int N_data_, N_epochs_;
  int i_ = 1, n_ = 1;
};

// Algorithm 13, DTraining (core/algorithms/alg13_dtraining.cpp): lines 3–5 are ℓ ← length(x_n),
// P(θ) ← DTransformer(x_n | θ) and loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t] (line 5
// binds the terms as a 1×(ℓ−1) row and their sum).
class DTraining : public PaperTraining {
 public:
  DTraining(int N_data, int N_epochs) : PaperTraining({lines::d_training::epoch, lines::d_training::sequence, lines::d_training::update}, N_data, N_epochs) {}

 protected:
  Loss loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt, ModelGradient& g, Rng& rng,
                         Tracer* tr) override;
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
  // Algorithm 12 (masked language modelling), both modes.
  double p_mask = 0.15;  // p_mask: each position becomes mask_token with this probability
  // BERT's rule, not the paper's: of the chosen positions 80% become mask_token, 10% a random
  // ordinary token, 10% stay unchanged (all are scored). Off: the paper's rule.
  bool bert_80_10_10 = false;
  // Practical mode, NOT the paper's rule: Algorithm 12's draw only at the answer's positions, those
  // after the first "=" (eos_token excluded); the question before it is never masked nor scored.
  // The fill-in measure (core/training/accuracy.hpp) asks for exactly these positions, and any set
  // of them is inferable from the rest (docs/training.md); a masked question letter is not.
  // Sequences without "=" are masked as the paper says.
  bool mask_answer = false;
  // Paper mode: the positions of T̃ in update k (1-based) are given_masks[k − 1] instead of
  // drawn (stepformer-cli train --masks FILE), so that other implementations can compare.
  std::vector<std::vector<int>> given_masks;
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

  // One update: paper mode, one example (the training algorithm, traced when tr is given);
  // practical mode, one minibatch (not a paper algorithm: tr is ignored). Throws sf::Error
  // when finished(). A non-finite loss or gradient leaves θ and the data position unchanged
  // and is returned with finite = false.
  StepInfo step(Tracer* tr = nullptr);
  const Architecture& arch() const { return arch_; }
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
  const PaperTraining& paper_position() const { return *paper_; }
  int64_t epoch() const { return epoch_; }   // practical mode: completed passes over the data
  size_t cursor() const { return cursor_; }  // practical mode: position in this pass's order
  const AdamState& adam() const { return adam_; }
  // The last practical minibatch as one Batch, made again from the sequences it picked: their
  // padding and loss targets (and, on one thread, BERT's masks as that update drew them); B = 0
  // before the first practical update. For the Training tab's padding view.
  Batch last_minibatch() const;

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
  // The generator of what update `step` (0-based) draws: a function of the data seed and the
  // step alone, so that a resumed run draws what an uninterrupted one would.
  Rng update_rng(int64_t step) const;

  Model model_;
  const Architecture& arch_;
  Dataset data_;
  TrainOptions opt_;
  std::vector<Example> train_, val_;  // tokenized: [bos_token, characters…, eos_token]
  int l_ = 0;    // minibatches are padded to this length (the longest sequence)
  int l_z_ = 0;  // and their contexts to this one (the longest context; 0 without contexts)
  std::vector<std::unique_ptr<Worker>> workers_;
  std::unique_ptr<PaperTraining> paper_;
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
