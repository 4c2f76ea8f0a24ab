// The paper's encoder-decoder transformer (Algorithms 8, 11, 15) as an Architecture
// (core/arch/architecture.hpp).
#pragma once
#include "core/arch/architecture.hpp"
#include "core/training/training.hpp"

namespace sf {

class EdArchitecture : public Architecture {
 public:
  std::string name() const override { return "ed"; }
  std::string title() const override { return "Encoder-decoder transformer"; }
  int forward_algorithm() const override { return 8; }
  int training_algorithm() const override { return 11; }
  OutputKind output() const override { return OutputKind::Translation; }
  bool has_context() const override { return true; }
  std::vector<std::string> config_keys() const override;
  std::string validate(const ModelConfig& c) const override;
  Activation paper_activation() const override { return Activation::ReLU; }
  void build_table(const ModelConfig& c, ParamTable& table) const override;
  // Algorithm 8 on (z, x). `attn`, when set, computes the self-attention lines (5 and 14).
  MatF forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr, const MHAttentionFn<float>& attn,
               const Patches* patches) const override;
  // Each line is "z<TAB>x", split at the first tab; each side becomes [bos_token, characters…,
  // eos_token]. Throws sf::Error "line N has no tab: each line must be z<TAB>x", or naming the
  // side and line that does not fit the model.
  std::vector<Example> examples(const std::vector<std::string>& lines, const ModelConfig& c) const override;
  // x padded to ℓ = l (tokens, lengths, next-token targets), z padded to ℓ_z = l_z (z_tokens,
  // z_lengths); the padding is masked by the gradient's key padding (core/gradients/).
  void make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick, int l,
                  int l_z, const TrainOptions& opt, Rng& rng, Batch& b) const override;
  std::unique_ptr<ModelGradient> gradient(const ParamTable& table) const override;
  std::unique_ptr<PaperTraining> paper_training(int N_data, int N_epochs) const override;
};

// Views of an encoder-decoder model's θ (Model::weights() is GPT's).
inline EdW<const float> ed_weights(const Model& m) { return bind_ed<const float>(m.table, m.theta.data()); }

// Algorithm 8 with its two halves separable (core/algorithms/alg08_edtransformer.cpp):
// edtransformer() is this with no Z given. When Z_given is set, lines 1–9 (the encoder) are
// skipped and *Z_given (d_e, ℓ_z), the encoder's output for this z, is used: not in the paper,
// which re-encodes z at every step of Algorithm 15 (the trace says so). Z_out, when set,
// receives the encoder's output. `attn` and `patches` as in Architecture::forward.
template <class T>
Mat<T> edtransformer_parts(const Tokens& z, const Tokens& x, const ModelConfig& c, const EdW<const T>& W, Tracer* tr,
                           const Mat<T>* Z_given, Mat<T>* Z_out, const MHAttentionFn<T>& attn = {},
                           const Patches* patches = nullptr);

// Throws sf::Error when (z, x) cannot be fed to Algorithm 8, naming the sequence.
void check_ed_tokens(const Tokens& z, const Tokens& x, const ModelConfig& c);

// Algorithm 11, EDTraining (core/algorithms/alg11_edtraining.cpp): lines 3–5 are
// ℓ ← length(x_n), P(θ) ← EDTransformer(z_n, x_n | θ) and
// loss(θ) = −Σ_{t=1}^{ℓ−1} log P(θ)[x_n[t+1], t] (line 5 binds the terms as a 1×(ℓ−1) row and
// their sum); line 6 is the update.
class EdTraining : public PaperTraining {
 public:
  EdTraining(int N_data, int N_epochs) : PaperTraining({lines::ed_training::epoch, lines::ed_training::sequence, lines::ed_training::update}, N_data, N_epochs) {}

 protected:
  Loss loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt, ModelGradient& g, Rng& rng,
                         Tracer* tr) override;
};

}  // namespace sf
