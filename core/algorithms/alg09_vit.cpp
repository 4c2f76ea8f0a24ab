// Algorithm 9 on an image (the vision transformer, arch "vit", not in the paper: core/arch/vit.hpp).
// Line 2 forms X from the patches instead of Algorithm 1's W_e[:, x[t]]; lines 3–12 are BERT's
// (etransformer_layers), so stepping through an image is stepping through Algorithm 9.
#include "core/algorithms/algorithms.hpp"
#include "core/arch/vit.hpp"

namespace sf {

namespace {

const char* const kPatchNote =
    "Not in the paper (the vision transformer: the encyclopedia article, seed 004; Dosovitskiy et al.): the image's "
    "p×p patches, row by row, replace the tokens. Column 1 is the class token e_cls + W_p[:, 1]; column k + 1 is "
    "W_patch p_k + b_patch + W_p[:, k + 1], with p_k the k-th patch's p² pixels / 16. This replaces Algorithm 1's "
    "W_e[:, x[t]].";

const char* const kImageNote =
    "Not in the paper (the vision transformer): x is an image, not token ids. Shown 8×8 as drawn, the intensities "
    "0 … 16 of the digits file; Algorithm 9 reads it row by row, cut into p×p patches (line 2).";

// The image as drawn: (8, 8), rows of pixels, intensities 0 … 16 (the trace's view of x).
template <class T>
Mat<T> image_grid(const Tokens& image) {
  Mat<T> g(kImageSide, kImageSide);
  for (int r = 0; r < kImageSide; ++r)
    for (int c = 0; c < kImageSide; ++c) g(r, c) = static_cast<T>(image[static_cast<size_t>(r * kImageSide + c)]);
  return g;
}

}  // namespace

template <class T>
Mat<T> vit_etransformer(const Tokens& image, const ModelConfig& c, const VitW<const T>& W, Tracer* tr,
                        const MHAttentionFn<T>& attn, const Patches* patches) {
  const Mat<T> P = image_patches<T>(image, c.patch);  // (p², (8/p)²)
  TraceFrame frame(tr, 9,
                   tr ? std::vector<Value>{with_note(tv("image", image_grid<T>(image)), kImageNote),
                                           tparam<T>(tr, "W_patch", W.W_patch), tparam<T>(tr, "b_patch", W.b_patch),
                                           tparam<T>(tr, "e_cls", W.e_cls), tparam<T>(tr, "W_p", W.body.W_p),
                                           tparam<T>(tr, "W_f", W.body.W_f), tparam<T>(tr, "b_f", W.body.b_f),
                                           tparam<T>(tr, "γ", W.body.gamma), tparam<T>(tr, "β", W.body.beta),
                                           tparam<T>(tr, "W_u", W.body.W_u, Axis::Vocab, Axis::Feature)}
                      : std::vector<Value>{});
  // L1: ℓ ← length(x): the class token and the patches
  const int l = static_cast<int>(P.cols()) + 1;
  if (tr) tr->line(lines::e_transformer::l, {tscalar("ℓ", l)});
  // L2 (patches): e_1 ← e_cls + W_p[:, 1]; e_{k+1} ← W_patch p_k + b_patch + W_p[:, k+1]
  Mat<T> X = vit_embed<T>(P, W);  // (d_e, ℓ_x)
  if (tr)
    tr->line(lines::e_transformer::embed,
             {with_note(tv("patches", P), kPatchNote), with_note(tv("X", X, Axis::Feature, Axis::TokenX), kPatchNote)});
  return etransformer_layers<T>(std::move(X), c, W.body, tr, attn, patches);
}

template Mat<float> vit_etransformer<float>(const Tokens&, const ModelConfig&, const VitW<const float>&, Tracer*,
                                            const MHAttentionFn<float>&, const Patches*);
template Mat<double> vit_etransformer<double>(const Tokens&, const ModelConfig&, const VitW<const double>&, Tracer*,
                                              const MHAttentionFn<double>&, const Patches*);

}  // namespace sf
