// Training benchmarks on the reference configuration (the default ModelConfig: d_e=64, L=2, H=4,
// d_attn=d_mid=16, d_mlp=256, ℓ=ℓ_max=64, N_V=64), on 1 and 2 threads (the argument "threads:N"
// is TrainOptions::threads; core is built with EIGEN_DONT_PARALLELIZE).
//
//   BM_TrainStep   Trainer::step() in the practical mode: a minibatch of 16 sequences of 64
//                  tokens, forward, backward, clipping and Adam. Counters: tokens/s, the FLOPs
//                  of one step (matrix products only) and the GFLOP/s achieved.
//   BM_Gemm1024    Eigen's f32 matrix product, 1024×1024 by 1024×1024: the machine's
//                  matrix-multiply ceiling (GFLOP/s) to state the step's fraction of.
//   BM_FmaPeak     the core's peak rate of fused multiply–adds (AVX2, GFLOP/s), above any GEMM.
//
// bench/torch_train.py trains the same model with the same Adam in PyTorch; bench/run_train.sh
// prints both side by side.
#include <benchmark/benchmark.h>
#include <immintrin.h>

#include "bench/bench_common.hpp"

namespace {

using namespace sf::bench;

// FLOPs of the matrix products of one training step: the forward pass (forward_flops, W_u 2·d_e·N_V
// per token), and the backward computes two products of the same size for each (the input's
// gradient and the weight's), so a step is 3× the forward.
double train_step_flops(const sf::ModelConfig& c, int B, int l) {
  return 3.0 * forward_flops(c, B, l, 2.0 * c.d_e * c.N_V());
}

void BM_TrainStep(benchmark::State& state) {
  const sf::ModelConfig c;
  train_steps(state, c, random_text(c));
  count_flops(state, train_step_flops(c, kBatch, kLength));
}
BENCHMARK(BM_TrainStep)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(3.0);

BENCHMARK(BM_Gemm1024)->Unit(benchmark::kMillisecond)->MinTime(2.0);

// The core's peak float rate: 12 independent chains of 8-wide fused multiply–adds (AVX2 FMA: two
// per cycle, 4 to 5 cycles of latency, so 12 chains keep both units busy), 2 FLOPs each. The
// ceiling no matrix product can pass; BM_Gemm1024 says how much of it Eigen reaches.
#if defined(__FMA__) && defined(__AVX__)
void BM_FmaPeak(benchmark::State& state) {
  constexpr int kChains = 12, kRounds = 1 << 16;
  for (auto _ : state) {
    __m256 acc[kChains];
    for (int c = 0; c < kChains; ++c) acc[c] = _mm256_set1_ps(static_cast<float>(c));
    const __m256 a = _mm256_set1_ps(0.999999f), b = _mm256_set1_ps(1e-7f);
    for (int r = 0; r < kRounds; ++r)
      for (int c = 0; c < kChains; ++c) acc[c] = _mm256_fmadd_ps(acc[c], a, b);  // acc ← acc·a + b
    for (int c = 1; c < kChains; ++c) acc[0] = _mm256_add_ps(acc[0], acc[c]);
    benchmark::DoNotOptimize(acc[0]);
  }
  state.counters["GFLOP/s"] = benchmark::Counter(static_cast<double>(state.iterations()) * kChains * kRounds * 8 * 2 * 1e-9,
                                                 benchmark::Counter::kIsRate);
  state.SetLabel("AVX2 FMA, 12 chains x 8 floats");
}
BENCHMARK(BM_FmaPeak)->Unit(benchmark::kMillisecond)->MinTime(1.0);
#endif

}  // namespace

BENCHMARK_MAIN();
