// What the benchmarks of bench/ share: the reference minibatch (16 sequences of ℓ = 64 tokens),
// random data of the default vocabulary fixed by a seed, and the bodies of the forward-pass and
// training-step benchmarks, each over any architecture (the caller names the forward call or
// the configuration). Threads: core is built with EIGEN_DONT_PARALLELIZE; each benchmark takes the
// thread count as its argument ("threads:1", "threads:2"), given to sf::set_compute_threads (the
// untraced forward pass shares the minibatch's sequences among them) and to
// TrainOptions::threads (the Trainer splits the minibatch).
#pragma once
#include <benchmark/benchmark.h>

#include <time.h>

#include <algorithm>
#include <concepts>
#include <string>
#include <utility>
#include <vector>

#include "core/model/rng.hpp"
#include "core/parallel/parallel.hpp"
#include "core/trace/trace.hpp"
#include "core/training/training.hpp"

namespace sf::bench {

constexpr int kBatch = 16;   // sequences per iteration / minibatch
constexpr int kLength = 64;  // ℓ = ℓ_max: [bos_token, 62 characters, eos_token]

// The CPU time of the whole process (every thread) in ms.
inline double process_cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

// tokens/s over the iterations run, `tokens` per iteration (also given as "tokens/iteration",
// which bench/pair_report.py divides by the wall and the CPU time per iteration). Google
// Benchmark's CPU time, and so tokens/s, count the calling thread only: on 2 threads compare wall
// (real) time; "process CPU ms/iteration" counts every thread's CPU time, given cpu_ms0 =
// process_cpu_ms() before the loop.
inline void count_tokens(benchmark::State& state, double tokens, double cpu_ms0) {
  state.counters["process CPU ms/iteration"] =
      (process_cpu_ms() - cpu_ms0) / static_cast<double>(std::max<benchmark::IterationCount>(state.iterations(), 1));
  state.counters["tokens/iteration"] = tokens;
  state.counters["tokens/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * tokens, benchmark::Counter::kIsRate);
}

// FLOPs of the matrix products of one forward pass over B sequences of l tokens (2 per
// multiply-add). Per token and layer: Q, K, V for every head (2·d_e·H(2·d_attn + d_mid)), S = KᵀQ
// and V·A over the whole ℓ×ℓ score matrix (2·ℓ·H·(d_attn + d_mid)), W_o (2·H·d_mid·d_e), the MLP
// (2·2·d_e·d_mlp); then the output layers, out_per_token FLOPs per token (GPT: W_u, 2·d_e·N_V).
inline double forward_flops(const ModelConfig& c, int B, int l, double out_per_token) {
  const double per_layer = 2.0 * c.d_e * c.H * (2 * c.d_attn + c.d_mid) + 2.0 * l * c.H * (c.d_attn + c.d_mid) +
                           2.0 * c.H * c.d_mid * c.d_e + 4.0 * c.d_e * c.d_mlp;
  return static_cast<double>(B) * l * (c.L * per_layer + out_per_token);
}

// The counters bench/pair_report.py reads to state a benchmark's share of the GEMM ceiling:
// "FLOP/iteration" and the rate achieved, "GFLOP/s".
inline void count_flops(benchmark::State& state, double flops) {
  state.counters["FLOP/iteration"] = flops;
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * flops * 1e-9, benchmark::Counter::kIsRate);
}

// BM_Gemm1024: Eigen's f32 matrix product, 1024×1024 by 1024×1024, one thread: the machine's
// matrix-multiply ceiling (GFLOP/s) that pair_report.py states the other benchmarks' share of.
inline void BM_Gemm1024(benchmark::State& state) {
  const int n = 1024;
  const Eigen::MatrixXf A = Eigen::MatrixXf::Random(n, n), B = Eigen::MatrixXf::Random(n, n);
  Eigen::MatrixXf C(n, n);
  for (auto _ : state) {
    C.noalias() = A * B;
    benchmark::DoNotOptimize(C.data());
    benchmark::ClobberMemory();
  }
  state.counters["GFLOP/s"] =
      benchmark::Counter(static_cast<double>(state.iterations()) * 2.0 * n * n * n * 1e-9, benchmark::Counter::kIsRate);
  state.SetLabel("Eigen f32 1024x1024 GEMM");
}

// kBatch random sequences of 1-based ordinary ids, each starting with bos_token, fixed by a seed.
inline std::vector<Tokens> random_tokens(const ModelConfig& c, uint64_t seed = 42) {
  Rng rng(seed);
  std::vector<Tokens> batch(kBatch);
  for (auto& x : batch) {
    x.push_back(c.bos_token());
    while (static_cast<int>(x.size()) < kLength) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 3)));
  }
  return batch;
}

