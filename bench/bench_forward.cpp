// Forward-pass benchmarks of Algorithm 10, P ← DTransformer(x | θ), on the reference
// configuration (the default ModelConfig: d_e=64, L=2, H=4, d_attn=d_mid=16, d_mlp=256,
// ℓ_max=64, N_V=64), one thread (core is built with EIGEN_DONT_PARALLELIZE).
//
//   BM_ForwardUntraced  16 sequences of 64 tokens per iteration, tracing off: tokens/s.
//                       Target ≥ 100,000 tokens/s.
//   BM_ForwardTraced    one traced 64-token pass (every line's values copied into the trace):
//                       time per call and events per trace. Target ≤ 2 ms.
//
// bench/torch_forward.py runs the same model shape in PyTorch; bench/run_forward.sh prints
// both side by side.
#include <benchmark/benchmark.h>

#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/rng.hpp"

namespace {

constexpr int kBatch = 16;  // sequences per iteration
constexpr int kLength = 64;  // ℓ = ℓ_max

// 16 random sequences of 1-based ids, each starting with bos_token, fixed by a seed.
std::vector<sf::Tokens> make_batch(const sf::ModelConfig& c) {
  sf::Rng rng(42);
  std::vector<sf::Tokens> batch(kBatch);
  for (auto& x : batch) {
    x.push_back(c.bos_token());
    while (static_cast<int>(x.size()) < kLength) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 3)));
  }
  return batch;
}

void BM_ForwardUntraced(benchmark::State& state) {
  const sf::Model model = sf::Model::initialised(sf::ModelConfig{}, 1);
  const auto W = model.weights();
  const auto batch = make_batch(model.config);
  for (auto _ : state) {
    for (const auto& x : batch) {
      sf::MatF P = sf::dtransformer<float>(x, model.config, W);
      benchmark::DoNotOptimize(P.data());
      benchmark::ClobberMemory();
    }
  }
  const double tokens = static_cast<double>(state.iterations()) * kBatch * kLength;
  state.counters["tokens/s"] = benchmark::Counter(tokens, benchmark::Counter::kIsRate);
  state.SetLabel("16 x 64 tokens per iteration");
}
BENCHMARK(BM_ForwardUntraced)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_ForwardTraced(benchmark::State& state) {
  const sf::Model model = sf::Model::initialised(sf::ModelConfig{}, 1);
  const auto W = model.weights();
  const sf::Tokens x = make_batch(model.config)[0];
  size_t events = 0;
  for (auto _ : state) {
    sf::Trace trace;
    sf::Tracer tracer(trace);
    sf::MatF P = sf::dtransformer<float>(x, model.config, W, &tracer);
    benchmark::DoNotOptimize(P.data());
    events = trace.size();
  }
  state.counters["events"] = static_cast<double>(events);
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * kLength, benchmark::Counter::kIsRate);
  state.SetLabel("one 64-token pass, traced");
}
BENCHMARK(BM_ForwardTraced)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
