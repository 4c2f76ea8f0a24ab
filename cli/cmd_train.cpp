// stepformer-cli train: train a model of any architecture on a built-in task, a text file, a file
// of sequences or (encoder-decoder) a file of pairs z<TAB>x, in the paper's mode (the model's
// training algorithm as printed: 13 DTraining, 12 ETraining or 11 EDTraining; one example at a
// time, summed loss, plain SGD) or the practical one (minibatches, mean loss, Adam(W), warmup +
// cosine, clipping). Writes checkpoints that --resume continues exactly; Ctrl+C saves one and
// exits with status 130.
#include <unistd.h>

#include <algorithm>
#include <charconv>
#include <chrono>
#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <iostream>
#include <nlohmann/json.hpp>
#include <optional>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/io/checkpoint.hpp"
#include "core/model/error.hpp"
#include "core/io/fileio.hpp"
#include "core/tokenizers/bpe.hpp"
#include "core/tokenizers/utf8.hpp"
#include "core/tokenizers/word.hpp"
#include "core/training/accuracy.hpp"
#include "core/training/digits.hpp"
#include "core/training/pair_tasks.hpp"
#include "core/training/recipe.hpp"
#include "core/training/training.hpp"

namespace sf::cli {

namespace {

std::string percent(double f) { return fixed(100 * f, 1) + "%"; }

volatile std::sig_atomic_t g_interrupted = 0;
extern "C" void on_sigint(int) { g_interrupted = 1; }

// For the tests: STEPFORMER_INJECT_NAN_AT=STEP poisons θ (W_u[1, 1], which every position of every
// architecture uses) just before update number STEP.
int64_t inject_nan_at() {
  const char* v = std::getenv("STEPFORMER_INJECT_NAN_AT");
  return v ? parse_int(v, "STEPFORMER_INJECT_NAN_AT", 1, INT64_MAX) : 0;
}

std::string duration(double seconds) {
  const long s = std::lround(std::max(0.0, seconds));
  char buf[32];
  if (s >= 3600)
    std::snprintf(buf, sizeof buf, "%ld:%02ld:%02ld", s / 3600, s / 60 % 60, s % 60);
  else
    std::snprintf(buf, sizeof buf, "%ld:%02ld", s / 60, s % 60);
  return buf;
}

// --config FILE.json, and whether it names its vocabulary (else the data's characters are used).
struct ConfigFile {
  ModelConfig config;
  bool has_vocab = false;
};
ConfigFile read_config(const Args& args) {
  ConfigFile f;
  if (!args.has("config")) return f;
  const std::string path = args.get("config");
  try {
    f.config = load_config_file(path);
    f.has_vocab = nlohmann::json::parse(read_file(path, size_t{64} << 20)).contains("vocab");
  } catch (const Error& e) {
    const std::string m = e.what();
    throw Error(m.find(path) == std::string::npos ? path + ": " + m : m);
  }
  return f;
}

// The data for a model of architecture `arch`: sequences, or pairs z<TAB>x when it reads a context.
// `task`: the recipe's task, used when no data is named.
Dataset make_data(const Args& args, const Architecture& arch, uint64_t seed, int l_max, const std::string& task) {
  TaskOptions t;
  t.seed = seed;
  t.max_chars = l_max - 2;  // room for bos_token and eos_token
  t.train_size = static_cast<int>(args.get_int("train-size", t.train_size, 1, 10'000'000));
  t.val_size = static_cast<int>(args.get_int("val-size", t.val_size, 0, 10'000'000));
  const bool pairs = arch.has_context();
  const std::string model = "this model (" + arch.title() + ")";
  if (pairs)
    for (const char* o : {"text", "sequences"})
      if (args.has(o))
        throw UsageError(std::string("--") + o + " gives single sequences, but " + model +
                         " trains on pairs (z, x): give --pairs FILE (lines z<TAB>x) or a --task of pairs");
  if (!pairs && args.has("pairs"))
    throw UsageError("--pairs is for a model with a context z (an encoder-decoder); " + model +
                     " trains on single sequences: give --sequences FILE");
  if (args.has("task") || (!task.empty() && !args.has("text") && !args.has("sequences") && !args.has("pairs"))) {
    const std::string name = args.get_or("task", task);
    return pairs ? make_pair_task(name, t) : make_task(name, t);
  }
  if (args.has("text")) return text_dataset(args.get("text"), t);
  if (args.has("pairs")) return pairs_dataset(args.get("pairs"), t.max_chars);
  return sequences_dataset(args.get("sequences"), t.max_chars);
}

// --masks FILE: line k holds the 1-based positions of T̃ in update k, space-separated (possibly
// none). Only the syntax is checked here; check_masks() checks the positions against the data.
std::vector<std::vector<int>> read_masks(const std::string& path) {
  std::vector<std::vector<int>> masks;
  std::istringstream lines(read_file(path, size_t{1} << 30));
  size_t k = 0;
  for (std::string line; std::getline(lines, line);) {
    ++k;
    if (!line.empty() && line.back() == '\r') line.pop_back();
    std::vector<int> positions;
    std::istringstream words(line);
    for (std::string w; words >> w;) {
      int p = 0;
      const auto [end, ec] = std::from_chars(w.data(), w.data() + w.size(), p);
      if (ec != std::errc() || end != w.data() + w.size())
        throw Error("--masks line " + std::to_string(k) + ": \"" + w + "\" is not a position (a whole number ≥ 1)");
      if (std::find(positions.begin(), positions.end(), p) != positions.end())
        throw Error("--masks line " + std::to_string(k) + ": position " + w + " is given twice (T̃ is a set)");
      positions.push_back(p);
    }
    masks.push_back(std::move(positions));
  }
  return masks;
}

// Every position of the updates the run makes lies in its sequence: update k trains on sequence
// n = (k − 1) mod N_data + 1 (Algorithm 12 takes x_1 … x_N_data in order, N_epochs times).
void check_masks(const std::vector<std::vector<int>>& masks, const std::vector<Example>& data, int epochs) {
  const size_t updates = static_cast<size_t>(epochs) * data.size();
  if (masks.size() < updates)
    throw Error("--masks has " + std::to_string(masks.size()) + " lines but the run makes " + std::to_string(updates) +
                " updates (N_epochs = " + std::to_string(epochs) + " × N_data = " + std::to_string(data.size()) +
                "): one line per update");
  for (size_t k = 0; k < updates; ++k) {
    const size_t n = k % data.size();
    const int l = static_cast<int>(data[n].x.size());
    for (int p : masks[k])
      if (p < 1 || p > l)
        throw Error("--masks line " + std::to_string(k + 1) + ": position " + std::to_string(p) +
                    " is outside sequence " + std::to_string(n + 1) + " (ℓ = " + std::to_string(l) + ")");
  }
}

// One line for the data's preview: a pair's z and x side by side.
std::string shown_example(const std::string& line) {
  std::string z, x;
  return split_pair(line, z, x) ? "z = \"" + z + "\", x = \"" + x + "\"" : "\"" + line + "\"";
}

// Options that have no meaning in the paper's mode are refused there, and vice versa.
void check_mode_options(const Args& args, bool paper) {
  const char* practical_only[] = {"steps", "batch", "warmup", "min-lr", "weight-decay", "clip", "threads"};
  if (paper) {
    for (const char* o : practical_only)
      if (args.has(o))
        throw UsageError(std::string("--") + o +
                         " does not apply to the paper's mode (--sgd): Algorithm 13 takes one sequence at a time, "
                         "sums its loss and updates θ ← θ − η·∇loss(θ) with a constant η");
  } else {
    if (args.has("epochs"))
      throw UsageError("--epochs is for the paper's mode (--sgd); the practical mode runs --steps updates");
    if (args.has("masks"))
      throw UsageError("--masks gives T̃ of each update of the paper's Algorithm 12: add --sgd");
  }
  if (args.has("mask-answer") && paper)
    throw UsageError("--mask-answer is for the practical mode (the paper's Algorithm 12 masks every position alike): "
                     "leave out --sgd");
  if (args.has("masks") && (args.has("p-mask") || args.has("bert-80-10-10")))
    throw UsageError("--masks gives T̃ itself (each of its positions becomes mask_token): leave out --p-mask and "
                     "--bert-80-10-10");
}

// The options of masked language modelling, only for a fill-in model.
void check_model_options(const Args& args, const Architecture& arch) {
  if (arch.output() == OutputKind::FillIn) return;
  const std::string why = "it is for masked language modelling (Algorithm 12), and this model (" + arch.title() +
                          ") trains by " + algorithm_name(arch.training_algorithm());
  for (const char* o : {"p-mask", "bert-80-10-10", "mask-answer", "masks"}) refuse_option(args, o, why);
}

// What the run does, in the paper's words where it is the paper's algorithm.
std::string mode_line(const Architecture& arch, const TrainOptions& opt, bool paper, const std::string& masks) {
  const int alg = arch.training_algorithm();
  std::ostringstream s;
  if (paper)
    s << "mode: the paper's " << algorithm_name(alg) << ", as printed: one example at a time, n = 1 … N_data in "
      << "order, N_epochs = " << opt.epochs << ", " << paper_line(alg, "loss(θ) =") << " (summed), θ ← θ − η·∇loss(θ) "
      << "with η = " << opt.lr;
  else
    s << "mode: practical (§7–8; not the paper's " << algorithm_name(alg) << "): minibatches of " << opt.batch
      << ", " << paper_line(alg, "loss(θ) =") << " as a mean per term (not summed), Adam"
      << (opt.adam.weight_decay > 0 ? "W (λ = " + fixed(opt.adam.weight_decay, 4) + ")" : "") << ", lr " << opt.lr
      << " (warmup " << opt.warmup << ", cosine to " << opt.min_lr << " at step " << opt.steps << "), clip "
      << opt.clip << ", " << opt.threads << " thread" << (opt.threads > 1 ? "s" : "");
  if (arch.output() == OutputKind::FillIn) {
    if (!masks.empty())
      s << "; T̃ of update k from line k of " << masks;
    else if (opt.bert_80_10_10)
      s << "; p_mask = " << opt.p_mask
        << ", BERT's 80-10-10 rule (not the paper's): of the chosen positions 80% become mask_token, 10% a random "
           "token, 10% stay";
    else
      s << "; p_mask = " << opt.p_mask << " (each position becomes mask_token with probability p_mask)";
    if (opt.mask_answer) s << ", only the answer's positions (after \"=\"; not the paper's rule)";
  }
  return s.str();
}

class Progress {
 public:
  Progress(int64_t total) : total_(total), tty_(::isatty(STDERR_FILENO) == 1) {}
  // TTY: one line rewritten in place (at most ~10 times a second); otherwise a line when `force`.
  void show(const Trainer& tr, double val, bool force) {
    const auto now = std::chrono::steady_clock::now();
    if (tty_ && !force && now - last_ < std::chrono::milliseconds(100)) return;
    if (!tty_ && !force) return;
    last_ = now;
    const int64_t done = tr.steps_done() - first_;
    const double elapsed = std::chrono::duration<double>(now - start_).count();
    const double left =
        done > 0 ? elapsed / static_cast<double>(done) * static_cast<double>(total_ - tr.steps_done()) : 0;
    std::ostringstream s;
    s << "step " << tr.steps_done() << "/" << total_;
    if (!tr.train_history().empty()) s << "  train " << fixed(tr.train_history().back().loss, 4);
    if (!std::isnan(val)) s << "  val " << fixed(val, 4);
    s << "  " << thousands(static_cast<size_t>(tr.tokens_per_second())) << " tok/s  " << duration(left) << " left";
    std::string line = s.str();
    if (tty_) {
      if (line.size() < width_) line.append(width_ - line.size(), ' ');
      width_ = s.str().size();
      std::cerr << '\r' << line << std::flush;
    } else {
      std::cerr << line << std::endl;
    }
  }
  void finish() {
    if (tty_) std::cerr << std::endl;
  }
  bool tty() const { return tty_; }
  void start(int64_t first) {
    first_ = first;
    start_ = std::chrono::steady_clock::now();
  }