// A random string of n characters of the configuration's vocabulary.
inline std::string random_chars(const ModelConfig& c, Rng& rng, int n) {
  std::string s;
  for (int t = 0; t < n; ++t) s += c.vocab[rng.below(c.vocab.size())];
  return s;
}

// 64 minibatches of random lines of 62 characters (ℓ = 64 once tokenized); with `pairs`, each
// line is "z<TAB>x", both sides so (the encoder-decoder's ℓ_z = ℓ_x = 64).
inline Dataset random_text(const ModelConfig& c, bool pairs = false) {
  Rng rng(42);
  Dataset d;
  d.name = pairs ? "random pairs" : "random text";
  d.vocab = c.vocab;
  for (int n = 0; n < 64 * kBatch; ++n) {
    std::string s = random_chars(c, rng, kLength - 2);
    if (pairs) s += "\t" + random_chars(c, rng, kLength - 2);
    d.train.push_back(std::move(s));
  }
  return d;
}

// A forward pass: P for the sequence x, traced when tr is given, of f.model.
template <class F>
concept ForwardFn = requires(const F& f, const Tokens& x, Tracer* tr) {
  { f(x, tr) };
  { f.model.config } -> std::convertible_to<const ModelConfig&>;
};

// The thread count of a benchmark: its argument state.range(0) ("threads:N"), also given to
// sf::set_compute_threads.
inline int bench_threads(benchmark::State& state) {
  const int threads = static_cast<int>(state.range(0));
  set_compute_threads(threads);
  return threads;
}

// random_tokens(): kBatch sequences of kLength tokens per iteration, tracing off, the sequences
// shared among bench_threads() threads (parallel_for; each P its own): tokens/s.
template <ForwardFn F>
void forward_untraced(benchmark::State& state, const F& forward) {
  const int threads = bench_threads(state);
  const std::vector<Tokens> batch = random_tokens(forward.model.config);
  std::vector<MatF> P(batch.size());
  const double cpu_ms0 = process_cpu_ms();
  for (auto _ : state) {
    parallel_for(static_cast<int>(batch.size()), [&](int n) { P[n] = forward(batch[n], nullptr); });
    benchmark::DoNotOptimize(P.data());
    benchmark::ClobberMemory();
  }
  count_tokens(state, static_cast<double>(kBatch) * kLength, cpu_ms0);
  state.SetLabel("16 x 64 tokens per iteration, " + std::to_string(threads) + " thread(s)");
}

// One traced pass of kLength tokens (every line's values copied into the trace), one thread: time
// per call and events per trace.
template <ForwardFn F>
void forward_traced(benchmark::State& state, const F& forward) {
  set_compute_threads(1);
  const Tokens x = random_tokens(forward.model.config)[0];
  size_t events = 0;
  const double cpu_ms0 = process_cpu_ms();
  for (auto _ : state) {
    Trace trace;
    Tracer tracer(trace);
    MatF P = forward(x, &tracer);
    benchmark::DoNotOptimize(P.data());
    events = trace.size();
  }
  state.counters["events"] = static_cast<double>(events);
  count_tokens(state, static_cast<double>(x.size()), cpu_ms0);
  state.SetLabel("one 64-token pass, traced");
}

// The Trainer's practical step on `data` (minibatches of kBatch, Adam, clipping), after one step
// that sizes the buffers, on bench_threads() threads; `opt` as given but for batch, steps and threads. tokens/s counts
// kBatch·kLength per step (x's tokens; the encoder-decoder's context z is not counted).
inline void train_steps(benchmark::State& state, const ModelConfig& c, Dataset data, TrainOptions opt = {}) {
  opt.batch = kBatch;
  opt.steps = 1'000'000'000;
  opt.threads = bench_threads(state);
  Trainer trainer(Model::initialised(c, 1), std::move(data), opt);
  trainer.step();
  const double cpu_ms0 = process_cpu_ms();
  for (auto _ : state) {
    const StepInfo info = trainer.step();
    benchmark::DoNotOptimize(info.loss);
  }
  count_tokens(state, static_cast<double>(kBatch) * kLength, cpu_ms0);
  state.SetLabel("16 x 64 tokens per step, Adam, " + std::to_string(opt.threads) + " thread(s)");
}

}  // namespace sf::bench
