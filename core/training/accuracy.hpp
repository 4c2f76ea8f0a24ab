// Greedy validation accuracy: the fraction of validation examples a model gets exactly right when
// it answers greedily (τ = 0), one number a teacher can read ("sorts 475 of 500"). Not in the paper;
// its decoding is the paper's Algorithm 14 or 15 at τ = 0 (argmax at line 5), with the KV cache.
//
// What "exactly right" means depends on the architecture (docs/training.md):
//  - GPT (Algorithm 14): a sequence "question=answer" (the sort, reverse and add tasks) is cut after
//    its first "="; the prompt [bos_token, question…, "="] is continued greedily and must reproduce
//    [answer…, eos_token] token for token.
//  - BERT (the fill-in of core/algorithms/fill_in.hpp): each token of the answer (after the first
//    "=", eos_token excluded) becomes mask_token alone, the rest of the sequence given; one
//    ETransformer pass, argmax at that position; every one of them must be the answer's token.
//    (Masking the whole answer at once is far from what Algorithm 12 trains on, p_mask = 0.15.)
//  - Encoder-decoder (Algorithm 15): x̂ ← EDInference(z, θ̂) at τ = 0 must equal [bos_token, x…,
//    eos_token] (any pair task).
// A GPT or BERT sequence without "=" (copy, words, text) has no answer to check: it is not counted.
#pragma once
#include <string>
#include <vector>

#include "core/model/params.hpp"

namespace sf {

struct Accuracy {
  int correct = 0;  // examples answered exactly
  int total = 0;    // examples with an answer to check
  bool screen = false;  // only the first kScreenExamples were measured (screened_accuracy)
  double fraction() const { return total > 0 ? static_cast<double>(correct) / total : 0.0; }
};

// The greedy accuracy of `m` on the first `limit` of `val` (0: all), lines as in a Dataset
// ("dcab=abcd", or "z<TAB>x" for the encoder-decoder), the examples shared among `threads`
// threads (core/parallel: the same count on any number). Throws sf::Error when a line does not
// fit the model (a character its vocabulary lacks, longer than ℓ_max).
Accuracy greedy_accuracy(const Model& m, const std::vector<std::string>& val, size_t limit = 0, int threads = 1);

// The check of a run trained until an accuracy `until` (stepformer-cli train --until-accuracy, the
// Training tab's recipe; not in the paper), cheaper than greedy_accuracy on all of `val` at every
// check: first the first kScreenExamples of `val`, and only when those reach until − kScreenMargin,
// all of them. What a run stops at is thus always measured on all of `val` (total says which was
// measured). until ≤ 0, or `val` no larger than the screen: all of them.
// The margin: at 95% the standard error of a 100-example count is √(0.95 · 0.05 / 100) ≈ 2.2
// points, so a model at 95% on all 500 fails the screen (below 90%) only beyond 2 standard errors.
constexpr size_t kScreenExamples = 100;
constexpr double kScreenMargin = 0.05;
Accuracy screened_accuracy(const Model& m, const std::vector<std::string>& val, double until, int threads = 1);

// The token id of "=" in the model's vocabulary, which separates question and answer (0 when it is
// not one token).
int equals_token(const ModelConfig& c);

// What the model does right, for people, per architecture: "sorts" / "reverses" / "adds" (GPT, by
// task), "fills in" (BERT), "translates" (encoder-decoder); `task` is the Dataset's name.
std::string accuracy_verb(const ModelConfig& c, const std::string& task);

}  // namespace sf
