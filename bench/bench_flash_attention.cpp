// FlashAttention (Algorithm 4-F, not in the paper) against Algorithm 4 on the CPU (issue 25, item 8):
// one head, d_x = d_z = d_attn = d_out = 64, causal self-attention (ℓ_z = ℓ_x = ℓ), float32, one thread
// (core is built with EIGEN_DONT_PARALLELIZE), at ℓ = 256, 1024, 4096, seeded N(0, 1) inputs and weights.
//
// For each ℓ it prints the median wall time and CPU time of Algorithm 4 and of Algorithm 4-F with
// B_r = B_c = 16 (the configuration's default) and 64, max |Ṽ_flash − Ṽ|, and the peak working memory each
// needs, computed from the sizes (not measured):
//   Algorithm 4:   S, its masked copy, S/√d_attn and softmax(S) are ℓ_z×ℓ_x each, alive together in
//                  attention() (the record keeps S, S_masked, A): 4·ℓ_z·ℓ_x floats;
//   Algorithm 4-F: one block's S_blk and exp(S_blk − m_new) (2·B_c·B_r), O (d_out·B_r), m, ℓ, m_new and
//                  the rescale factors (4·B_r): independent of ℓ.
// Both also hold Q, K, V and Ṽ (4·64·ℓ floats), not counted. Not a test: timings depend on the machine.
//
//   bench_flash_attention [--repeats 3] [--lengths 256,1024,4096]
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
#include "bench/attention_bench_support.hpp"
#include "core/model/rng.hpp"

namespace {

using namespace sf;
using namespace sf::attention_bench;  // kD, median, normal, parse_lengths

double mb(double floats) { return floats * sizeof(float) / (1024.0 * 1024.0); }

}  // namespace

int main(int argc, char** argv) {
  int repeats = 3;
  std::vector<int> lengths{256, 1024, 4096};
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) {
      std::fprintf(stderr, "bench_flash_attention: %s needs a value\n", a.c_str());
      return 2;
    }
    if (a == "--repeats") repeats = std::max(1, std::atoi(argv[++i]));
    else if (a == "--lengths") lengths = parse_lengths(argv[++i]);
    else {
      std::fprintf(stderr, "bench_flash_attention: unknown option %s (use --repeats N, --lengths 256,1024)\n", a.c_str());
      return 2;
    }
  }
  Rng rng(25);
  const MatF W_q = normal(rng, kD, kD), W_k = normal(rng, kD, kD), W_v = normal(rng, kD, kD);
  const VecF b_q = normal(rng, kD, 1), b_k = normal(rng, kD, 1), b_v = normal(rng, kD, 1);
  const AttentionHeadW<const float> W{MapM<const float>(W_q.data(), kD, kD), MapV<const float>(b_q.data(), kD),
                                      MapM<const float>(W_k.data(), kD, kD), MapV<const float>(b_k.data(), kD),
                                      MapM<const float>(W_v.data(), kD, kD), MapV<const float>(b_v.data(), kD)};
  std::printf("%-6s %-22s %10s %10s %14s %16s\n", "ℓ", "algorithm", "wall ms", "CPU ms", "working MB", "max |Ṽ_F − Ṽ|");
  for (int l : lengths) {
    const MatF X = normal(rng, kD, l) * (1.0f / 8);  // scores O(1): entries of Q, K ~ N(0, 1)
    const Mask mask = unidirectional_mask(l, l);
    MatF exact;
    const Timing t4 = median(repeats, [&] { exact = attention<float>(X, X, W, mask); });
    std::printf("%-6d %-22s %10.1f %10.1f %14.2f %16s\n", l, "Algorithm 4", t4.wall_ms, t4.cpu_ms,
                mb(4.0 * l * l), "—");
    for (int B : {16, 64}) {
      MatF flash;
      const Timing tf = median(repeats, [&] { flash = flash_attention<float>(X, X, W, mask, B, B); });
      const std::string name = "Algorithm 4-F, B = " + std::to_string(B);
      std::printf("%-6d %-22s %10.1f %10.1f %14.3f %16.2e\n", l, name.c_str(), tf.wall_ms, tf.cpu_ms,
                  mb(2.0 * B * B + kD * B + 4.0 * B), static_cast<double>((flash - exact).cwiseAbs().maxCoeff()));
    }
  }
  return 0;
}
