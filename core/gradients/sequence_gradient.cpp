#include "core/gradients/sequence_gradient.hpp"

#include <algorithm>
#include <string>

#include "core/arch/architecture.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/gradients/grad_vit.hpp"
#include "core/model/error.hpp"

namespace sf {

Batch next_token_batch(const Tokens& z, const Tokens& x) {
  Batch b;
  b.B = 1;
  b.l = static_cast<int>(x.size());
  b.tokens = x;
  b.lengths = {b.l};
  next_token_targets(b);  // position t predicts x[t+1], t = 1 … ℓ − 1
  if (!z.empty()) {
    b.l_z = static_cast<int>(z.size());
    b.z_tokens = z;
    b.z_lengths = {b.l_z};
  }
  return b;
}

Batch masked_batch(const Tokens& x, const std::vector<int>& masks, int mask_token) {
  const int l = static_cast<int>(x.size());
  Batch b;
  b.B = 1;
  b.l = l;
  b.tokens = x;
  b.lengths = {l};
  b.targets.assign(x.size(), 0);
  for (int t : masks) {
    if (t < 1 || t > l)
      throw Error("masked position " + std::to_string(t) + " is outside x's positions 1 … " + std::to_string(l));
    if (b.targets[t - 1] != 0) throw Error("masked position " + std::to_string(t) + " is given twice");
    b.targets[t - 1] = x[t - 1];  // the loss compares P[:, t] with the original x[t]
    b.tokens[t - 1] = mask_token;  // x̃[t] = mask_token
  }
  return b;
}

Batch image_batch(const Tokens& image, int label) {
  Batch b;
  b.B = 1;
  b.l = static_cast<int>(image.size());  // vit_forward refuses anything but 64 pixels
  b.tokens = image;
  b.lengths = {b.l};
  b.targets.assign(image.size(), 0);
  if (!b.targets.empty()) b.targets[0] = label;  // the class token's column only
  return b;
}

namespace {

// One architecture's batched gradient in double (G: GptGradient, BertGradient or EdGradient;
// bind: bind_gpt, bind_bert or bind_ed), with the stream's gradients kept.
template <class G, class W>
SequenceGradient run(const Model& m, const Batch& batch, W (*bind)(const ParamTable&, const double*),
                     auto forward, auto backward) {
  const std::vector<double> theta(m.theta.begin(), m.theta.end());  // exact: every float is a double
  const auto weights = bind(m.table, theta.data());
  G g(m.table);
  SequenceGradient out;
  out.loss = forward(m.config, weights, batch, 1.0, g.cache);  // loss_weight 1: the paper's sum
  backward(m.config, weights, g.cache, g.ws, g.dW, &out.stream);
  out.grad.assign(g.grad.begin(), g.grad.end());
  return out;
}

}  // namespace

SequenceGradient sequence_gradient(const Model& m, const Batch& batch) {
  if (batch.B != 1) throw Error("sequence_gradient takes a batch of one sequence");
  // The gradients of this folder, one per forward algorithm, and the vision transformer's (Algorithm 9 on
  // an image; not in the paper). Architecture has no double gradient: training runs in float.
  if (m.config.arch == "vit")
    return run<VitGradient<double>>(m, batch, &bind_vit<const double>, vit_forward<double>, vit_backward<double>);
  switch (architecture(m.config).forward_algorithm()) {
    case 10:
      return run<GptGradient<double>>(m, batch, &bind_gpt<const double>, dtransformer_forward<double>,
                                      dtransformer_backward<double>);
    case 9:
      return run<BertGradient<double>>(m, batch, &bind_bert<const double>, etransformer_forward<double>,
                                       etransformer_backward<double>);
    case 8:
      return run<EdGradient<double>>(m, batch, &bind_ed<const double>, edtransformer_forward<double>,
                                     edtransformer_backward<double>);
    default:
      throw Error("no gradient for Algorithm " + std::to_string(architecture(m.config).forward_algorithm()));
  }
}

}  // namespace sf
