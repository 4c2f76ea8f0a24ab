#include "core/backprop/traced_backward.hpp"

#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/backprop/adjoints.hpp"
#include "core/gradients/grad_edtransformer.hpp"
#include "core/gradients/grad_etransformer.hpp"
#include "core/model/error.hpp"

namespace sf {

namespace {

// θ as T: float θ viewed as it is, or cast to double (exact: every float is a double).
template <class T>
const T* theta_as(const Model& m, std::vector<T>& copy) {
  if constexpr (std::is_same_v<T, float>) {
    return m.theta.data();
  } else {
    copy.assign(m.theta.begin(), m.theta.end());
    return copy.data();
  }
}

// One architecture's traced backward: its batched forward (B = 1, the paper's summed loss), then its
// adjoint frame (Algorithm 10, 9 or 8). W: GptW, BertW or EdW; Cache: GptCache, BertCache or EdCache.
template <class T, template <class> class W, template <class> class Cache>
TracedGradient<T> run(const Model& m, const Batch& batch, Tracer* tr, W<const T> (*bind)(const ParamTable&, const T*),
                      W<T> (*bind_grad)(const ParamTable&, T*),
                      T (*forward)(const ModelConfig&, const W<const T>&, const Batch&, T, Cache<T>&),
                      void (*adjoint)(const ModelConfig&, const W<const T>&, const Cache<T>&, W<T>&,
                                      ResidualGradients<T>*, Tracer*)) {
  std::vector<T> theta;
  const T* base = theta_as<T>(m, theta);
  TraceParameters params(tr, m.table, base);  // the parameters the adjoints bind (W_q, γ, …) say their entry
  const W<const T> weights = bind(m.table, base);
  Cache<T> cache;
  TracedGradient<T> out;
  out.loss = forward(m.config, weights, batch, T(1), cache);
  out.grad.assign(m.table.total(), T(0));
  W<T> dW = bind_grad(m.table, out.grad.data());
  adjoint(m.config, weights, cache, dW, &out.stream, tr);
  return out;
}

}  // namespace

Batch dtraining_batch(const Tokens& x, const ModelConfig& c) {
  Batch batch = make_batch({x}, static_cast<int>(x.size()), c.eos_token());
  if (c.mask == MaskKind::Prefix)
    for (int t = 1; t < prefix_position(x, c); ++t) batch.targets[t - 1] = 0;  // no loss term inside the prefix
  return batch;
}

template <class T>
TracedGradient<T> traced_backward(const Model& m, const Batch& batch, Tracer* tr) {
  if (batch.B != 1) throw Error("the traced backward runs on one sequence: a batch of B = 1, not " + std::to_string(batch.B));
  const int alg = architecture(m.config).forward_algorithm();
  switch (alg) {
    case 10:
      return run<T, GptW, GptCache>(m, batch, tr, &bind_gpt<const T>, &bind_gpt<T>, &dtransformer_forward<T>,
                                    &adjoint_dtransformer<T>);
    case 9:
      return run<T, BertW, BertCache>(m, batch, tr, &bind_bert<const T>, &bind_bert<T>, &etransformer_forward<T>,
                                      &adjoint_etransformer<T>);
    case 8:
      return run<T, EdW, EdCache>(m, batch, tr, &bind_ed<const T>, &bind_ed<T>, &edtransformer_forward<T>,
                                  &adjoint_edtransformer<T>);
    default:
      throw Error("no traced backward for Algorithm " + std::to_string(alg));
  }
}

template TracedGradient<float> traced_backward<float>(const Model&, const Batch&, Tracer*);
template TracedGradient<double> traced_backward<double>(const Model&, const Batch&, Tracer*);

}  // namespace sf
