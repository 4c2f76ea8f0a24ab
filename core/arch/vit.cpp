// The vision transformer (arch "vit", not in the paper: the encyclopedia article, seed 004, and
// Dosovitskiy et al.): Algorithm 9 unchanged on patch tokens (core/arch/vit.hpp). Everything after
// line 2 is BERT's code: etransformer_layers (traced) and etransformer_stack_forward/backward
// (batched, core/gradients/grad_vit.cpp).
#include "core/arch/vit.hpp"

#include <utility>

#include "core/arch/batched_gradient.hpp"
#include "core/arch/bert.hpp"
#include "core/gradients/grad_vit.hpp"
#include "core/model/error.hpp"
#include "core/training/digits.hpp"

namespace sf {

template <class T>
VitW<T> bind_vit(const ParamTable& table, T* theta) {
  return VitW<T>{.W_patch = bind_matrix<T>(table, theta, "W_patch"),
                 .b_patch = bind_vector<T>(table, theta, "b_patch"),
                 .e_cls = bind_vector<T>(table, theta, "e_cls"),
                 .body = bind_bert<T>(table, theta)};
}

template VitW<float> bind_vit<float>(const ParamTable&, float*);
template VitW<const float> bind_vit<const float>(const ParamTable&, const float*);
template VitW<double> bind_vit<double>(const ParamTable&, double*);
template VitW<const double> bind_vit<const double>(const ParamTable&, const double*);

template <class T>
Mat<T> image_patches(const Tokens& image, int patch) {
  check_image(image);
  const int per_side = kImageSide / patch;
  Mat<T> P(patch * patch, per_side * per_side);  // (p², (8/p)²)
  for (int k = 0; k < P.cols(); ++k)
    for (int i = 0; i < patch; ++i)
      for (int j = 0; j < patch; ++j) {
        const int row = (k / per_side) * patch + i, col = (k % per_side) * patch + j;
        P(i * patch + j, k) = static_cast<T>(image[row * kImageSide + col]) / T(kDigitMax);
      }
  return P;
}

template <class T>
Mat<T> vit_embed(const Mat<T>& patches, const VitW<const T>& W) {
  Mat<T> X(W.W_patch.rows(), patches.cols() + 1);  // (d_e, ℓ_x)
  X.col(0) = W.e_cls;
  X.rightCols(patches.cols()) = (W.W_patch * patches).colwise() + W.b_patch;
  return X + W.body.W_p.leftCols(X.cols());
}

template Mat<float> image_patches<float>(const Tokens&, int);
template Mat<double> image_patches<double>(const Tokens&, int);
template Mat<float> vit_embed<float>(const Mat<float>&, const VitW<const float>&);
template Mat<double> vit_embed<double>(const Mat<double>&, const VitW<const double>&);

namespace {

VitW<const float> weights(const Model& m) { return bind_vit<const float>(m.table, m.theta.data()); }

// loss(θ) and ∇loss(θ) over a batch of images (core/gradients/grad_vit.hpp).
using VitModelGradient = BatchedModelGradient<VitGradient<float>, weights, &vit_forward<float>>;

// Algorithm 12 for one image in paper mode: P ← ETransformer(image), loss = −log P[class, 1].
class VitTraining : public PaperTraining {
 public:
  VitTraining(int N_data, int N_epochs)
      : PaperTraining({lines::e_training::epoch, lines::e_training::sequence, lines::e_training::update}, N_data, N_epochs) {}

