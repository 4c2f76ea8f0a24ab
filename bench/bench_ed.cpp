// Encoder-decoder benchmarks (Algorithm 8 EDTransformer, post-LN, ReLU) on the reference
// configuration with arch = "ed": L_enc = L_dec = 2, d_e=64, H=4, d_attn=d_mid=16, d_mlp=256,
// ℓ_max=64, N_V=64, on 1 and 2 threads (the argument "threads:N").
//
//   BM_EdTrainStep        Trainer::step() (Algorithm 11's loss, practical mode): a minibatch of 16
//                         pairs (z, x), ℓ_z = ℓ_x = 64, forward, backward, clipping and Adam.
//                         tokens/s counts x's 16 × 64 tokens.
//   BM_EdGenerate/reuse:0 Algorithm 15, EDInference, greedy (τ = 0), untraced, for 4 random
//   BM_EdGenerate/reuse:1 contexts z of 64 tokens per iteration: the paper's form (z re-encoded at
//                         every step) and reuse_encoding (the encoder once per z). The weights are
//                         random, so eos_token is rarely the argmax and x̂ runs to the ℓ_max cap
//                         (63 generated tokens); tokens/s counts the tokens generated, and
//                         "tokens/call" says how many one z got on average.
//
// bench/torch_ed.py runs the same model in PyTorch; bench/run_ed.sh prints both side by side.
#include <benchmark/benchmark.h>

#include "bench/bench_common.hpp"
#include "core/algorithms/algorithms.hpp"

namespace {

using namespace sf::bench;

constexpr int kContexts = 4;  // z's per iteration of BM_EdGenerate (as torch_ed.py's CONTEXTS)

sf::ModelConfig ed_config() {
  sf::ModelConfig c;
  c.arch = "ed";
  return c;
}

void BM_EdTrainStep(benchmark::State& state) {
  const sf::ModelConfig c = ed_config();
  train_steps(state, c, random_text(c, /*pairs=*/true));
}
BENCHMARK(BM_EdTrainStep)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(3.0);

void BM_EdGenerate(benchmark::State& state) {
  sf::set_compute_threads(1);
  const sf::Model model = sf::Model::initialised(ed_config(), 1);
  std::vector<sf::Tokens> zs = random_tokens(model.config);  // [bos_token, 62 characters, eos_token]
  zs.resize(kContexts);
  for (auto& z : zs) z.back() = model.config.eos_token();
  sf::EdInferenceOptions opt;
  opt.tau = 0.0;
  opt.reuse_encoding = state.range(0) != 0;
  double generated = 0;  // in the last iteration
  const double cpu_ms0 = process_cpu_ms();
  for (auto _ : state) {
    generated = 0;
    for (const auto& z : zs) {
      const sf::EdInferenceResult r = sf::edinference(z, model, opt);
      generated += static_cast<double>(r.steps.size());
      benchmark::DoNotOptimize(r.x_hat.data());
    }
  }
  count_tokens(state, generated, cpu_ms0);
  state.counters["tokens/call"] = generated / kContexts;
  state.SetLabel(opt.reuse_encoding ? "4 contexts, greedy, reuse_encoding" : "4 contexts, greedy, re-encoding");
}
BENCHMARK(BM_EdGenerate)->ArgName("reuse")->Arg(0)->Arg(1)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
