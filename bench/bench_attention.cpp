// Attention benchmark: Algorithm 5, MHAttention, as core computes it with Eigen (1 and 2
// threads) and as the GPU computes it with the OpenGL compute shaders of shaders/ (the
// teaching form, one dispatch per pseudocode line, and the fused flash-attention form).
//
//   Shape: causal self-attention, H = 8 heads, d_attn = d_mid = 64, d_e = d_x = d_out = 512,
//   ℓ ∈ {64, 256, 1024, 4096} (--lengths), float32.
//   FLOPs counted (dense, as Algorithm 4 is written; the causal mask hides half of S, which
//   the fused form skips and the others compute anyway):
//     lines 4 and 6, per head: S = KᵀQ and Ṽ = V·A, 2·ℓ²·d_attn + 2·ℓ²·d_mid;
//     lines 1–3, per head: 2·ℓ·d_e·(2·d_attn + d_mid); Algorithm 5 line 4: 2·ℓ·H·d_mid·d_out.
//     Softmax, masking and biases are not counted.
//   Eigen, 1 thread: core's mh_attention (core is built with EIGEN_DONT_PARALLELIZE).
//   Eigen, 2 threads: the heads split between 2 std::threads (core's attention per head),
//     then W_o Y + b_o 1ᵀ on one.
//   GPU: "GPU ms" is the sum of the dispatches' GL_TIMESTAMP intervals (all of Algorithm 5 on
//     the GPU, W_o included); "wall ms" is the whole call without per-dispatch timing: upload
//     of X and the weights, the dispatches, read-back of Ṽ. "L4–6" is the part of GPU ms spent
//     in lines 4–6 (scores, mask, softmax, V·A; or the one fused dispatch).
//   Each time is the median of repeated calls after one warm-up call (which compiles shaders).
//
// On Mesa's llvmpipe the "GPU" is the CPU: the shaders are far slower than Eigen there, and
// the GPU rows stop at ℓ = 256 unless --max-l says otherwise (ℓ = 1024 takes minutes). On a
// machine with a GPU and no X, the context comes from EGL_PLATFORM_DEVICE_EXT (see
// gpu/headless_gl.hpp).
//
//   bench_attention [--lengths 64,256,1024,4096] [--max-l N] [--min-time SECONDS]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <new>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/rng.hpp"
#include "gpu/attention.hpp"

namespace {

using sf::MatF;
using Clock = std::chrono::steady_clock;

constexpr int kH = 8, kD = 64, kDe = 512;

struct Options {
  std::vector<int> lengths{64, 256, 1024, 4096};
  int max_l = 0;  // 0: all on a GPU, 256 on a software renderer
  double min_time = 1.0;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_attention: %s\nusage: bench_attention [--lengths 64,256,1024,4096] [--max-l N] "
               "[--min-time SECONDS]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage(a == "--help" || a == "-h" ? "Algorithm 5 on Eigen and on the GPU" : a + " needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--lengths") {
        o.lengths.clear();
        std::stringstream ss(v);
        for (std::string n; std::getline(ss, n, ',');) o.lengths.push_back(std::stoi(n));
      } else if (a == "--max-l") {
        o.max_l = std::stoi(v);
      } else if (a == "--min-time") {
        o.min_time = std::stod(v);
      } else {
        usage("unknown option " + a);
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + a + ": " + v);
    }
  }
  for (int l : o.lengths)
    if (l < 1) usage("lengths must be positive");
  return o;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v[v.size() / 2];
}

// Runs `call` (once more first, to warm up, when `warm_up`) until min_time has passed (at
// least once, at most 20 times); returns the median of what each call reports.
double measure(const std::function<double()>& call, double min_time, bool warm_up = true) {
  if (warm_up) call();
  std::vector<double> t;
  const auto start = Clock::now();
  do t.push_back(call());
  while (ms_since(start) < 1e3 * min_time && t.size() < 20);
  return median(t);
}

// One layer's parameters (eq. 4), random, with the views the algorithms take.
struct Layer {
  std::vector<MatF> W_q, W_k, W_v, b_q, b_k, b_v;
  MatF W_o, b_o;
  sf::MHAttentionW<const float> W;
  explicit Layer(sf::Rng& rng) {
    auto rnd = [&](int r, int c, double s) {
      MatF m(r, c);
      for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(s * rng.normal());
      return m;
    };
    const double s = 1.0 / std::sqrt(kDe);
    for (int h = 0; h < kH; ++h) {
      W_q.push_back(rnd(kD, kDe, s));
      W_k.push_back(rnd(kD, kDe, s));
      W_v.push_back(rnd(kD, kDe, s));
      b_q.push_back(rnd(kD, 1, 0.1));
      b_k.push_back(rnd(kD, 1, 0.1));
      b_v.push_back(rnd(kD, 1, 0.1));
    }
    W_o = rnd(kDe, kH * kD, 1.0 / std::sqrt(kH * kD));
    b_o = rnd(kDe, 1, 0.1);
    using M = sf::MapM<const float>;
    using V = sf::MapV<const float>;
    for (int h = 0; h < kH; ++h)
      W.heads.push_back({M(W_q[h].data(), kD, kDe), V(b_q[h].data(), kD), M(W_k[h].data(), kD, kDe),
                         V(b_k[h].data(), kD), M(W_v[h].data(), kD, kDe), V(b_v[h].data(), kD)});
    new (&W.W_o) M(W_o.data(), kDe, kH * kD);
    new (&W.b_o) V(b_o.data(), kDe);
  }
};

