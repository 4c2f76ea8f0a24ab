#include "app/logic/vision.hpp"

#include <algorithm>
#include <cmath>

#include "app/attention_calls.hpp"
#include "core/arch/vit.hpp"
#include "core/trace/value_keys.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

namespace {

// The last P of Algorithm 9's line 12 at the top level; nullptr when the trace has none.
const Value* final_P(const Trace& t) {
  for (size_t k = t.size(); k-- > 0;) {
    const Event& e = t.events[k];
    if (e.kind == EventKind::Line && e.depth == 0 && e.ref() == lines::e_transformer::P) return event_value(e, "P");
  }
  return nullptr;
}

}  // namespace

VisionReadout vision_readout(const Trace& t, int l, int h) {
  VisionReadout r;
  const Value* P = final_P(t);
  if (!P || P->m.cols() < 1) {
    r.error = "no traced Algorithm 9 on an image (its line 12, P) in the run shown";
    return r;
  }
  for (Eigen::Index c = 0; c < P->m.rows(); ++c) r.P.push_back(P->m(c, 0));  // P[:, 1]: the class token's column
  r.predicted = static_cast<int>(std::max_element(r.P.begin(), r.P.end()) - r.P.begin());
  std::vector<const HeadCall*> calls;  // Algorithm 9 line 5's, forward
  const std::vector<HeadCall> all = head_calls(t);
  for (const HeadCall& c : all)
    if (c.caller_alg == lines::e_transformer::attention.alg && c.caller_line == lines::e_transformer::attention.line && c.A)
      calls.push_back(&c);
  for (const HeadCall* c : calls) r.layers = std::max(r.layers, c->idx.l), r.heads = std::max(r.heads, c->idx.h);
  if (calls.empty()) {
    r.error = "no traced attention (Algorithm 4 line 6) in the run shown";
    return r;
  }
  l = std::clamp(l, 1, r.layers);
  h = std::clamp(h, 0, r.heads);
  int n = 0;
  for (const HeadCall* c : calls) {
    if (c->idx.l != l || (h != 0 && c->idx.h != h)) continue;
    const TraceMat& A = c->A->m;  // (ℓ_z, ℓ_x): column t_x is query t_x's weights over the keys
    if (r.weights.empty()) r.weights.assign(static_cast<size_t>(A.rows()), 0.0);
    for (Eigen::Index z = 0; z < A.rows(); ++z) r.weights[static_cast<size_t>(z)] += A(z, 0);  // the class token's query
    ++n;
  }
  for (double& w : r.weights) w /= std::max(n, 1);
  return r;
}

int next_misclassified(const Model& m, const VisionInput& v, int after) {
  const std::vector<Digit>& test = v.test_digits();
  for (size_t i = static_cast<size_t>(std::max(after, 0)); i < test.size(); ++i)
    if (vit_predict(m, test[i].pixels) != test[i].label) return static_cast<int>(i) + 1;
  return 0;
}

std::string vision_token_label(int t, int patch, bool shorter) {
  if (t == 1) return "CLS";
  const int k = t - 1, per_row = kImageSide / std::max(patch, 1);
  if (shorter) return "P" + std::to_string(k);
  const int r0 = (k - 1) / per_row * patch + 1, c0 = (k - 1) % per_row * patch + 1;
  return "patch " + std::to_string(k) + " (rows " + std::to_string(r0) + "–" + std::to_string(r0 + patch - 1) +
         ", columns " + std::to_string(c0) + "–" + std::to_string(c0 + patch - 1) + ")";
}

int intensity_grey(int v) { return static_cast<int>(std::lround(255.0 * std::clamp(v, 0, kDigitMax) / kDigitMax)); }

TokenImage vision_token_image(const Tokens& image, int t, int patch) {
  TokenImage out;
  if (patch < 1 || kImageSide % patch != 0 || image.size() != static_cast<size_t>(kImagePixels)) return out;
  const int per_row = kImageSide / patch, k = t - 1;  // patch k = token k + 1
  if (k < 1 || k > per_row * per_row) return out;
  const int r0 = (k - 1) / per_row * patch, c0 = (k - 1) % per_row * patch;  // its top-left pixel, 0-based
  out.w = out.h = patch;
  for (int r = 0; r < patch; ++r)
    for (int c = 0; c < patch; ++c)
      out.grey.push_back(static_cast<unsigned char>(intensity_grey(image[static_cast<size_t>((r0 + r) * kImageSide + c0 + c)])));
  return out;
}

std::string vision_model_description(const ModelConfig& c, bool shorter) {
  const int n = vit_classes(c), side = kImageSide, per_row = side / std::max(c.patch, 1);
  const std::string classes = n > 0 ? " (" + c.vocab.front() + " … " + c.vocab.back() + ")" : "";
  const std::string image = std::to_string(side) + "×" + std::to_string(side);
  if (shorter) return "classes=" + std::to_string(n) + " image=" + image;
  return "an " + image + " image in " + std::to_string(c.patch) + "×" + std::to_string(c.patch) + " patches (" +
         std::to_string(per_row * per_row) + " patch tokens + the class token), " + std::to_string(n) + " classes" +
         classes;
}

}  // namespace sf
