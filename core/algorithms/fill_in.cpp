// Filling in [MASK] positions with a trained BERT: not a paper algorithm (see fill_in.hpp).
#include "core/algorithms/fill_in.hpp"

#include <algorithm>
#include <numeric>

#include "core/arch/architecture.hpp"
#include "core/algorithms/sampling.hpp"
#include "core/model/error.hpp"

namespace sf {

FillResult fill_masks(const Tokens& x, const Model& m, double tau, uint64_t seed, int top_k, Tracer* tr,
                      const MHAttentionFn<float>& attn) {
  const ModelConfig& c = m.config;
  const Architecture& arch = architecture(c);
  if (arch.output() != OutputKind::FillIn)
    throw Error("filling in [MASK] needs an encoder-only model (BERT); this model is " + arch.title());
  if (!(tau >= 0.0) || tau > 1e6) throw Error("τ must be a number between 0 and 1e6");
  if (top_k < 0) throw Error("top_k must be ≥ 0");
  // The model's own mask token (the paper's N_V − 2, or the checkpoint's [MASK]); 0: it has none.
  const int mask_token = c.mask_token();
  if (mask_token == 0)
    throw Error("this model has no mask token (its configuration sets mask_id = -1), so it has no [MASK] to fill in");
  if (std::find(x.begin(), x.end(), mask_token) == x.end()) throw Error("the prompt has no [MASK] to fill");
  // P ← ETransformer(x | θ̂): one pass, every column sees the whole prompt
  const MatF P = arch.forward(m, {}, x, tr, attn);  // (N_V, ℓ)
  Rng rng(seed);
  FillResult out;
  out.filled = x;
  const int k = std::min(top_k, c.N_V());
  for (int t = 1; t <= static_cast<int>(x.size()); ++t) {
    if (x[t - 1] != mask_token) continue;
    FillPosition pos;
    pos.t = t;
    pos.p = P.col(t - 1);  // (N_V)
    // The top_k tokens by P[:, t], most likely first (the smaller id first on ties).
    std::vector<int> ids(c.N_V());
    std::iota(ids.begin(), ids.end(), 1);
    std::partial_sort(ids.begin(), ids.begin() + k, ids.end(),
                      [&](int a, int b) { return pos.p(a - 1) > pos.p(b - 1) || (pos.p(a - 1) == pos.p(b - 1) && a < b); });
    for (int j = 0; j < k; ++j) pos.top.push_back({ids[j], pos.p(ids[j] - 1)});
    // τ = 0: the argmax; else a sample from q ∝ p^{1/τ}
    pos.chosen = tau <= 0.0 ? sample_argmax(pos.p) : sample_mult(temperature(pos.p, tau), rng.uniform());
    out.filled[t - 1] = pos.chosen;
    out.positions.push_back(std::move(pos));
  }
  return out;
}

}  // namespace sf
