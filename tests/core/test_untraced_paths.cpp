// The untraced fast paths of session 18 (issue 27 item 4) give what the paper's lines give:
// layer_norm_columns reads and writes the columns in place (no copy), unidirectional_mask fills
// whole column segments. Both must equal their definitions exactly, whatever the alignment.
#include <gtest/gtest.h>

#include <random>

#include "core/algorithms/algorithms.hpp"
#include "core/trace/trace.hpp"

namespace test_untraced_paths {

using namespace sf;

// d_e = 20 floats: column t starts 80·t bytes into X, so most columns are not on a SIMD boundary
// (the case where a reduction could group its terms differently from an aligned copy).
TEST(UntracedPaths, LayerNormColumnsUntracedEqualsTracedBitForBit) {
  const int d_e = 20, l = 7;
  std::mt19937 rng(18);
  std::normal_distribution<float> normal(0.5f, 2.0f);
  std::uniform_real_distribution<float> scale(0.5f, 1.5f);
  MatF X(d_e, l);
  VecF gamma(d_e), beta(d_e);
  for (int i = 0; i < X.size(); ++i) X(i) = normal(rng);
  for (int i = 0; i < d_e; ++i) gamma(i) = scale(rng), beta(i) = normal(rng);
  const MapV<const float> g(gamma.data(), d_e), b(beta.data(), d_e);
  Trace trace;
  Tracer tr(trace);
  const MatF traced = layer_norm_columns<float>(X, g, b, 1e-5f, &tr);
  const MatF untraced = layer_norm_columns<float>(X, g, b, 1e-5f, nullptr);
  for (int i = 0; i < X.size(); ++i) EXPECT_EQ(untraced(i), traced(i)) << "entry " << i;
  EXPECT_EQ(trace.size(), static_cast<size_t>(4 * l));  // Enter + lines 1–3 per column
  // And the values are layer_norm's: x̂ = (ê − β)/γ has Σ_i x̂_i = 0 (a check of the values, not of
  // the bits). Bound: |x̂_i| ≤ √d_e < 4.5, |β| < ~8, γ ≥ 0.5, so ê, ê − β and the division each round
  // by ≤ 2⁻²³·(4.5·1.5 + 8)/0.5 < 4e-6, with x̂'s own rounding (m, v, √, ÷: a few ulps of 4.5) under
  // 1e-5 per entry (20 entries: 3e-4), and the float sum's 20 additions (partial sums ≤ 90) add at
  // most 20·90·2⁻²⁴ ≈ 1.1e-4: about 4e-4 in all, below d_e·1e-4 = 2e-3.
  for (int t = 0; t < l; ++t) {
    float s = 0;
    for (int i = 0; i < d_e; ++i) s += (untraced(i, t) - beta(i)) / gamma(i);
    EXPECT_NEAR(s, 0.0f, d_e * 1e-4f) << "column " << t;
  }
}

TEST(UntracedPaths, UnidirectionalMaskEqualsItsDefinition) {
  // Mask[t_z, t_x] = [[t_z ≤ t_x]] for square, wide (ℓ_z < ℓ_x) and tall (ℓ_z > ℓ_x) masks, and empty ones.
  for (const auto& [l_z, l_x] : {std::pair{5, 5}, std::pair{2, 6}, std::pair{7, 3}, std::pair{0, 4}, std::pair{4, 0}}) {
    const Mask m = unidirectional_mask(l_z, l_x);
    ASSERT_EQ(m.rows(), l_z);
    ASSERT_EQ(m.cols(), l_x);
    for (int tx = 0; tx < l_x; ++tx)
      for (int tz = 0; tz < l_z; ++tz) EXPECT_EQ(m(tz, tx), tz <= tx ? 1 : 0) << l_z << "×" << l_x;
  }
}

}  // namespace test_untraced_paths
