// BERT benchmarks (Algorithm 9 ETransformer, trained by Algorithm 12's masked language modelling
// in the Trainer's practical mode) on the reference configuration with arch = "bert": d_e=64,
// L=2, H=4, d_attn=d_mid=16, d_mlp=256, d_f=64, ℓ=ℓ_max=64, N_V=64, on 1 and 2 threads (the argument "threads:N").
//
//   BM_BertForwardUntraced  16 sequences of 64 tokens per iteration, tracing off: tokens/s, the
//                           FLOPs of its matrix products and the GFLOP/s achieved.
//   BM_BertForwardTraced    one traced 64-token pass: time per call and events per trace.
//   BM_BertTrainStep        Trainer::step(): a minibatch of 16 sequences of 64 tokens, each
//                           position masked with p_mask = 0.15 (the paper's rule), forward,
//                           backward, clipping and Adam: tokens/s, FLOPs (3× the forward's), GFLOP/s.
//   BM_Gemm1024             Eigen's 1024² f32 product: the GEMM ceiling (bench_common.hpp).
//
// bench/torch_bert.py runs the same model in PyTorch; bench/run_bert.sh prints both side by side.
#include <benchmark/benchmark.h>

#include "bench/bench_common.hpp"

namespace {

using namespace sf::bench;

sf::ModelConfig bert_config() {
  sf::ModelConfig c;
  c.arch = "bert";
  return c;
}

// FLOPs of a forward pass of the minibatch: the layers, then Algorithm 9's final W_f (d_f × d_e) and
// W_u (N_V × d_f) per token.
double bert_forward_flops(const sf::ModelConfig& c) {
  return forward_flops(c, kBatch, kLength, 2.0 * c.d_f * c.d_e + 2.0 * c.N_V() * c.d_f);
}

// Algorithm 9 through the architecture (P for x; BERT reads no context).
struct Bert {
  sf::Model model = sf::Model::initialised(bert_config(), 1);
  const sf::Architecture& arch = sf::architecture(model.config);
  sf::MatF operator()(const sf::Tokens& x, sf::Tracer* tr) const { return arch.forward(model, {}, x, tr); }
};

void BM_BertForwardUntraced(benchmark::State& state) {
  forward_untraced(state, Bert{});
  count_flops(state, bert_forward_flops(bert_config()));
}
BENCHMARK(BM_BertForwardUntraced)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_BertForwardTraced(benchmark::State& state) { forward_traced(state, Bert{}); }
BENCHMARK(BM_BertForwardTraced)->Unit(benchmark::kMillisecond)->MinTime(2.0);

void BM_BertTrainStep(benchmark::State& state) {
  const sf::ModelConfig c = bert_config();
  sf::TrainOptions opt;
  opt.p_mask = 0.15;
  train_steps(state, c, random_text(c), opt);
  count_flops(state, 3.0 * bert_forward_flops(c));  // the backward: two products the size of each forward one
}
BENCHMARK(BM_BertTrainStep)->ArgName("threads")->Arg(1)->Arg(2)->Unit(benchmark::kMillisecond)->MinTime(3.0);

BENCHMARK(BM_Gemm1024)->Unit(benchmark::kMillisecond)->MinTime(2.0);

}  // namespace

BENCHMARK_MAIN();
