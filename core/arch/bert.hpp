// The paper's BERT: Algorithm 9 (ETransformer, encoder-only, post-LN, Mask ≡ 1), trained by
// Algorithm 12 (ETraining, masked language modelling), used by filling in [MASK] positions
// (core/algorithms/fill_in.hpp; the paper prints no algorithm for that).
#pragma once
#include "core/arch/architecture.hpp"
#include "core/training/training.hpp"

namespace sf {

class BertArchitecture : public Architecture {
 public:
  std::string name() const override { return "bert"; }
  std::string title() const override { return "BERT: encoder-only transformer"; }
  int forward_algorithm() const override { return 9; }
  int training_algorithm() const override { return 12; }
  OutputKind output() const override { return OutputKind::FillIn; }
  std::vector<std::string> config_keys() const override;
  std::string validate(const ModelConfig& c) const override;
  void build_table(const ModelConfig& c, ParamTable& table) const override;
  MatF forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr, const MHAttentionFn<float>& attn,
               const Patches* patches) const override;
  std::vector<Example> examples(const std::vector<std::string>& lines, const ModelConfig& c) const override;
  // Algorithm 12 lines 4–7 for each picked sequence: x̃ (padded to ℓ) in b.tokens, and the target
  // x[t] at each chosen position t (0 elsewhere), with c's own mask_token (draw_mask). Throws
  // sf::Error when the model has no mask token.
  void make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick, int l,
                  int l_z, const TrainOptions& opt, Rng& rng, Batch& b) const override;
  std::unique_ptr<ModelGradient> gradient(const ParamTable& table) const override;
  std::unique_ptr<PaperTraining> paper_training(int N_data, int N_epochs) const override;
};

// Algorithm 9's parameters after line 2, shared by BERT and the vision transformer (whose body is
// BERT's, bound by bind_bert): for l ∈ [L]: W_l, γ¹_l, β¹_l, γ²_l, β²_l, the MLP; pre-LN's final
// enc.gamma, enc.beta; W_f, b_f, γ, β ∈ ℝ^{d_f}. The unembedding W_u is the caller's.
void add_etransformer_body(const ModelConfig& c, ParamTable& t);

// Algorithm 12 line 5 for one position t: x̃[t] ← mask_token or x[t] randomly, with probability
// p_mask or 1 − p_mask, drawn as u = rng.uniform() < p_mask (the paper's rule, every position
// alike, bos_token and eos_token included). With opt.bert_80_10_10 (BERT's rule, NOT the
// paper's): a chosen position becomes mask_token with probability 0.8, a uniformly random
// ordinary token with 0.1, and stays x[t] with 0.1; a second uniform decides which. The tokens
// are c's own: mask_token = c.mask_token(), and the random token is any id of [1, N_V] but the
// special ones (c's bos, eos, mask and pad ids, wherever they sit in the vocabulary; for the
// paper's vocabulary 1 … N_V − 3). Throws sf::Error when the model has no mask token.
struct MaskDraw {
  int token = 0;        // x̃[t]
  bool chosen = false;  // t is scored (t ∈ T̃)
  double u = 0;         // the uniform number that decided it
};
MaskDraw draw_mask(int x_t, const ModelConfig& c, const TrainOptions& opt, Rng& rng);
// The ids draw_mask's random replacement never draws (sorted, distinct): c's bos, eos, mask and
// pad tokens.
std::vector<int> special_ids(const ModelConfig& c);

// Algorithm 12, ETraining (core/algorithms/alg12_etraining.cpp): lines 3–9 are ℓ ← length(x_n),
// the masking loop (lines 4–6), T̃ (line 7), P(θ) ← ETransformer(x̃_n | θ) (line 8) and
// loss(θ) = −Σ_{t∈T̃} log P(θ)[x_n[t], t] (line 9); the update is line 10.
//  - T̃ is the set of chosen positions. With the paper's rule it is {t : x̃_n[t] = mask_token} as
//    printed; with opt.bert_80_10_10 it also holds the chosen positions that were replaced by a
//    random token or kept (BERT scores them all).
//  - opt.given_masks, when non-empty, gives T̃ instead of drawing it: update k = (i−1)·N_data + n
//    masks the 1-based positions given_masks[k−1] (x̃_n[t] = mask_token there, nothing drawn).
//  - Line 7 binds T̃ as a 1×ℓ row of 0/1 (1 at t ∈ T̃, labelled by the tokens of x̃_n), its
//    positions listed in the value's note. If T̃ is empty, the loss is 0 and θ is unchanged.
class ETraining : public PaperTraining {
 public:
  ETraining(int N_data, int N_epochs) : PaperTraining({lines::e_training::epoch, lines::e_training::sequence, lines::e_training::update}, N_data, N_epochs) {}

 protected:
  Loss loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt, ModelGradient& g, Rng& rng,
                         Tracer* tr) override;
};

}  // namespace sf
