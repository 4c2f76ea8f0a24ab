// Traced backward benchmark (issue 24, item 8: backpropagation stays interactive): the traced forward
// (the architecture's algorithm with a Tracer binding θ by reference, as the app traces) followed by the
// traced backward (core/backprop/: the backward listings, every line an event, into the same trace), float32.
//
//   default  the app's default model's shape (assets/default-config.json: GPT, L = 2, H = 4, d_e = 64,
//            d_attn = d_mid = 16, d_mlp = 256, N_V = 64), seeded random θ, 64 tokens
//   bert     the built-in BERT's shape (assets/bert-config.json: the same sizes, d_f = 64), 64 tokens of
//            which every 7th (9 positions) is masked: Algorithm 9, then Algorithm 12's loss and Algorithm
//            9's adjoint
//   ed       the built-in encoder-decoder's shape (assets/ed-config.json: the same sizes, L_enc = L_dec = 2),
//            ℓ_z = ℓ_x = 64: Algorithm 8, then Algorithm 11's loss and Algorithm 8's adjoint
//   gpt2     GPT-2 small's shape (L = 12, H = 12, d_e = 768, d_mlp = 3072, N_V = 50257, GELU_tanh, tied
//            W_u = W_eᵀ, pre-LN, learned positions: 124M parameters), seeded random θ, 32 tokens
//
// For each it prints one line: the median wall time of forward + backward and its CPU time (all
// threads), the wall time of each part, and of
// the backward's arithmetic alone: traced_backward without a tracer), the events, and Trace::bytes()
// of the whole trace. Targets (issue 24): default ≤ 5 ms; GPT-2 ≤ 1.5 s and
// ≤ 1 GB of trace. Not a test: timings depend on the machine (bench/CMakeLists.txt).
//
//   bench_backprop [--threads N] [--repeats 5] [--models default,bert,ed,gpt2]
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <ctime>
#include <cstdlib>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/backprop/traced_backward.hpp"
#include "core/gradients/sequence_gradient.hpp"
#include "core/model/error.hpp"
#include "core/model/known_configs.hpp"
#include "core/model/rng.hpp"
#include "core/parallel/parallel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// CPU time of the whole process (every thread), ms: on a loaded machine wall time also counts the
// time other processes had the cores; with --threads 1 this is the single core's work.
double cpu_ms() {
  timespec ts{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts);
  return ts.tv_sec * 1e3 + ts.tv_nsec / 1e6;
}

// assets/default-config.json's sizes; `arch` "gpt" (the default model), "bert" (assets/bert-config.json:
// d_f = 64) or "ed" (assets/ed-config.json: L_enc = L_dec = 2).
sf::ModelConfig builtin_model(const std::string& arch) {
  sf::ModelConfig c;
  c.arch = arch;
  c.L = c.L_enc = c.L_dec = 2;
  c.H = 4;
  c.d_e = c.d_f = 64;
  c.d_attn = c.d_mid = 16;
  c.d_mlp = 256;
  c.l_max = 64;
  const std::string chars = " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-+=*/<>()[]{}#&%";
  c.vocab.clear();
  for (char ch : chars) c.vocab.push_back(std::string(1, ch));
  return c;
}

// One sequence of the architecture's training algorithm: Algorithm 13's batch for GPT; BERT's x with
// every 7th position masked (Algorithm 12); the encoder-decoder's (z, x) (Algorithm 11).
struct Input {
  sf::Tokens z, x;  // x: the forward's input (BERT: x̃)
  sf::Batch batch;
};
Input input_of(const sf::ModelConfig& c, const sf::Tokens& z, const sf::Tokens& x) {
  if (c.arch == "bert") {
    std::vector<int> masks;
    for (int t = 7; t <= static_cast<int>(x.size()); t += 7) masks.push_back(t);
    sf::Batch b = sf::masked_batch(x, masks, c.mask_token());
    return {{}, b.tokens, b};
  }
  if (c.arch == "ed") return {z, x, sf::next_token_batch(z, x)};
  return {{}, x, sf::dtraining_batch(x, c)};
}

struct Timing {
  double total, forward, backward, untraced, cpu;
  size_t events, bytes;
};

// One traced forward + backward of the input; the parts timed separately.
Timing run_once(const sf::Model& m, const Input& in) {
  sf::Trace trace;
  sf::Tracer tr(trace, sf::ParamBinding::View);
  const double c0 = cpu_ms();
  const auto t0 = Clock::now();
  sf::architecture(m.config).forward(m, in.z, in.x, &tr);
  const double fwd = ms_since(t0);
  const auto t1 = Clock::now();
  sf::traced_backward<float>(m, in.batch, &tr);
  const double bwd = ms_since(t1), cpu = cpu_ms() - c0;
  const auto t2 = Clock::now();
  sf::traced_backward<float>(m, in.batch, nullptr);  // the same arithmetic, no events
  return {fwd + bwd, fwd, bwd, ms_since(t2), cpu, trace.size(), trace.bytes()};
}

sf::Tokens random_tokens(const sf::ModelConfig& c, int length, sf::Rng& rng) {
  sf::Tokens x;
  for (int t = 0; t < length; ++t) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 1)));
  return x;
}

void bench(const char* name, const sf::ModelConfig& c, int length, int repeats) {
  const sf::Model m = sf::Model::initialised(c, 1);
  sf::Rng rng(7);
  const sf::Tokens x = random_tokens(c, length, rng);
  const Input in = input_of(c, c.arch == "ed" ? random_tokens(c, length, rng) : sf::Tokens{}, x);
  run_once(m, in);  // warm-up
  std::vector<Timing> runs;
  for (int r = 0; r < repeats; ++r) runs.push_back(run_once(m, in));
  std::sort(runs.begin(), runs.end(), [](const Timing& a, const Timing& b) { return a.total < b.total; });
  const Timing& med = runs[runs.size() / 2];
  std::printf("%-8s ℓ=%-3d params=%zu  fwd+bwd %.2f ms wall, %.2f ms CPU (forward %.2f, backward %.2f; backward "
              "untraced %.2f)  events %zu  trace %.1f MB\n",
              name, length, m.theta.size(), med.total, med.cpu, med.forward, med.backward, med.untraced, med.events,
              med.bytes / 1e6);
}

}  // namespace

int main(int argc, char** argv) try {
  int threads = 1, repeats = 5;
  std::string models = "default,bert,ed,gpt2";
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 == argc) throw sf::Error(a + " needs a value (--threads N, --repeats N, --models default,bert,ed,gpt2)");
    const std::string v = argv[i + 1];
    if (a == "--threads") threads = std::stoi(v);
    else if (a == "--repeats") repeats = std::max(1, std::stoi(v));
    else if (a == "--models") models = v;
    else throw sf::Error("unknown option " + a + " (--threads N, --repeats N, --models default,bert,ed,gpt2)");
  }
  sf::set_compute_threads(threads);
  std::printf("compute threads: %d, median of %d after a warm-up\n", threads, repeats);
  if (models.find("default") != std::string::npos) bench("default", builtin_model("gpt"), 64, repeats);
  if (models.find("bert") != std::string::npos) bench("bert", builtin_model("bert"), 64, repeats);
  if (models.find("ed") != std::string::npos) bench("ed", builtin_model("ed"), 64, repeats);
  if (models.find("gpt2") != std::string::npos) bench("gpt2", sf::gpt2_small(), 32, std::min(repeats, 3));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_backprop: %s\n", e.what());
  return 1;
}
