// What the Vision tab reads from a traced vision transformer (arch "vit", not in the paper:
// Dosovitskiy et al.; core/arch/vit.hpp): P[:, 1], the class token's column of Algorithm 9 line 12,
// and the attention from the class token, the class token's query column of Algorithm 4 line 6's
// softmax(S/√d_attn) for a layer and head (or the mean over the heads). Everything comes from the
// trace the other panels step through. Headless (tests use it).
#pragma once
#include <string>
#include <vector>

#include "app/logic/vision_input.hpp"
#include "app/widgets/token_image.hpp"
#include "core/model/params.hpp"
#include "core/trace/trace.hpp"

namespace sf {

struct VisionReadout {
  std::vector<double> P;  // P[:, 1] over the classes (class c at index c)
  int predicted = -1;     // its argmax, the predicted class 0 … 9
  int layers = 0, heads = 0;  // L and H, as traced
  // The class token's attention over the tokens t_z = 1 … ℓ_x (token 1 the class token itself,
  // token k + 1 patch k): softmax(S/√d_attn)[t_z, 1] of layer l, head h, or the mean over heads.
  std::vector<double> weights;
  std::string error;  // why nothing could be read ("" when all was)
};

// Reads `t` (a Forward trace of Algorithm 9 on an image) for layer l (1 … L) and head h (1 … H;
// 0: the mean over the H heads). l and h out of range are clamped.
VisionReadout vision_readout(const Trace& t, int l, int h);

// The first test digit after test digit `after` (1-based; 0: from the first) that `m` misclassifies
// (vit_predict, untraced), 0 when none.
int next_misclassified(const Model& m, const VisionInput& v, int after);

// The label of token t (1-based) of a vit with `patch`-sized patches: "CLS" for t = 1, else
// "patch k (rows a–b, columns c–d)" for k = t − 1 (short: "P k").
std::string vision_token_label(int t, int patch, bool shorter);

// An intensity 0 … 16 as the grey 0 … 255 the Vision tab and the heatmaps' patch labels draw it in
// (ink light on dark).
int intensity_grey(int v);

// Token t (1-based) of a vit with `patch`-sized patches as an image for the heatmaps' token axes: the
// p×p pixels of patch k = t − 1 (rows and columns of the 8×8 `image` (k − 1) / (8/p) · p + 1 …,
// (k − 1) mod (8/p) · p + 1 …), each intensity_grey; empty for the class token (t = 1, labelled "CLS"
// as text), a t past the patches or an image that is not 64 pixels.
TokenImage vision_token_image(const Tokens& image, int t, int patch);

// What a vit reads and predicts, in place of a text model's tokenizer: for the "Opened …" notice
// and --dump-state's "tokenizer" (after "no tokenizer: " and "none: "), "an 8×8 image in 4×4
// patches (4 patch tokens + the class token), 10 classes (0 … 9)"; for the status line, where the
// configuration's keys already say patch=4 and ℓ_max, shorter (it fits the line at 1280×720): "classes=10 image=8×8".
std::string vision_model_description(const ModelConfig& c, bool shorter = false);

}  // namespace sf
