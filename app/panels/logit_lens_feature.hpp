// Inspector tab "Logit lens" (an interpretation tool, not in the paper; core/interpret/logit_lens.hpp,
// docs/interpretation.md): the lens P^l as a layers × positions grid for the open model on the current
// input (GPT: the prompt; BERT: the prompt, its [MASK] positions marked; the encoder-decoder: the decoder
// on z and x), and beside it the direct logit attribution of the predicted token at a chosen position.
// Scripted: --actions lens-position:t (1-based). --dump-state: "logit_lens".
#pragma once
#include <memory>

#include "app/feature.hpp"

namespace sf {

std::unique_ptr<Feature> make_logit_lens_feature();

}  // namespace sf