// Algorithm 5 with the heads split between two threads (core's attention for each head).
MatF mh_attention_2_threads(const MatF& X, const Layer& layer, const sf::Mask& mask) {
  MatF Y(kH * kD, X.cols());  // (H·d_mid, ℓ): rows h·d_mid… are head h's Ṽ
  auto heads = [&](int first, int last) {
    for (int h = first; h < last; ++h) Y.middleRows(h * kD, kD) = sf::attention<float>(X, X, layer.W.heads[h], mask);
  };
  std::thread other(heads, kH / 2, kH);
  heads(0, kH / 2);
  other.join();
  return (layer.W.W_o * Y).colwise() + layer.W.b_o;
}

double flops(int l) {
  const double L = l, per_head = 4.0 * L * L * kD + 2.0 * L * kDe * 3 * kD;
  return kH * per_head + 2.0 * L * kH * kD * kDe;
}
double flops_lines_4_to_6(int l) { return kH * 4.0 * l * static_cast<double>(l) * kD; }

void row(int l, const char* name, double ms, double wall_ms, double l46_ms) {
  char l46[64] = "         —         —";
  if (l46_ms >= 0) std::snprintf(l46, sizeof l46, "%10.2f %9.1f", l46_ms, flops_lines_4_to_6(l) / (l46_ms * 1e6));
  std::printf("%6d  %-26s %10.2f %9.1f  %s %10.2f\n", l, name, ms, flops(l) / (ms * 1e6), l46, wall_ms);
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  std::string why_not;
  const auto gpu = sf::gpu::GpuAttention::create(why_not);
  const int max_l = opt.max_l ? opt.max_l : (gpu && gpu->device().software() ? 256 : 1 << 30);

  std::printf("MHAttention (Algorithm 5), causal self-attention, H = %d, d_attn = d_mid = %d, d_e = %d, float32\n", kH,
              kD, kDe);
  std::printf("GPU: %s\n", gpu ? gpu->device().summary().c_str() : ("none: " + why_not).c_str());
  std::printf("FLOPs: dense 4·ℓ²·d per head (S = KᵀQ, Ṽ = V·A) + projections (Q, K, V, W_o); GFLOP/s = FLOPs / ms.\n");
  std::printf(
      "GPU ms: sum of GL_TIMESTAMP dispatch intervals; wall ms: the whole call (upload, dispatches, read-back).\n\n");
  std::printf("     ℓ  implementation                     ms   GFLOP/s     L4–6 ms   GFLOP/s    wall ms\n");

  sf::Rng rng(1);
  const Layer layer(rng);
  for (const int l : opt.lengths) {
    MatF X(kDe, l);
    for (Eigen::Index i = 0; i < X.size(); ++i) X.data()[i] = static_cast<float>(rng.normal());
    const sf::Mask mask = sf::unidirectional_mask(l, l);

    const double eigen1 = measure(
        [&] {
          const auto t0 = Clock::now();
          const MatF out = sf::mh_attention<float>(X, X, layer.W, mask);
          return ms_since(t0);
        },
        opt.min_time);
    row(l, "Eigen, 1 thread", eigen1, eigen1, -1);
    const double eigen2 = measure(
        [&] {
          const auto t0 = Clock::now();
          const MatF out = mh_attention_2_threads(X, layer, mask);
          return ms_since(t0);
        },
        opt.min_time);
    row(l, "Eigen, 2 threads (heads)", eigen2, eigen2, -1);

    if (!gpu) continue;
    for (const sf::gpu::Form form : {sf::gpu::Form::Teaching, sf::gpu::Form::Fused}) {
      const std::string name = std::string("GPU, ") + sf::gpu::to_string(form) + " form";
      if (l > max_l) {
        std::printf("%6d  %-26s skipped (--max-l %d)\n", l, name.c_str(), max_l);
        continue;
      }
      try {
        std::vector<double> l46;  // lines 4–6 of every timed call
        const double gpu_ms = measure(
            [&] {
              std::vector<sf::gpu::DispatchTime> times;
              gpu->mh_attention(X, X, layer.W, mask, form, &times);
              double total = 0, part = 0;
              for (const auto& t : times) {
                total += t.gpu_ms;
                if (t.what.rfind("Alg. 4 L4", 0) == 0 || t.what.rfind("Alg. 4 L5", 0) == 0 ||
                    t.what.rfind("Alg. 4 L6", 0) == 0)
                  part += t.gpu_ms;
              }
              l46.push_back(part);
              return total;
            },
            opt.min_time);
        const double wall = measure(
            [&] {
              const auto t0 = Clock::now();
              const MatF out = gpu->mh_attention(X, X, layer.W, mask, form);
              return ms_since(t0);
            },
            opt.min_time, false);                                                  // warm already
        row(l, name.c_str(), gpu_ms, wall, median({l46.begin() + 1, l46.end()}));  // [0]: the warm-up
      } catch (const std::exception& e) {
        std::printf("%6d  %-26s failed: %s\n", l, name.c_str(), e.what());
      }
    }
  }
  return 0;
}
