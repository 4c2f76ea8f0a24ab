#include "core/backprop/traced_backward.hpp"

#include <string>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/backprop/adjoints.hpp"
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

// Algorithm 10: the batched forward (B = 1, the paper's summed loss), then its adjoint frame.
template <class T>
TracedGradient<T> gpt_backward(const Model& m, const Batch& batch, Tracer* tr) {
  std::vector<T> theta;
  const GptW<const T> W = bind_gpt<const T>(m.table, theta_as<T>(m, theta));
  GptCache<T> cache;
  TracedGradient<T> out;
  out.loss = dtransformer_forward<T>(m.config, W, batch, T(1), cache);
  out.grad.assign(m.table.total(), T(0));
  GptW<T> dW = bind_gpt<T>(m.table, out.grad.data());
  adjoint_dtransformer<T>(m.config, W, cache, dW, &out.stream, tr);
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
    case 10: return gpt_backward<T>(m, batch, tr);
    default:
      throw Error("no traced backward for Algorithm " + std::to_string(alg) +
                  " yet: core/backprop/adjoint_etransformer.cpp and adjoint_edtransformer.cpp add Algorithms 9 and 8");
  }
}

template TracedGradient<float> traced_backward<float>(const Model&, const Batch&, Tracer*);
template TracedGradient<double> traced_backward<double>(const Model&, const Batch&, Tracer*);

}  // namespace sf
