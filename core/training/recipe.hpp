// Training recipes: a model size and the practical mode's settings (core/training/training.hpp)
// that a teacher can run live. "classroom" trains a small GPT to sort letters ("dcab=abcd") to
// ≥ 95% greedy validation accuracy (core/training/accuracy.hpp) in 1800 updates, 11 s of CPU time
// on the 2-core machine; "classroom-bert" and "classroom-ed" are the same settings for BERT (fill
// in the sorted half; masking only that half, p_mask = 0.5, d_mlp = 64, a 3000-update cosine:
// 2200–2350 updates) and the encoder-decoder (dates → ISO 8601: 400 updates).
// docs/training.md gives the measured wall times and the load they were measured under.
#pragma once
#include <cstdint>
#include <string>
#include <vector>

#include "core/model/config.hpp"
#include "core/training/training.hpp"

namespace sf {

struct Recipe {
  std::string name;         // "classroom", "classroom-bert", "classroom-ed"
  std::string task;         // the built-in task it is tuned for (make_task / make_pair_task)
  ModelConfig config;       // sizes and architecture; vocab empty: the task's characters
  TrainOptions options;     // practical mode: lr, warmup, cosine, batch, threads, steps (a cap)
  int64_t eval_every = 0;   // measure the greedy validation accuracy every this many updates
  double until_accuracy = 0;  // … and stop once it reaches this fraction
};

// The recipe of that name. Throws sf::Error naming the recipes for an unknown one.
Recipe recipe(const std::string& name);
const std::vector<std::string>& recipe_names();
// The classroom recipe of an architecture ("gpt", "bert", "ed": Architecture::name()).
Recipe classroom_recipe(const std::string& arch);

}  // namespace sf
