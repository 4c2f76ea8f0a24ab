#include "core/algorithms/attention_check.hpp"

#include <algorithm>
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

double agreement_tolerance(long longest_sum, double scale) {
  constexpr double u = 5.9604644775390625e-8;  // 2⁻²⁴, float32's unit roundoff
  return 64.0 * static_cast<double>(std::max(longest_sum, 1L)) * u * std::max(1.0, scale);
}

long longest_sum(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W) {
  long n = std::max<long>(X.rows(), Z.rows());
  n = std::max<long>(n, Z.cols());
  long d_mid_total = 0;
  for (const AttentionHeadW<const float>& h : W.heads) {
    n = std::max<long>(n, h.W_q.rows());
    d_mid_total += h.W_v.rows();
  }
  return std::max(n, d_mid_total);
}

HeadDiff largest_head_diff(const std::vector<AttentionRecord<float>>& recs,
                           const std::vector<AttentionRecord<float>>& cpu_recs) {
  HeadDiff d;
  const size_t H = std::min(recs.size(), cpu_recs.size());
  for (size_t h = 0; h < H; ++h) {
    const MatF& a = recs[h].Vt;
    const MatF& b = cpu_recs[h].Vt;
    if (a.size() == 0 || a.rows() != b.rows() || a.cols() != b.cols()) continue;
    Eigen::Index r = 0, c = 0;
    const double e = static_cast<double>((a - b).cwiseAbs().maxCoeff(&r, &c));
    if (d.head < 0 || e > d.diff) d = {e, static_cast<int>(h), static_cast<int>(c)};
  }
  return d;
}

}  // namespace sf
