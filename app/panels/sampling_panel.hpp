// Inspector tab "Sampling" (Algorithm 14, DInference): τ, ℓ_gen, the seed and context
// trimming; buttons that trace a generation; the text so far; and, for each token generated
// in the traced run, the model's p and the sampled-from q ∝ p^{1/τ} over the vocabulary.
#pragma once
#include <cstddef>
#include <cstdint>

#include "app/app.hpp"

namespace sf {

struct SamplingPanel {
  void draw(App& app);

 private:
  int step_ = -1;                     // selected step of the traced run (0-based); -1: the last
  size_t generated_seen_ = SIZE_MAX;  // generated().size() when the selection was last reset
  size_t followed_ = SIZE_MAX;        // the shown event the selection last followed
  bool all_ = false;                  // every token of the vocabulary, not only the top 20 by p
};

}  // namespace sf
