// The Trainer: both training modes of core/training.hpp, one update at a time, with the state a
// user interface observes and a checkpoint that resumes exactly.
#include <chrono>
#include <cmath>
#include <numeric>

#include "core/model/error.hpp"
#include "core/model/rng.hpp"
#include "core/parallel/parallel.hpp"
#include "core/training/training.hpp"

namespace sf {

namespace {

using Clock = std::chrono::steady_clock;

const char* kNotTrained = "was not written by training (it has no train.step): start a new run instead of resuming";

int64_t metadata_int(const std::map<std::string, std::string>& m, const std::string& key, const std::string& file) {
  const auto it = m.find(key);
  if (it == m.end()) throw Error(file + ": the checkpoint has no \"" + key + "\"");
  try {
    size_t used = 0;
    const long long v = std::stoll(it->second, &used);
    if (used != it->second.size()) throw std::invalid_argument(key);
    return v;
  } catch (const std::exception&) {
    throw Error(file + ": \"" + key + "\" is not a whole number (\"" + it->second + "\")");
  }
}

const ExtraTensor* find_extra(const Checkpoint& ckpt, const std::string& name) {
  const auto it = ckpt.extra.find(name);
  return it == ckpt.extra.end() ? nullptr : &it->second;
}

template <class V>
ExtraTensor flat(const V& v) {
  return {{static_cast<int64_t>(v.size())}, std::vector<float>(v.begin(), v.end())};
}

// Throws sf::Error when the model's vocabulary cannot tokenize the data: a vocabulary from
// ecosystem tokenizer files (GPT-2, BERT), or a word/BPE one that lacks the data's characters.
void check_vocabulary(const ModelConfig& c, const Dataset& data) {
  const std::string kind = c.tokenizer == TokenizerKind::Gpt2        ? "GPT-2's byte-level BPE"
                           : c.tokenizer == TokenizerKind::WordPiece ? "BERT's WordPiece"
                           : c.tokenizer == TokenizerKind::Word      ? "word-level"
                                                                     : "BPE";
  if (c.file_tokenizer())
    throw Error("this model's vocabulary is " + kind + ", read from its tokenizer files: Stepformer's training data (" +
                data.name + ") is tokenized with a vocabulary kept in the model's configuration, so this model "
                "cannot train on it; build a model with a character vocabulary (File › New model…, or "
                "`stepformer-cli init`) to train on the built-in tasks");
  const std::vector<std::string> missing = missing_characters(data.vocab, c);
  if (missing.empty()) return;
  std::string m;
  for (const auto& ch : missing) m += ch;
  if (c.tokenizer != TokenizerKind::Char)
    throw Error("this model's vocabulary is " + kind + ", not characters, and lacks " + std::to_string(missing.size()) +
                " character" + (missing.size() > 1 ? "s" : "") + " of the character data " + data.name + ": \"" + m +
                "\"; the built-in tasks are character-level: train a character model on them, or this model on text "
                "(`stepformer-cli train --text FILE --tokenizer word|bpe`)");
  throw Error("the model's vocabulary lacks " + std::to_string(missing.size()) + " character" +
              (missing.size() > 1 ? "s" : "") + " of the data " + data.name + ": \"" + m + "\"");
}

}  // namespace

const char* to_string(TrainMode m) { return m == TrainMode::Paper ? "paper" : "practical"; }

// One share of the minibatch: its own cache, workspace and gradient.
struct Trainer::Worker {
  Worker(const Architecture& arch, const ParamTable& table) : g(arch.gradient(table)) {}
  std::unique_ptr<ModelGradient> g;
  std::vector<size_t> pick;  // its share of the minibatch
  Batch batch;
  float loss = 0;
};

Trainer::Trainer(Model model, Dataset data, TrainOptions opt)
    : model_(std::move(model)),
      arch_(architecture(model_.config)),
      data_(std::move(data)),
      opt_(opt),
      paper_(arch_.paper_training(static_cast<int>(data_.train.size()), std::max(1, opt.epochs))) {
  check_options(opt_);
  check_vocabulary(model_.config, data_);
  train_ = arch_.examples(data_.train, model_.config);
  val_ = arch_.examples(data_.val, model_.config);
  for (const auto* set : {&train_, &val_})
    for (const Example& ex : *set) {
      l_ = std::max(l_, static_cast<int>(ex.x.size()));
      l_z_ = std::max(l_z_, static_cast<int>(ex.z.size()));
    }
  workers_.push_back(std::make_unique<Worker>(arch_, model_.table));
  order_ = epoch_order(0);
}

Trainer::~Trainer() = default;

void Trainer::check_options(const TrainOptions& o) const {
  if (!(o.lr > 0) || !std::isfinite(o.lr)) throw Error("the learning rate must be a number > 0");
  if (!(o.min_lr >= 0) || !std::isfinite(o.min_lr)) throw Error("the final learning rate must be a number ≥ 0");
  if (o.batch < 1) throw Error("the batch must hold at least one sequence");
  if (o.warmup < 0 || o.steps < 1) throw Error("steps must be ≥ 1 and warmup ≥ 0");
  if (!(o.adam.beta1 >= 0 && o.adam.beta1 < 1 && o.adam.beta2 >= 0 && o.adam.beta2 < 1 && o.adam.eps > 0))
    throw Error("Adam needs 0 ≤ β₁, β₂ < 1 and ε > 0");
  if (!(o.adam.weight_decay >= 0) || !(o.clip >= 0)) throw Error("weight decay and clipping must be ≥ 0");
  if (o.threads < 1 || o.threads > 256) throw Error("threads must be between 1 and 256");
  if (o.epochs < 1) throw Error("N_epochs must be at least 1");
  if (o.eval_sequences < 0) throw Error("the number of validation sequences must be ≥ 0");
  if (!(o.p_mask > 0 && o.p_mask < 1)) throw Error("p_mask must be between 0 and 1 (exclusive)");
}

Rng Trainer::update_rng(int64_t step) const {
  return Rng((opt_.data_seed + 0x51ED270B27A1F8D5ULL) * 0xD1B54A32D192ED03ULL + static_cast<uint64_t>(step));
}

std::vector<size_t> Trainer::epoch_order(int64_t epoch) const {
  std::vector<size_t> order(train_.size());
  std::iota(order.begin(), order.end(), size_t{0});
  Rng rng(opt_.data_seed * 0x9E3779B97F4A7C15ULL + static_cast<uint64_t>(epoch));
  for (size_t i = order.size(); i > 1; --i) std::swap(order[i - 1], order[rng.below(i)]);
  return order;
}

bool Trainer::finished() const { return opt_.mode == TrainMode::Paper ? paper_->done() : step_ >= opt_.steps; }

double Trainer::current_lr() const {
  if (opt_.mode == TrainMode::Paper) return opt_.lr;
  return scheduled_lr(step_ + 1, opt_.lr, opt_.min_lr, opt_.warmup, opt_.steps);
}

double Trainer::tokens_per_second() const { return seconds_ > 0 ? static_cast<double>(tokens_) / seconds_ : 0.0; }

StepInfo Trainer::step(Tracer* tr) {
  if (finished())
    throw Error(opt_.mode == TrainMode::Paper
                    ? "Algorithm " + std::to_string(paper_->algorithm()) + " has finished all " +
                          std::to_string(paper_->N_epochs()) + " epochs"
                    : "training has done all " + std::to_string(opt_.steps) + " steps");
  if (opt_.mode == TrainMode::Practical) return practical_step();
  const auto t0 = Clock::now();
  const double eta = opt_.lr;
  Rng rng = update_rng(step_);
  const PaperTraining::Update u = paper_->step(train_, model_, static_cast<float>(eta), opt_, *workers_[0]->g, rng, tr);
  StepInfo info;
  info.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  info.finite = u.finite;
  info.loss = u.loss;
  info.token_loss = u.terms > 0 ? u.loss / u.terms : 0.0;
  info.lr = eta;
  info.grad_norm = u.grad_norm;
  info.tokens = u.l;
  info.step = step_;
  if (!u.finite) return info;
  info.step = ++step_;
  grad_norms_ = u.tensor_norms;
  train_history_.push_back({step_, static_cast<float>(info.token_loss)});
  seconds_ += info.seconds;
  tokens_ += info.tokens;
  return info;
}

Batch Trainer::last_minibatch() const {
  Batch b;
  if (pick_.empty() || step_ == 0) return b;
  Rng rng = update_rng(step_ - 1);  // the generator the update drew from
  arch_.make_batch(model_.config, train_, pick_, l_, l_z_, opt_, rng, b);
  return b;
}

StepInfo Trainer::practical_step() {
  const auto t0 = Clock::now();
  // The next minibatch: the next `batch` sequences of this epoch's shuffled order.
  std::vector<size_t> next;  // the following epoch's order, once the minibatch reaches it
  int64_t epoch = epoch_;
  size_t cursor = cursor_;
  const std::vector<size_t>* order = &order_;
  pick_.clear();
  for (int k = 0; k < opt_.batch; ++k) {
    if (cursor == order->size()) {
      next = epoch_order(++epoch);
      order = &next;
      cursor = 0;
    }
    pick_.push_back((*order)[cursor++]);
  }
  // Split it across the workers (threads), each a contiguous share.
  const int T = std::min(opt_.threads, opt_.batch);
  while (static_cast<int>(workers_.size()) < T) workers_.push_back(std::make_unique<Worker>(arch_, model_.table));
  int targets = 0, tokens = 0;
  Rng rng = update_rng(step_);
  for (int w = 0; w < T; ++w) {
    const size_t lo = pick_.size() * w / T, hi = pick_.size() * (w + 1) / T;
    workers_[w]->pick.assign(pick_.begin() + lo, pick_.begin() + hi);
    arch_.make_batch(model_.config, train_, workers_[w]->pick, l_, l_z_, opt_, rng, workers_[w]->batch);
    targets += workers_[w]->batch.n_targets();
    tokens += workers_[w]->batch.real_tokens();
  }
  // The mean loss over the minibatch's loss terms: each term weighs 1/targets.
  const float weight = 1.0f / static_cast<float>(std::max(1, targets));
  auto work = [&](int w) {
    Worker& k = *workers_[w];
    k.loss = k.g->loss_and_gradient(model_, k.batch, weight);
  };
  // The shares on the persistent pool of core/parallel (no thread started per update).
  parallel_for_on(T, T, work);
  // ∇loss(θ) = Σ_w the workers' gradients, into worker 0's, added in worker order (so the same bits
  // however the sum is cut): the T threads each sum one slice of θ's entries. The slices are
  // multiples of 16 entries, so every slice of the aligned buffers starts aligned as the whole does.
  float* grad = workers_[0]->g->grad();
  const Eigen::Index n = static_cast<Eigen::Index>(workers_[0]->g->grad_size());
  const Eigen::Index slice = ((n + T - 1) / T + 15) / 16 * 16;
  parallel_for_on(T, T, [&](int part) {
    const Eigen::Index lo = std::min(n, part * slice), len = std::min(n, lo + slice) - lo;
    Eigen::Map<Eigen::ArrayXf> sum(grad + lo, len);
    for (int w = 1; w < T; ++w) sum += Eigen::Map<const Eigen::ArrayXf>(workers_[w]->g->grad() + lo, len);
  });
  float loss = 0;
  for (int w = 0; w < T; ++w) loss += workers_[w]->loss;
  StepInfo info;
  info.loss = loss;
  info.token_loss = loss;
  info.lr = current_lr();
  info.tokens = tokens;
  info.grad_norm = global_norm(grad, n);
  info.step = step_;
  info.finite = std::isfinite(loss) && std::isfinite(info.grad_norm);
  if (!info.finite) {
    info.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
    return info;
  }
  grad_norms_ = tensor_norms(model_.table, grad);
  clip_to_norm(grad, n, info.grad_norm, opt_.clip);
  adam_update(model_.table, model_.theta.data(), grad, info.lr, opt_.adam, adam_);
  epoch_ = epoch;
  cursor_ = cursor;
  if (!next.empty()) order_ = std::move(next);
  info.step = ++step_;
  train_history_.push_back({step_, loss});
  info.seconds = std::chrono::duration<double>(Clock::now() - t0).count();
  seconds_ += info.seconds;
  tokens_ += tokens;
  return info;
}

double Trainer::evaluate() {
  const size_t n =
      opt_.eval_sequences > 0 ? std::min(val_.size(), static_cast<size_t>(opt_.eval_sequences)) : val_.size();
  if (n == 0) return std::nan("");
  Worker& k = *workers_[0];
  double sum = 0;
  int targets = 0;
  // What validation draws (Algorithm 12's masks) is the same at every evaluation.
  Rng rng(opt_.data_seed ^ 0xA0761D6478BD642FULL);
  for (size_t lo = 0; lo < n; lo += static_cast<size_t>(opt_.batch)) {
    k.pick.clear();
    for (size_t i = lo; i < std::min(n, lo + static_cast<size_t>(opt_.batch)); ++i) k.pick.push_back(i);
    arch_.make_batch(model_.config, val_, k.pick, l_, l_z_, opt_, rng, k.batch);
    sum += k.g->loss(model_, k.batch, 1.0f);
    targets += k.batch.n_targets();
  }
  const double loss = sum / std::max(1, targets);
  if (std::isfinite(loss)) val_history_.push_back({step_, static_cast<float>(loss)});
  return loss;
}

void Trainer::set_lr(double lr) {
  TrainOptions o = opt_;
  o.lr = lr;
  set_options(o);
}

void Trainer::set_mode(TrainMode m) {
  TrainOptions o = opt_;
  o.mode = m;
  set_options(o);
}

void Trainer::set_options(const TrainOptions& opt) {
  check_options(opt);
  const bool reorder = opt.data_seed != opt_.data_seed;
  if (opt.epochs != paper_->N_epochs()) {
    std::unique_ptr<PaperTraining> p = arch_.paper_training(paper_->N_data(), opt.epochs);
    p->seek(std::min(paper_->i(), opt.epochs + 1), paper_->i() > opt.epochs ? 1 : paper_->n());
    paper_ = std::move(p);
  }
  opt_ = opt;
  if (reorder) order_ = epoch_order(epoch_);
}

void Trainer::reset(uint64_t seed) {
  init_params(model_.config, model_.table, seed, model_.theta.data());
  adam_ = AdamState{};
  paper_ = arch_.paper_training(paper_->N_data(), paper_->N_epochs());
  step_ = 0;
  epoch_ = 0;
  cursor_ = 0;
  order_ = epoch_order(0);
  train_history_.clear();
  val_history_.clear();
  grad_norms_.clear();
  seconds_ = 0;
  tokens_ = 0;
}

void Trainer::save(const std::string& path, std::map<std::string, std::string> metadata) const {
  std::map<std::string, ExtraTensor> extra;
  if (!adam_.m.empty()) {
    extra["optimizer.m"] = flat(adam_.m);
    extra["optimizer.v"] = flat(adam_.v);
  }
  metadata["optimizer.t"] = std::to_string(adam_.t);
  std::vector<float> loss, val_step, val_loss;
  for (const LossPoint& p : train_history_) loss.push_back(p.loss);
  for (const LossPoint& p : val_history_) {
    val_step.push_back(static_cast<float>(p.step));
    val_loss.push_back(p.loss);
  }
  if (!loss.empty()) extra["train.loss"] = flat(loss);
  if (!val_loss.empty()) {
    extra["train.val_step"] = flat(val_step);
    extra["train.val_loss"] = flat(val_loss);
  }
  metadata["train.step"] = std::to_string(step_);
  metadata["train.mode"] = to_string(opt_.mode);
  metadata["train.data"] = data_.name;
  metadata["train.data_seed"] = std::to_string(opt_.data_seed);
  metadata["train.epoch"] = std::to_string(epoch_);
  metadata["train.cursor"] = std::to_string(cursor_);
  metadata["train.paper_i"] = std::to_string(paper_->i());
  metadata["train.paper_n"] = std::to_string(paper_->n());
  save_checkpoint(path, model_, metadata, extra);
}

void Trainer::restore(const Checkpoint& ckpt) {
  const std::string file = "the checkpoint";
  const auto& md = ckpt.metadata;
  if (!md.count("train.step")) throw Error(file + " " + kNotTrained);
  if (to_json(ckpt.model.config) != to_json(model_.config))
    throw Error(file + " has another model configuration than this run");
  if (md.count("train.data") && md.at("train.data") != data_.name)
    throw Error(file + " was trained on " + md.at("train.data") + ", not on " + data_.name +
                ": resume with the same data");
  const int64_t step = metadata_int(md, "train.step", file);
  const int64_t epoch = metadata_int(md, "train.epoch", file);
  const int64_t cursor = metadata_int(md, "train.cursor", file);
  const int64_t paper_i = metadata_int(md, "train.paper_i", file);
  const int64_t paper_n = metadata_int(md, "train.paper_n", file);
  const int64_t adam_t = metadata_int(md, "optimizer.t", file);
  if (step < 0 || epoch < 0 || cursor < 0 || static_cast<size_t>(cursor) > train_.size() || adam_t < 0)
    throw Error(file + " holds an impossible training position");
  AdamState adam;
  const ExtraTensor* m = find_extra(ckpt, "optimizer.m");
  const ExtraTensor* v = find_extra(ckpt, "optimizer.v");
  if (m && v) {
    if (m->data.size() != model_.theta.size() || v->data.size() != model_.theta.size())
      throw Error(file + ": optimizer.m and optimizer.v must have one entry per parameter");
    adam.m.assign(m->data.begin(), m->data.end());
    adam.v.assign(v->data.begin(), v->data.end());
    adam.t = adam_t;
  }
  std::vector<LossPoint> train_history, val_history;
  if (const ExtraTensor* loss = find_extra(ckpt, "train.loss"))
    for (size_t k = 0; k < loss->data.size(); ++k)
      train_history.push_back({static_cast<int64_t>(k) + 1, loss->data[k]});
  const ExtraTensor* val_step = find_extra(ckpt, "train.val_step");
  const ExtraTensor* val_loss = find_extra(ckpt, "train.val_loss");
  if (val_step && val_loss) {
    if (val_step->data.size() != val_loss->data.size())
      throw Error(file + ": train.val_step and train.val_loss differ in length");
    for (size_t k = 0; k < val_loss->data.size(); ++k)
      val_history.push_back({static_cast<int64_t>(val_step->data[k]), val_loss->data[k]});
  }
  if (md.count("train.data_seed")) opt_.data_seed = static_cast<uint64_t>(metadata_int(md, "train.data_seed", file));
  paper_->seek(static_cast<int>(std::min<int64_t>(paper_i, paper_->N_epochs() + 1)),
               paper_i > paper_->N_epochs() ? 1 : static_cast<int>(paper_n));
  model_.theta = ckpt.model.theta;
  adam_ = std::move(adam);
  step_ = step;
  epoch_ = epoch;
  cursor_ = static_cast<size_t>(cursor);
  order_ = epoch_order(epoch_);
  train_history_ = std::move(train_history);
  val_history_ = std::move(val_history);
  grad_norms_.clear();
  seconds_ = 0;
  tokens_ = 0;
}

}  // namespace sf
