// Inspector tab "Translation" (models whose output is a Translation: the encoder-decoder,
// Algorithm 15 EDInference): τ, the seed, the (labelled, not-in-the-paper) reuse of the
// encoder's output; x̂ one token at a time or until eos_token; each step's p and q; why the loop
// stopped; and the cross-attention of x̂ against z for any layer and head, read from the last
// step's traced EDTransformer run (Algorithm 4 under Algorithm 8 line 16).
#pragma once
#include <string>

#include "app/app.hpp"

namespace sf {

struct TranslationPanel {
  void draw(App& app);
  // The shown step's top-k / top-p cut as the bars label it ("" without a cut), for --dump-state.
  const std::string& cut_label() const { return cut_label_; }

 private:
  int step_ = 0;  // the step whose p and q are shown (1-based); 0: the last shown
  int l_ = 1, h_ = 1;
  std::string cut_label_;
};

}  // namespace sf
