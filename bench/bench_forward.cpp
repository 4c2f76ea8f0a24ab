// Forward-pass benchmarks of Algorithm 10, P ← DTransformer(x | θ), on the reference
// configuration (the default ModelConfig: d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256,
// ℓ_max=64, N_V=64), on 1 and 2 threads (the argument "threads:N"; core is built with
// EIGEN_DONT_PARALLELIZE, and the 16 sequences are shared among the threads).
//
//   BM_ForwardUntraced  16 sequences of 64 tokens per iteration, tracing off: tokens/s, the
//                       FLOPs of its matrix products and the GFLOP/s achieved.
//   BM_Gemm1024         Eigen's 1024² f32 product: the GEMM ceiling (bench_common.hpp).
//   BM_ForwardTraced    one traced 64-token pass (every line's values copied into the trace):
//                       time per call and events per trace. Target ≤ 2 ms.
//
// bench/torch_forward.py runs the same model shape in PyTorch; bench/run_forward.sh prints
// both side by side.
#include "bench/bench_common.hpp"
#include "core/algorithms/algorithms.hpp"

namespace {

using namespace sf::bench;

// Algorithm 10 on the default (GPT) configuration, its weights bound once.
struct Gpt {
  sf::Model model = sf::Model::initialised(sf::ModelConfig{}, 1);
  sf::GptW<const float> W = model.weights();
  sf::MatF operator()(const sf::Tokens& x, sf::Tracer* tr) const {
    return sf::dtransformer<float>(x, model.config, W, tr);
  }
};

void BM_ForwardUntraced(benchmark::State& state) {
  const Gpt gpt;
  forward_untraced(state, gpt);
  count_flops(state, forward_flops(gpt.model.config, kBatch, kLength, 2.0 * gpt.model.config.d_e * gpt.model.config.N_V()));
}
BENCHMARK(BM_ForwardUntraced)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ForwardTraced(benchmark::State& state) { forward_traced(state, Gpt{}); }
BENCHMARK(BM_ForwardTraced)->Unit(benchmark::kMillisecond)->MinTime(2.0);

BENCHMARK(BM_Gemm1024)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
