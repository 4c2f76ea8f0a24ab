// A vision transformer on 8×8 handwritten digits (arch "vit"): NOT one of the paper's three. It is
// from the encyclopedia article (seed 004) and Dosovitskiy et al. (2021, "An image is worth 16×16
// words"): Algorithm 9 (ETransformer) unchanged, on patch tokens.
//   - the 8×8 image is cut into p×p patches (p = 2 or 4, key "patch"), row by row: ℓ = (8/p)²;
//   - each patch's p² pixels, scaled to [0, 1], go through W_patch ∈ ℝ^{d_e×p²} + b_patch (the
//     vision counterpart of W_e, not in the paper);
//   - a learned class token e_cls comes first (ℓ_x = 1 + (8/p)²), learned positions W_p are added;
//   - Algorithm 9's lines 3–12 as printed; the class token's column of P (over the 10 classes, the
//     configuration's vocab "0" … "9", so W_u ∈ ℝ^{10×d_f}, b_u ∈ ℝ^{10}) is the prediction.
// Its input x is the image: 64 intensities 0 … 16, row by row (the digits file's values), not ids.
// Training is Algorithm 12's practical mode with the class as the only target: the loss is
// −log P[class, 1], on the class token's column alone (nothing is masked).
#pragma once
#include "core/arch/architecture.hpp"

namespace sf {

// The image side: 8×8 pixels, intensities 0 … kDigitMax.
inline constexpr int kImageSide = 8;
inline constexpr int kImagePixels = kImageSide * kImageSide;
inline constexpr int kDigitMax = 16;

// ℓ_x = 1 + (8/p)²: the class token and the patches.
inline int vit_tokens(int patch) { return 1 + (kImageSide / patch) * (kImageSide / patch); }
// The number of classes: the configuration's vocab (the class names, "0" … "9").
inline int vit_classes(const ModelConfig& c) { return static_cast<int>(c.vocab.size()); }

template <class T>
struct VitW {
  MapM<T> W_patch{nullptr, 0, 0};  // (d_e, p²)
  MapV<T> b_patch{nullptr, 0};     // (d_e)
  MapV<T> e_cls{nullptr, 0};       // (d_e)
  BertW<T> body;                   // W_p (d_e, ℓ_x), the layers, W_f, b_f, γ, β, W_u (10, d_f), b_u; no W_e
};
template <class T>
VitW<T> bind_vit(const ParamTable& table, T* theta);

// The patches of an image as columns: (p², (8/p)²), column k the k-th patch row by row, its p²
// pixels row by row, each intensity / 16. Throws sf::Error unless `image` holds 64 values 0 … 16.
template <class T>
Mat<T> image_patches(const Tokens& image, int patch);

// Line 2 for the vision transformer: X = [e_cls, W_patch p_1 + b_patch, …] + W_p (d_e, ℓ_x).
template <class T>
Mat<T> vit_embed(const Mat<T>& patches, const VitW<const T>& W);

// Algorithm 9 on an image, traced as Algorithm 9 (line 2 binds X from the patches, with a note
// that it replaces W_e[:, x[t]]). Returns P (N_C, ℓ_x); P[:, 1] is the prediction.
template <class T>
Mat<T> vit_etransformer(const Tokens& image, const ModelConfig& c, const VitW<const T>& W, Tracer* tr = nullptr,
                        const MHAttentionFn<T>& attn = {}, const Patches* patches = nullptr);

class VitArchitecture : public Architecture {
 public:
  std::string name() const override { return "vit"; }
  std::string title() const override { return "ViT: vision transformer (not in the paper: article, Dosovitskiy et al.)"; }
  int forward_algorithm() const override { return 9; }
  int training_algorithm() const override { return 12; }
  OutputKind output() const override { return OutputKind::Classification; }
  std::vector<std::string> config_keys() const override { return {"L", "d_f", "patch"}; }
  std::string validate(const ModelConfig& c) const override;
  void build_table(const ModelConfig& c, ParamTable& table) const override;
  MatF forward(const Model& m, const Tokens& z, const Tokens& x, Tracer* tr, const MHAttentionFn<float>& attn,
               const Patches* patches) const override;
  // Each line is one image of the digits file: "p_1,…,p_64,class" (core/training/digits.hpp).
  std::vector<Example> examples(const std::vector<std::string>& lines, const ModelConfig& c) const override;
  // b.tokens: B images of 64 pixels (ℓ = 64); b.targets[b·64] = the class id (class + 1), else 0.
  void make_batch(const ModelConfig& c, const std::vector<Example>& data, const std::vector<size_t>& pick, int l,
                  int l_z, const TrainOptions& opt, Rng& rng, Batch& b) const override;
  std::unique_ptr<ModelGradient> gradient(const ParamTable& table) const override;
  std::unique_ptr<PaperTraining> paper_training(int N_data, int N_epochs) const override;
};

// The predicted class (0-based) of an image: argmax of P[:, 1].
int vit_predict(const Model& m, const Tokens& image);

}  // namespace sf
