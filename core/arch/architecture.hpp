// An architecture: what differs between the paper's three transformers, as one small object.
//
// The paper's GPT (Algorithm 10), BERT (Algorithm 9) and encoder-decoder (Algorithm 8) share
// Algorithms 1–7, the trace, the optimizers, checkpoints and every panel. What differs is
//   - the parameter table (the one list of named tensors: init, checkpoints, optimizer, browser),
//   - the forward algorithm (10, 9 or 8) and whether it reads a context sequence z,
//   - the training algorithm (13, 12 or 11) and how a minibatch and its loss terms are made,
//   - how output is produced (Algorithm 14, filling in [MASK], Algorithm 15).
// The app, the CLI and the trainer ask the model's Architecture for these; none of them tests
// the configuration's "arch" string. Adding an architecture is adding its files (core/arch/,
// its algorithms and gradients) and one line in core/arch/registry.cpp.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/params.hpp"

namespace sf {

struct Batch;          // core/gradients/grad.hpp
class ModelGradient;   // core/training/training.hpp
class PaperTraining;   // core/training/training.hpp
struct TrainOptions;   // core/training/training.hpp
class Rng;             // core/model/rng.hpp

// One training example, each side tokenized [bos_token, characters…, eos_token] (§4): the
// sequence x (GPT, BERT) or the pair (z, x) of a context and its target (encoder-decoder).
struct Example {
  Tokens z;  // empty unless the architecture has a context
  Tokens x;
  // GPT's prefix-LM variant (mask "prefix"): p, the position of the first prefix_separator in x
  // (0 when none); training puts loss terms only on positions t ≥ p. 0 otherwise.
  int p = 0;
  // The vision transformer (arch "vit"): x is an image (64 intensities) and this its class id
  // (class + 1, an id of the class names "0" … "9"). 0 otherwise.
  int label = 0;
};

// How the architecture produces output from a trained model.
enum class OutputKind {
  Continuation,  // Algorithm 14, DInference: continue a prompt token by token (GPT)
  FillIn,        // the columns of P at [MASK] positions (BERT; the paper prints no algorithm)
  Translation,   // Algorithm 15, EDInference: write x̂ for a context z (encoder-decoder)
  Classification,  // not in the paper: the class token's column P[:, 1] over the classes (the vision transformer)
};

class Architecture {
 public:
  virtual ~Architecture() = default;

  // --- identity ---
  virtual std::string name() const = 0;   // the configuration's "arch": "gpt", "bert", "ed"
  virtual std::string title() const = 0;  // for people, e.g. "GPT: decoder-only transformer"
  virtual int forward_algorithm() const = 0;   // 10, 9 or 8
  virtual int training_algorithm() const = 0;  // 13, 12 or 11
  virtual OutputKind output() const = 0;
  // True when the forward algorithm reads a context sequence z besides x (Algorithm 8).
  virtual bool has_context() const { return false; }

  // --- configuration ---
  // The integer hyperparameters this architecture adds to the shared ones (H, d_e, d_attn,
  // d_mid, d_mlp, ℓ_max): e.g. {"L"} or {"L", "d_f"} or {"L_enc", "L_dec"}. Only these are
  // written to and accepted from a configuration's JSON.
  virtual std::vector<std::string> config_keys() const = 0;
  // "" when the configuration suits this architecture, else what is wrong (its own keys only).
  virtual std::string validate(const ModelConfig& c) const { return ""; }
  // The paper's choices for this architecture, used where a configuration leaves them unset:
  // GPT is pre-LN with GELU; BERT post-LN with GELU; the encoder-decoder post-LN with ReLU.
  virtual NormPosition paper_norm_position() const { return NormPosition::Post; }
  virtual Activation paper_activation() const { return Activation::GELU; }

  // --- parameters: the paper's tensors, in the order checkpoints and the browser list them ---
  virtual void build_table(const ModelConfig& c, ParamTable& table) const = 0;

  // --- the forward algorithm ---
  // P ∈ (0,1)^{N_V×ℓ_x} for the sequence x (and, when has_context(), the context z; otherwise z
  // is ignored). Traced when tr is given. `attn`, when set, computes the self-attention lines'
  // MHAttention instead of core's (e.g. on the GPU). Throws sf::Error on input the model
  // cannot take (empty, longer than ℓ_max, ids outside [1, N_V], a missing context).
  // `patches`: experiments in force (core/experiments/), changing values at the patch points.
  virtual MatF forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr = nullptr,
                       const MHAttentionFn<float>& attn = {}, const Patches* patches = nullptr) const = 0;

  // --- training ---
  // Training examples from a dataset's lines: each line is a sequence, or for an architecture
  // with a context "z<TAB>x". Throws sf::Error naming the line that does not fit the model.
  virtual std::vector<Example> examples(const std::vector<std::string>& lines, const ModelConfig& c) const = 0;
  // The minibatch of data[pick[0]], data[pick[1]], …, padded to ℓ = l tokens (and ℓ_z = l_z for
  // the context) with pad_token(c): its input tokens and the target of every position (what the
  // loss of the training algorithm compares P with). `rng` draws whatever the training algorithm
  // draws (Algorithm 12's masks, with c's own mask_token). `b`'s buffers are reused.
  virtual void make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick,
                          int l, int l_z, const TrainOptions& opt, Rng& rng, Batch& b) const = 0;
  // loss(θ) and ∇loss(θ) over a Batch, batched and untraced (core/gradients/).
  virtual std::unique_ptr<ModelGradient> gradient(const ParamTable& table) const = 0;
  // The training algorithm as printed (13, 12 or 11), one update at a time.
  virtual std::unique_ptr<PaperTraining> paper_training(int N_data, int N_epochs) const = 0;
};

// The id a minibatch pads with: the model's pad_id, else 1 (any valid id: padded positions are
// masked as keys and carry no loss term).
inline int pad_token(const ModelConfig& c) { return c.pad_id > 0 ? c.pad_id : 1; }

// The architecture named `name`; throws sf::Error listing the known ones.
const Architecture& architecture(const std::string& name);
// The architecture of a configuration (its "arch").
const Architecture& architecture(const ModelConfig& c);
// nullptr when no architecture has that name.
const Architecture* find_architecture(const std::string& name);
// Every architecture, in the paper's order of presentation in the app (GPT, BERT, ED).
const std::vector<const Architecture*>& all_architectures();

}  // namespace sf