 private:
  int64_t total_, first_ = 0;
  bool tty_;
  size_t width_ = 0;
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now(), last_{};
};

// --tokenizer word|bpe: the vocabulary built from the text of --text (paper §4): its words, most
// frequent first, or BPE's pieces and merges, learned from it; at most --vocab-size entries.
ModelConfig text_vocabulary(const Args& args, const Dataset& data, ModelConfig c) {
  const std::string kind = args.get("tokenizer");
  const int size = static_cast<int>(args.get_int("vocab-size", kind == "word" ? 2000 : 256, 2, 1'000'000));
  std::string corpus;
  for (const auto* part : {&data.train, &data.val})
    for (const std::string& line : *part) corpus += line + "\n";
  if (kind == "bpe") return train_bpe(corpus, size, c);
  c.tokenizer = TokenizerKind::Word;
  c.vocab = build_word_vocab(corpus, size);
  return c;
}

int run_train(const Args& args) {
  const auto started = std::chrono::steady_clock::now();
  if (args.get_or("recipe", "") == kDigitsRecipe) return run_train_digits(args);
  if (args.has("fold")) throw UsageError("--fold is the cross-validation of --recipe vit-digits");
  // Usage mistakes first, before any file is read.
  const std::optional<Recipe> rec = args.has("recipe") ? std::optional<Recipe>(recipe(args.get("recipe"))) : std::nullopt;
  if (rec) {
    for (const char* o : {"config", "model", "sgd"})
      if (args.has(o))
        throw UsageError(std::string("--recipe gives the model and the practical mode's settings: leave out --") + o);
  } else {
    args.require_one_of({"task", "text", "sequences", "pairs"});
  }
  if (args.has("tokenizer")) {
    const std::string kind = args.get("tokenizer");
    if (kind != "word" && kind != "bpe") throw UsageError("--tokenizer must be word or bpe, not \"" + kind + "\"");
    if (!args.has("text")) throw UsageError("--tokenizer builds the vocabulary from the text of --text FILE; give --text");
    if (args.has("model") || args.has("resume"))
      throw UsageError("--tokenizer builds a new vocabulary: it goes with a new model (--config or none), not --model or --resume");
  }
  if (args.has("vocab-size") && !args.has("tokenizer")) throw UsageError("--vocab-size goes with --tokenizer word|bpe");
  if (args.has("config") && args.has("model")) throw UsageError("give only one of --config and --model");
  const bool paper = args.has("sgd");
  check_mode_options(args, paper);
  TrainOptions opt;
  opt.mode = paper ? TrainMode::Paper : TrainMode::Practical;
  // A recipe's settings are the defaults; an option given explicitly overrides them.
  const TrainOptions& r = rec ? rec->options : opt;
  opt.lr = args.get_double("lr", rec ? r.lr : 1e-3, 1e-12, 1e6);
  opt.steps = args.get_int("steps", rec ? r.steps : 2000, 1, INT64_MAX / 2);
  opt.batch = static_cast<int>(args.get_int("batch", rec ? r.batch : 16, 1, 1'000'000));
  opt.warmup = args.get_int("warmup", rec ? r.warmup : std::min<int64_t>(100, opt.steps / 10), 0, INT64_MAX / 2);
  opt.min_lr = args.get_double("min-lr", rec && !args.has("lr") ? r.min_lr : opt.lr / 10, 0, 1e6);
  opt.adam.weight_decay = args.get_double("weight-decay", 0.0, 0.0, 1e6);
  opt.clip = args.get_double("clip", 1.0, 0.0, 1e12);
  opt.threads = static_cast<int>(args.get_int("threads", rec ? r.threads : 1, 1, 256));
  opt.epochs = static_cast<int>(args.get_int("epochs", 1, 1, 1'000'000'000));
  opt.p_mask = args.get_double("p-mask", rec ? r.p_mask : 0.15, 0.0, 1.0);
  if (!(opt.p_mask > 0 && opt.p_mask < 1)) throw UsageError("--p-mask: p_mask must lie strictly between 0 and 1");
  opt.bert_80_10_10 = args.has("bert-80-10-10");
  opt.mask_answer = args.has("mask-answer") || (rec && r.mask_answer);
  const int64_t eval_every = args.get_int("eval-every", rec ? rec->eval_every : 100, 0, INT64_MAX / 2);
  const double until_accuracy = args.get_double("until-accuracy", rec ? rec->until_accuracy : 0.0, 0.0, 1.0);
  if (args.has("until-accuracy") && !(until_accuracy > 0))
    throw UsageError("--until-accuracy: give a fraction in (0, 1], e.g. 0.95");
  if (until_accuracy > 0 && eval_every == 0)
    throw UsageError("--until-accuracy checks the accuracy every --eval-every steps: give --eval-every N ≥ 1");
  if (until_accuracy > 0 && paper)
    throw UsageError("--until-accuracy is for the practical mode: leave out --sgd");
  const uint64_t seed = args.get_u64("seed", 1);
  opt.data_seed = seed;
  const std::string out = args.get("out");
  const int64_t nan_at = inject_nan_at();

  // The model: the checkpoint of --resume, the one of --model, or --config (or the built-in
  // configuration) freshly initialised with --seed.
  std::optional<Checkpoint> resumed;
  std::optional<Model> model;
  ConfigFile config;
  if (args.has("resume"))
    resumed = load_checkpoint(args.get("resume"));
  else if (args.has("model"))
    model = std::move(load_model(args.get("model")).checkpoint.model);
  else if (rec)
    config.config = rec->config;  // no vocabulary: the data's characters
  else
    config = read_config(args);
  const ModelConfig& chosen = resumed ? resumed->model.config : model ? model->config : config.config;
  const Architecture& arch = architecture(chosen);
  check_model_options(args, arch);
  const std::vector<std::vector<int>> masks = args.has("masks") ? read_masks(args.get("masks")) : std::vector<std::vector<int>>{};
  const Dataset data = make_data(args, arch, seed, chosen.l_max, rec ? rec->task : "");
  if (!resumed && !model) {
    if (args.has("tokenizer"))
      config.config = text_vocabulary(args, data, config.config);
    else if (!config.has_vocab)
      config.config.vocab = data.vocab;
    const std::string why = validate(config.config);
    if (!why.empty()) throw Error("config: " + why);
    model = Model::initialised(config.config, seed);
  }
  Trainer trainer(resumed ? resumed->model : std::move(*model), data, opt);
  if (resumed) trainer.restore(*resumed);
  const ModelConfig& c = trainer.model().config;
  if (args.has("masks")) {  // every line checked before the first update
    check_masks(masks, arch.examples(data.train, c), opt.epochs);
    opt.given_masks = masks;
    trainer.set_options(opt);
  }

  std::cout << "model: " << config_summary(c) << ", " << thousands(trainer.model().theta.size()) << " parameters\n";
  std::cout << "data: " << data.name << ": " << data.description << "; " << thousands(data.train.size())
            << " training and " << thousands(data.val.size())
            << (arch.has_context() ? " validation pairs (z, x), z and x each [bos_token, characters…, eos_token]\n"
                                   : " validation sequences, each [bos_token, characters…, eos_token]\n");
  for (const auto& ex : data.preview(3)) std::cout << "  e.g. " << shown_example(ex) << "\n";
  std::cout << mode_line(arch, opt, paper, args.get_or("masks", "")) << "\n";
  if (resumed) std::cout << "resuming " << args.get("resume") << " at step " << trainer.steps_done() << "\n";
  if (until_accuracy > 0)
    std::cout << "until " << percent(until_accuracy) << " greedy validation accuracy (docs/training.md), checked every "
              << eval_every << " steps on " << data.val.size() << " validation examples\n";
  std::cout << std::flush;
  const std::string verb = accuracy_verb(c, data.name);
  bool reached = false;

  const int64_t total = paper ? static_cast<int64_t>(opt.epochs) * static_cast<int64_t>(data.train.size()) : opt.steps;
  Progress progress(total);
  progress.start(trainer.steps_done());
  g_interrupted = 0;
  const auto previous = std::signal(SIGINT, on_sigint);
  int64_t saved_at = -1;  // the step of the last checkpoint written to --out
  const std::map<std::string, std::string> md{{"created_by", "stepformer-cli train"}};
  double val = trainer.val_history().empty() ? std::nan("") : trainer.val_history().back().loss;
  double train_seconds = 0;
  int64_t train_tokens = 0;

  while (!trainer.finished()) {
    if (g_interrupted) break;
    if (trainer.steps_done() + 1 == nan_at) trainer.model().theta[trainer.model().table.find("W_u")->offset] = NAN;
    const StepInfo info = trainer.step();
    if (!info.finite) {
      progress.finish();
      std::signal(SIGINT, previous);
      throw Error("the loss became " + std::string(std::isnan(info.loss) ? "NaN" : "infinite") + " at step " +
                  std::to_string(info.step + 1) + " (the gradient norm is " + fixed(info.grad_norm, 4) +
                  "); training stopped without that update. " +
                  (saved_at >= 0 ? out + " holds the last good checkpoint, of step " + std::to_string(saved_at)
                                 : "No checkpoint had been written yet") +
                  ". A smaller --lr, or --clip, may help.");
    }
    train_seconds += info.seconds;
    train_tokens += info.tokens;
    const bool eval_now = eval_every > 0 && trainer.steps_done() % eval_every == 0;
    if (eval_now) {
      val = trainer.evaluate();
      trainer.save(out, md);
      saved_at = trainer.steps_done();
    }
    progress.show(trainer, val, eval_now);
    if (eval_now && until_accuracy > 0) {
      const Accuracy a = screened_accuracy(trainer.model(), data.val, until_accuracy, opt.threads);
      if (a.total == 0)
        throw Error("--until-accuracy: the validation data has no answers to check (docs/training.md: a GPT or BERT "
                    "sequence needs a \"=\", e.g. the sort, reverse and add tasks)");
      const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
      reached = a.fraction() >= until_accuracy;
      progress.finish();
      std::cout << "step " << trainer.steps_done() << ": greedy validation accuracy " << percent(a.fraction()) << " ("
                << verb << " " << a.correct << " of " << (a.screen ? "the first " : "") << a.total << "), "
                << fixed(seconds, 1) << " s\n";
      if (reached)
        std::cout << "reached " << percent(until_accuracy) << ": " << verb << " " << a.correct << " of " << a.total
                  << " validation examples after " << trainer.steps_done() << " updates, " << fixed(seconds, 1)
                  << " s since the command started\n";
      std::cout << std::flush;
      if (reached) break;
    }
  }
  std::signal(SIGINT, previous);
  if (g_interrupted) {
    trainer.save(out, md);
    progress.finish();
    std::cerr << "stepformer-cli: interrupted at step " << trainer.steps_done() << ": saved " << out
              << "; continue with the same command and --resume " << out << std::endl;
    return 130;
  }
  const bool final_eval = saved_at != trainer.steps_done();
  if (final_eval) {
    val = trainer.evaluate();
    trainer.save(out, md);
  }
  if (final_eval || progress.tty()) progress.show(trainer, val, true);
  progress.finish();

  std::cout << "trained " << trainer.steps_done() << " steps";
  if (!trainer.train_history().empty())
    std::cout << "; last train loss " << fixed(trainer.train_history().back().loss, 4);
  if (!std::isnan(val)) std::cout << ", validation loss " << fixed(val, 4);
  std::cout << " (mean −log P per predicted token; a uniform guess scores ln N_V = " << fixed(std::log(c.N_V()), 4)
            << ")\n";
  std::cout << "tokens/s: " << thousands(static_cast<size_t>(train_seconds > 0 ? train_tokens / train_seconds : 0))
            << " (" << thousands(static_cast<size_t>(train_tokens)) << " tokens in " << duration(train_seconds)
            << " of training)\n";
  if (until_accuracy > 0 && !reached)
    std::cout << "did not reach " << percent(until_accuracy) << " greedy validation accuracy in " << trainer.steps_done()
              << " steps\n";
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace

Command train_command() {
  CommandSpec s;
  s.name = "train";
  s.summary = "Train a model: its paper algorithm (--sgd: 13 GPT, 12 BERT, 11 encoder-decoder) or minibatches.";
  s.synopsis =
      "[--recipe NAME | --config FILE.json | --model IN.safetensors | --resume CKPT] (--task NAME | --text FILE | --sequences FILE | "
      "--pairs FILE) --out OUT.safetensors [options]";
  s.description =
      "Every training sequence is tokenized as the paper's §4 says, [bos_token, characters…, eos_token]; an "
      "encoder-decoder trains on pairs (z, x), both so tokenized. What the model learns is its architecture's: GPT "
      "predicts x[t+1] from x[1:t] (Algorithm 13), BERT predicts the masked tokens of x (Algorithm 12), the "
      "encoder-decoder predicts x[t+1] from x[1:t] and z (Algorithm 11).\n"
      "The paper's mode (--sgd) is the training algorithm as printed: for i = 1 … N_epochs, for n = 1 … N_data in "
      "order, the summed loss of example n and θ ← θ − η·∇loss(θ). The practical mode (the default) is what §7–8 "
      "say is done instead: minibatches (sequences padded to one length), the mean loss per term, Adam (AdamW with "
      "--weight-decay), linear warmup then cosine decay of the learning rate, and clipping of the gradient norm.\n"
      "A progress line on stderr shows the step, the train and validation loss (mean −log P per predicted token), "
      "tokens/s and the time left. Every --eval-every steps the validation loss is measured and a checkpoint is "
      "written to --out (atomically), with the optimizer state and the loss history. Ctrl+C writes a checkpoint and "
      "exits with status 130; the same command with --resume OUT continues exactly where it stopped. A NaN or "
      "infinite loss stops training with a message naming the step; --out then holds the last good checkpoint.";
  std::string pair_tasks;
  for (const std::string& t : pair_task_names()) pair_tasks += (pair_tasks.empty() ? "" : ", ") + t;
  s.options = {
      {"config", "FILE.json",
       "A model configuration (see stepformer-cli help init; its \"arch\" picks the architecture), freshly "
       "initialised with --seed. Without a \"vocab\" key, the vocabulary is the data's characters. Default: the "
       "built-in configuration (GPT) with the data's vocabulary."},
      {"model", "IN.safetensors", "Continue training this model (its vocabulary must hold the data's characters)."},
      {"resume", "CKPT",
       "Continue an interrupted run from its checkpoint: θ, the optimizer state (Adam's m, v and step), the data "
       "position and the loss history. Give the same data and options as the first run; the model comes from "
       "CKPT (--config and --model are not read)."},
      {"task", "NAME",
       "A built-in task, generated by --seed. For GPT and BERT: sort (\"dcab=abcd\"), reverse (\"abcd=dcba\"), copy "
       "(a repeated random pattern, \"xkqxkq…\"), add (\"12+34=46\"), words (the lowercase words of "
       "/usr/share/dict/words, package wamerican). For the encoder-decoder, pairs (z, x): " +
           pair_tasks + ". 10% or --val-size examples are held out for validation."},
      {"text", "FILE",
       "GPT, BERT: text from a UTF-8 file: each line is a sequence (long lines cut to ℓ_max − 2 characters); the "
       "vocabulary is the file's characters (or its words or BPE pieces: --tokenizer). 10% of the lines are held "
       "out."},
      {"tokenizer", "word|bpe",
       "With --text and a new model: tokenize the text by words (a vocabulary of the file's most frequent words, "
       "[UNK] for the rest) or by BPE trained on the file (its characters, then merges of the most frequent "
       "pairs), instead of characters (paper §4; docs/tokenizers.md). The vocabulary is stored in the checkpoint."},
      {"vocab-size", "N",
       "With --tokenizer: the most words (with [UNK]) or BPE pieces (characters and merged pieces) of the "
       "vocabulary; N_V adds the three special tokens. Default: 2000 words, 256 BPE pieces."},
      {"sequences", "FILE",
       "GPT, BERT: each line of FILE is one training sequence x_n, taken in file order (none held out): the data "
       "of the paper's Algorithms 13 and 12."},
      {"pairs", "FILE",
       "Encoder-decoder: each line of FILE is one pair z<TAB>x (context, then target), in file order (none held "
       "out): the data of the paper's Algorithm 11."},
      {"out", "OUT.safetensors", "Where the trained model (and the checkpoints along the way) are written.", true},
      {"seed", "S",
       "Seed of the task's data, of the initialisation, of the minibatch order and of BERT's masks. Default: 1."},
      {"sgd", "",
       "The paper's mode: the model's training algorithm (13, 12 or 11) with plain SGD, one example at a time, the "
       "summed loss; run --epochs passes over the data."},
      {"epochs", "N", "N_epochs of the paper's mode (--sgd). Default: 1."},
      {"lr", "η", "The learning rate: the constant η of --sgd, or Adam's peak learning rate. Default: 0.001."},
      {"p-mask", "p",
       "BERT (Algorithm 12): p_mask, the probability that a position becomes mask_token, in (0, 1). Default: 0.15."},
      {"bert-80-10-10", "",
       "BERT's rule, not the paper's: of the positions chosen with probability p_mask, 80% become mask_token, 10% a "
       "random token and 10% stay as they are; all of them are scored. Default: the paper's rule (all become "
       "mask_token)."},
      {"mask-answer", "",
       "BERT, practical mode, not the paper's rule: p_mask draws only at the answer's positions, after the first "
       "\"=\" (the positions the fill-in accuracy asks for; docs/training.md). Default: off, every position "
       "(on in the classroom-bert recipe)."},
      {"masks", "FILE",
       "BERT, paper mode (--sgd): T̃ given instead of drawn. Line k holds the 1-based positions masked in the k-th "
       "update (sequence n = (k − 1) mod N_data + 1), space-separated, possibly none; one line per update, "
       "N_epochs·N_data in all. The whole file is checked before training."},
      {"steps", "N", "Practical mode: the number of updates (minibatches). Default: 2000."},
      {"batch", "B", "Practical mode: examples per minibatch. Default: 16."},
      {"warmup", "N", "Practical mode: updates of linear warmup of the learning rate. Default: min(100, steps/10)."},
      {"min-lr", "η_min",
       "Practical mode: the learning rate the cosine decays to at the last step (equal to --lr: constant after "
       "warmup). Default: lr/10."},
      {"weight-decay", "λ",
       "Practical mode: AdamW's decoupled weight decay on the weight matrices (not on biases, γ or β). Default: 0."},
      {"clip", "C", "Practical mode: clip the gradient's global norm to C (0: no clipping). Default: 1."},
      {"eval-every", "N",
       "Measure the validation loss and write a checkpoint every N steps (0: only at the end). Default: 100."},
      {"threads", "T", "Practical mode: split each minibatch across T threads. Default: 1."},
      {"recipe", "NAME",
       "A small model trained until it answers 95% of the validation examples (docs/training.md: the times "
       "measured): classroom (a small GPT on sort), classroom-bert (BERT on "
       "sort) or classroom-ed (the encoder-decoder on dates). It gives the model (L = 2, H = 4, d_e = 32, "
       "d_attn = d_mid = 8, d_mlp = 128, ℓ_max = 32, the task's characters), the practical mode's settings (lr 0.01 "
       "with 50 warmup updates and a cosine to 0.001 at step 2000, batch 32, 2 threads), --eval-every 50 and "
       "--until-accuracy 0.95; classroom-bert: d_mlp = 64, the cosine to step 3000, p_mask = 0.5 on the answer "
       "only (--mask-answer). --task defaults to the recipe's. Options given explicitly override the recipe's. "
       "vit-digits: the vision transformer on the 8×8 digits (docs/vision.md: arch \"vit\", not in the paper; the "
       "recipe of assets/vit-digits.safetensors), trained on the 1,437 images before the held-out test set; it "
       "takes only --out, --seed, --steps, --threads and --fold."},
      {"fold", "K",
       "With --recipe vit-digits: cross-validation. The 1,437 images before the test set are cut into 5 contiguous "
       "blocks; train on all but block K (1 … 5) and print block K's accuracy. Default: train on all 1,437."},
      {"until-accuracy", "A",
       "Practical mode: at every --eval-every step also measure the greedy validation accuracy (docs/training.md: "
       "GPT continues \"dcab=\" at τ = 0 and must write \"abcd\" and eos_token; BERT fills in every masked letter "
       "after \"=\"; the encoder-decoder's Algorithm 15 must write x exactly), print it with the wall time since "
       "the command started, and stop once it is at least A (a fraction in (0, 1]). Not to spend time on a model "
       "far from A: the first 100 validation examples are measured first, and all of them only when those reach "
       "A − 0.05 (the line then says \"of the first 100\"); reaching A is always measured on all. Default: off "
       "(a recipe: 0.95)."},
      {"train-size", "N", "Built-in tasks: the number of training examples generated. Default: 10000."},
      {"val-size", "N", "Built-in tasks: the number of validation examples generated. Default: 500."},
  };
  s.examples =
      "  stepformer-cli train --recipe classroom --task sort --out sort.safetensors\n"
      "  stepformer-cli train --recipe classroom-ed --out ed.safetensors\n"
      "  stepformer-cli train --recipe vit-digits --out vit.safetensors\n"
      "  stepformer-cli train --config assets/default-config.json --task sort --steps 1500 --out sort.safetensors\n"
      "  stepformer-cli train --model IN.safetensors --sequences data.txt --sgd --lr 0.01 --epochs 3 --out "
      "OUT.safetensors\n"
      "  stepformer-cli train --model BERT.safetensors --sequences data.txt --sgd --lr 0.01 --epochs 1 --masks "
      "masks.txt --out OUT.safetensors\n"
      "  stepformer-cli train --model ED.safetensors --pairs pairs.tsv --sgd --lr 0.01 --epochs 2 --out "
      "OUT.safetensors\n"
      "  stepformer-cli train --text corpus.txt --steps 5000 --out text.safetensors\n"
      "  stepformer-cli train --text corpus.txt --tokenizer bpe --vocab-size 300 --steps 5000 --out bpe.safetensors\n"
      "  stepformer-cli train --task sort --steps 1500 --out sort.safetensors --resume sort.safetensors\n";
  return {s, run_train};
}

}  // namespace sf::cli