 protected:
  Loss loss_and_gradient(const Example& ex, const Model& model, const TrainOptions& opt, ModelGradient& g, Rng& rng,
                         Tracer* tr) override {
    Batch b;
    architecture(model.config).make_batch(model.config, {ex}, {0}, kImagePixels, 0, opt, rng, b);
    const float loss = g.loss_and_gradient(model, b, 1.0f);
    if (tr) tr->line(lines::e_training::loss, {tscalar("loss", loss)});
    return {loss, vit_tokens(model.config.patch), 1};
  }
};

}  // namespace

std::string VitArchitecture::validate(const ModelConfig& c) const {
  std::string e;
  auto add = [&](const std::string& why) { e += (e.empty() ? "" : "; ") + why; };
  if (c.patch != 2 && c.patch != 4)
    add("patch must be 2 or 4 (it is " + std::to_string(c.patch) + "): the 8×8 image is cut into p×p patches");
  else if (c.l_max != vit_tokens(c.patch))
    add("l_max must be ℓ_x = 1 + (8/p)² = " + std::to_string(vit_tokens(c.patch)) + " for patch " +
        std::to_string(c.patch) + " (the class token and the patches; it is " + std::to_string(c.l_max) + ")");
  if (c.vocab.size() != 10) add("vocab must be the 10 class names \"0\" … \"9\" (it has " + std::to_string(c.vocab.size()) + ")");
  if (c.tied_unembedding) add("tied_unembedding needs W_e, which the vision transformer has not (W_patch embeds patches)");
  if (c.position != Position::Learned) add("the vision transformer's positions are learned (position \"learned\")");
  if (c.file_tokenizer() || c.embedding_norm || c.token_types > 0)
    add("the vision transformer takes no tokenizer files, embedding norm or token types");
  if (c.mask != MaskKind::Causal) add("mask \"prefix\" is a GPT variant: Algorithm 9's attention is bidirectional");
  return e;
}

void VitArchitecture::build_table(const ModelConfig& c, ParamTable& t) const {
  // Line 2's parameters for patches (not in the paper): W_patch, b_patch, e_cls, W_p (d_e, ℓ_x); then
  // Algorithm 9's for l ∈ [L]; W_f, b_f, γ, β; W_u (10, d_f) and b_u over the classes.
  t.add("W_patch", "W_patch", 0, 1, c.d_e, c.patch * c.patch, ParamRole::Embedding);
  t.add("b_patch", "b_patch", 0, 1, c.d_e, 1, ParamRole::Bias);
  t.add("e_cls", "e_cls", 0, 1, c.d_e, 1, ParamRole::Embedding);
  t.add("W_p", "W_p", 0, 1, c.d_e, c.l_max, ParamRole::Position);
  add_etransformer_body(c, t);
  t.add("W_u", "W_u", 0, 1, vit_classes(c), c.d_f, ParamRole::Weight);
  t.add("b_u", "b_u", 0, 1, vit_classes(c), 1, ParamRole::Bias);
}

MatF VitArchitecture::forward(const Model& m, const Tokens&, const Tokens& x, Tracer* tr,
                              const MHAttentionFn<float>& attn, const Patches* patches) const {
  TraceParameters params(tr, m.table, m.theta.data());
  return vit_etransformer<float>(x, m.config, weights(m), tr, attn, patches);
}

std::vector<Example> VitArchitecture::examples(const std::vector<std::string>& lines, const ModelConfig&) const {
  std::vector<Example> out;
  out.reserve(lines.size());
  for (size_t i = 0; i < lines.size(); ++i) {
    const Digit d = parse_digit_line(lines[i], "training line " + std::to_string(i + 1));
    out.push_back({.z = {}, .x = d.pixels, .p = 0, .label = d.label + 1});
  }
  return out;
}

void VitArchitecture::make_batch(const ModelConfig&, const std::vector<Example>& data, const std::vector<size_t>& pick,
                                 int, int, const TrainOptions&, Rng&, Batch& b) const {
  b.B = static_cast<int>(pick.size());
  b.l = kImagePixels;
  b.tokens.resize(static_cast<size_t>(b.B) * kImagePixels);
  b.targets.assign(b.tokens.size(), 0);
  b.lengths.assign(b.B, kImagePixels);
  b.l_z = 0;
  b.z_tokens.clear();
  b.z_lengths.clear();
  for (int s = 0; s < b.B; ++s) {
    const Example& ex = data.at(pick[s]);
    check_image(ex.x);
    std::copy(ex.x.begin(), ex.x.end(), b.tokens.begin() + static_cast<long>(s) * kImagePixels);
    b.targets[static_cast<size_t>(s) * kImagePixels] = ex.label;  // the class token's column only
  }
}

std::unique_ptr<ModelGradient> VitArchitecture::gradient(const ParamTable& table) const {
  return std::make_unique<VitModelGradient>(table);
}

std::unique_ptr<PaperTraining> VitArchitecture::paper_training(int N_data, int N_epochs) const {
  return std::make_unique<VitTraining>(N_data, N_epochs);
}

int vit_predict(const Model& m, const Tokens& image) {
  const MatF P = architecture(m.config).forward(m, {}, image, nullptr, {}, nullptr);
  Eigen::Index best = 0;
  P.col(0).maxCoeff(&best);
  return static_cast<int>(best);
}

}  // namespace sf
