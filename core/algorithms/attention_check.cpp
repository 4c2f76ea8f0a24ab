#include "core/algorithms/attention_check.hpp"

#include <string>

#include "core/model/error.hpp"

namespace sf {

MatF core_mh_attention(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                       const AttentionOptions& av) {
  AttentionOptions cpu = av;
  cpu.patch = {};
  return mh_attention<float>(X, Z, W, mask, nullptr, nullptr, cpu);  // (d_out, ℓ_x)
}

double max_abs_diff_to_core(const MatF& Vt, const MatF& Vt_cpu) {
  if (Vt.rows() != Vt_cpu.rows() || Vt.cols() != Vt_cpu.cols())
    throw Error("the other backend's Ṽ is " + std::to_string(Vt.rows()) + "×" + std::to_string(Vt.cols()) +
                ", core's " + std::to_string(Vt_cpu.rows()) + "×" + std::to_string(Vt_cpu.cols()));
  return Vt.size() ? static_cast<double>((Vt - Vt_cpu).cwiseAbs().maxCoeff()) : 0.0;
}

double max_abs_diff_to_core(const MatF& Vt, const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                            const Mask& mask, const AttentionOptions& av) {
  return max_abs_diff_to_core(Vt, core_mh_attention(X, Z, W, mask, av));
}

}  // namespace sf
