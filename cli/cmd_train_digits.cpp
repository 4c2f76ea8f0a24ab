// stepformer-cli train --recipe vit-digits: the vision transformer (arch "vit", not in the paper)
// trained on the 8×8 digits by digits_recipe() (core/training/digits.hpp): Algorithm 12's practical
// mode with the class as the target. Without --fold it trains on the 1,437 images before the test
// set (the committed assets/vit-digits.safetensors); with --fold K on the other four of five
// contiguous blocks of them, and prints block K's accuracy (the cross-validation of docs/vision.md).
// It never evaluates the held-out test set: `stepformer-cli classify` does, when asked.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <iostream>

#include "cli/commands.hpp"
#include "cli/common.hpp"
#include "core/io/checkpoint.hpp"
#include "core/training/digits.hpp"

namespace sf::cli {

int run_train_digits(const Args& args) {
  const auto started = std::chrono::steady_clock::now();
  for (const Option& o : train_command().spec.options)
    if (args.has(o.name) && o.name != "recipe" && o.name != "out" && o.name != "seed" && o.name != "steps" &&
        o.name != "threads" && o.name != "fold")
      throw UsageError("--recipe vit-digits gives the model, the data (the digits file) and the settings; it takes "
                       "only --out, --seed, --steps, --threads and --fold, not --" + o.name);
  DigitsRecipe r = digits_recipe();
  TrainOptions& opt = r.recipe.options;
  opt.steps = args.get_int("steps", opt.steps, 1, INT64_MAX / 2);
  opt.warmup = std::min(opt.warmup, opt.steps);
  opt.threads = static_cast<int>(args.get_int("threads", opt.threads, 1, 256));
  const int fold = static_cast<int>(args.get_int("fold", 0, 1, kDigitsFolds));
  const uint64_t seed = args.get_u64("seed", 1);
  opt.data_seed = seed;
  const std::string out = args.get("out");

  const std::vector<std::string> lines = read_digit_lines();
  Dataset data = fold > 0 ? digits_fold(lines, fold) : digits_dataset(lines, 0);
  const std::vector<std::string> val = data.val;
  const ModelConfig& c = r.recipe.config;
  std::cout << "model: " << config_summary(c) << ", " << thousands(ParamTable(c).total()) << " parameters\n";
  std::cout << "data: " << kDigitsSource << "; " << thousands(data.train.size()) << " training images"
            << (fold > 0 ? " (fold " + std::to_string(fold) + " of " + std::to_string(kDigitsFolds) + " held out: " +
                               thousands(val.size()) + " validation images)"
                         : " (all before the " + std::to_string(kDigitsTest) + " held-out test images)")
            << ", each also moved by up to " << r.shift << " pixel (" << (2 * r.shift + 1) * (2 * r.shift + 1)
            << " lines per image; not in the paper)\n";
  std::cout << "practical mode (Algorithm 12 with the class as the target): Adam, lr " << opt.lr << " (warmup "
            << opt.warmup << ", cosine to " << opt.min_lr << " at step " << opt.steps << "), batch " << opt.batch
            << ", " << opt.threads << " thread(s), seed " << seed << "\n"
            << std::flush;
  const int64_t every = std::max<int64_t>(1, opt.steps / 10);
  double first_loss = 0, last_loss = 0;
  const Model m = train_digits(r, std::move(data), seed, [&](const Trainer& t, const StepInfo& s) {
    if (t.steps_done() == 1) first_loss = s.loss;
    last_loss = s.loss;
    if (t.steps_done() % every == 0 || t.finished())
      std::cerr << "step " << t.steps_done() << "/" << opt.steps << "  train " << fixed(s.loss, 4) << std::endl;
  });
  save_checkpoint(out, m, {{"created_by", "stepformer-cli train --recipe vit-digits"}});
  const double seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - started).count();
  std::cout << "trained " << opt.steps << " steps, " << fixed(seconds, 1)
            << " s since the command started; train loss " << fixed(first_loss, 4) << " at the first update, " << fixed(last_loss, 4) << " at the last (−log P[class, 1]; a uniform guess "
            << "scores ln 10 = 2.3026)\n";
  if (fold > 0) {
    const double acc = digits_accuracy(m, val);
    std::cout << "fold " << fold << " validation accuracy: " << fixed(100 * acc, 2) << "% ("
              << static_cast<int>(std::lround(acc * static_cast<double>(val.size()))) << " of " << val.size() << ")\n";
  }
  std::cout << "wrote " << out << "\n";
  return 0;
}

}  // namespace sf::cli
