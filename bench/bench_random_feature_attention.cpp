// Random-feature attention (Algorithm 4-R, not in the paper) against Algorithm 4 on the CPU (issue 25,
// item 8): one head, d_x = d_z = d_attn = d_out = 64, causal self-attention (ℓ_z = ℓ_x = ℓ), float32, one
// thread (core is built with EIGEN_DONT_PARALLELIZE), at ℓ = 256, 1024, 4096, seeded N(0, 1) weights and
// inputs N(0, (s/8)²), s = --scale: at s = 1 the entries of Q and K are ~N(0, 1), so the scores
// qᵀk/√d_attn have standard deviation ~1 (as bench_flash_attention's).
//
// For each ℓ it prints the median wall and CPU time of Algorithm 4 and of Algorithm 4-R at D = 16, 64,
// 256, 1024 (rf_seed 1, iid features), and max and mean |Ṽ_rfa − Ṽ| over all entries, and how many
// query columns the denominator guard caught (random_features.hpp). Not a test: timings depend on the
// machine, and the errors on the inputs' scale (the kernel e^{−‖q−k‖²/2σ²} the features estimate is
// ~e^{−2s²} for these inputs, against a Monte-Carlo spread of ~1/√(2D)).
//
//   bench_random_feature_attention [--repeats 3] [--lengths 256,1024,4096] [--features 16,64,256,1024] [--scale 1]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/random_features.hpp"
#include "bench/attention_bench_support.hpp"
#include "core/model/rng.hpp"

namespace {

using namespace sf;
using namespace sf::attention_bench;  // kD, median, normal, parse_lengths

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  double scale = 1;
  std::vector<int> lengths{256, 1024, 4096}, features{16, 64, 256, 1024};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_random_feature_attention: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--repeats") repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--lengths") lengths = parse_lengths(argv[++i]);
    else if (a == "--features") features = parse_lengths(argv[++i]);
    else if (a == "--scale") scale = std::atof(argv[++i]);
    else {
      std::fprintf(stderr,
                   "bench_random_feature_attention: unknown option %s (use --repeats N, --lengths 256,1024, "
                   "--features 16,64, --scale 1)\n",
                   a.c_str());
      return 2;
    }
  }
  Rng rng(25);
  const MatF W_q = normal(rng, kD, kD), W_k = normal(rng, kD, kD), W_v = normal(rng, kD, kD);
  const VecF b_q = VecF::Zero(kD), b_k = VecF::Zero(kD), b_v = VecF::Zero(kD);
  const AttentionHeadW<const float> W{MapM<const float>(W_q.data(), kD, kD), MapV<const float>(b_q.data(), kD),
                                      MapM<const float>(W_k.data(), kD, kD), MapV<const float>(b_k.data(), kD),
                                      MapM<const float>(W_v.data(), kD, kD), MapV<const float>(b_v.data(), kD)};
  std::printf("scale s = %g\n", scale);
  std::printf("%-6s %-20s %10s %10s %14s %14s %8s\n", "ℓ", "algorithm", "wall ms", "CPU ms", "max |Ṽ_R − Ṽ|",
              "mean |Ṽ_R − Ṽ|", "guarded");
  for (int l : lengths) {
    const MatF X = normal(rng, kD, l) * static_cast<float>(scale / 8);
    const Mask mask = unidirectional_mask(l, l);
    MatF exact;
    const Timing t4 = median(repeats, [&] { exact = attention<float>(X, X, W, mask); });
    std::printf("%-6d %-20s %10.1f %10.1f %14s %14s %8s\n", l, "Algorithm 4", t4.wall_ms, t4.cpu_ms, "—", "—", "—");
    for (int D : features) {
      const Mat<double> omega = rf_omega(D, kD, 1, 1, false);
      MatF rfa;
      const Timing tr = median(repeats, [&] { rfa = random_feature_attention<float>(X, X, W, mask, omega); });
      // The guard count, from the same Q, K, V (untimed).
      const MatF Q = W_q * X, K = W_k * X, V = W_v * X;
      RfaStats<float> st;
      rf_attention_qkv<float>(Q, K, V, mask, omega, &st);
      const MatF diff = (rfa - exact).cwiseAbs();
      const std::string name = "Algorithm 4-R, D = " + std::to_string(D);
      std::printf("%-6d %-20s %10.1f %10.1f %14.3e %14.3e %8d\n", l, name.c_str(), tr.wall_ms, tr.cpu_ms,
                  static_cast<double>(diff.maxCoeff()), static_cast<double>(diff.mean()), st.guarded);
    }
  }
  return 0;
}
