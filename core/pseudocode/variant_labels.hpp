// What a model's variants change in a listing, as labels (core/pseudocode/variants.hpp): shared by
// the paper's forward pseudocode as a model runs it (variants.cpp) and Stepformer's backward
// listings (backward_listings.cpp), so that a variant is named the same way in both. Internal to
// core/pseudocode. Pure data: no Eigen, no I/O.
#pragma once
#include <initializer_list>
#include <string>
#include <vector>

#include "core/model/config.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf::pseudo {

using Labels = std::vector<std::string>;

inline const std::string kSeed004 = " — encyclopedia article (seed 004)";
inline const std::string kTilde = "\u0303";  // X̃ = X + combining tilde, as the paper's text writes it

// What a configuration changes, as labels: "" keeps the paper's choice.
struct Variants {
  bool pre = false;            // the norm sits before each sub-layer
  std::string order;           // pre-LN/post-LN where it differs from the arch's paper choice
  std::string rms;             // RMSNorm
  std::string position;        // anything but a learned W_p
  bool rotary = false, alibi = false, no_w_p = false;
  std::string activation;      // anything but the arch's paper activation
  std::string act_name;        // the name written in the MLP line: GELU, GELU_tanh, ReLU
  bool swiglu = false;
  std::string tied;            // W_u = W_eᵀ
  std::string kv;              // H_kv < H
  std::string prefix;          // prefix-LM mask (GPT)
  std::string flash;           // "attention": "flash": Algorithm 5's heads run Algorithm 4-F (not in the paper)
  std::string token_type;      // + W_s[:, 1] on the embedding line
  std::string emb_norm;        // layer_norm(e_t | γ_emb, β_emb) on the embedding line
  std::string bias;            // + b_u 1ᵀ on the return line
  std::string window;          // sliding-window attention (issue 25): the self-attention masks ∧ [[|t − t′| ≤ w]]
  int w = 0;                   // its width w (0: off)
  bool relative = false;       // relative position bias (issue 25, T5): line 6 of Algorithm 4 adds B (in `position`)
};

Variants variants_of(const ModelConfig& c);

// 10000 → "10000", 500.5 → "500.5".
std::string number(double x);
// The sinusoid's base as the listing writes it: the configured base, or ℓ_max (the paper's).
std::string sinusoid_base(const ModelConfig& c);

// The non-empty labels, in order.
Labels labels(std::initializer_list<std::string> all);
// The labels joined with "; ".
std::string joined(const Labels& why);

// Replaces numbered line `n` of `a` with `text`, marked by `why`; nothing when no variant applies.
void rewrite(PseudoAlgorithm& a, int n, std::string text, const Labels& why);
// A line under the header, marked by `why`; nothing when `why` is empty.
void add_header(PseudoAlgorithm& a, const std::string& text, const std::string& why);

// The forward algorithm of an architecture: 10 (gpt), 9 (bert), 8 (ed); 0 for an unknown one.
int forward_algorithm(const std::string& arch);

}  // namespace sf::pseudo
