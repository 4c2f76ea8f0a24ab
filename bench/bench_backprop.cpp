// Traced backward benchmark (issue 24, item 8: backpropagation stays interactive): the traced forward
// (Algorithm 10 with a Tracer binding θ by reference, as the app traces) followed by the traced
// backward (core/backprop/: the backward listings, every line an event, into the same trace), float32.
//
//   default  the app's default model's shape (assets/default-config.json: L = 2, H = 4, d_e = 64,
//            d_attn = d_mid = 16, d_mlp = 256, N_V = 64), seeded random θ, 64 tokens
//   gpt2     GPT-2 small's shape (L = 12, H = 12, d_e = 768, d_mlp = 3072, N_V = 50257, GELU_tanh, tied
//            W_u = W_eᵀ, pre-LN, learned positions: 124M parameters), seeded random θ, 32 tokens
//
// For each it prints one line: the median wall time of forward + backward and its CPU time (all
// threads), the wall time of each part, and of
// the backward's arithmetic alone: traced_backward without a tracer), the events, and Trace::bytes()
// of the whole trace. Targets (issue 24): default ≤ 5 ms; GPT-2 ≤ 1.5 s and
// ≤ 1 GB of trace. Not a test: timings depend on the machine (bench/CMakeLists.txt).
//
//   bench_backprop [--threads N] [--repeats 5] [--models default,gpt2]
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
#include "core/backprop/traced_backward.hpp"
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

sf::ModelConfig default_model() {
  sf::ModelConfig c;  // assets/default-config.json
  c.L = 2;
  c.H = 4;
  c.d_e = 64;
  c.d_attn = c.d_mid = 16;
  c.d_mlp = 256;
  c.l_max = 64;
  const std::string chars = " abcdefghijklmnopqrstuvwxyz0123456789.,;:!?'\"-+=*/<>()[]{}#&%";
  c.vocab.clear();
  for (char ch : chars) c.vocab.push_back(std::string(1, ch));
  return c;
}

struct Timing {
  double total, forward, backward, untraced, cpu;
  size_t events, bytes;
};

// One traced forward + backward of x; the parts timed separately.
Timing run_once(const sf::Model& m, const sf::Tokens& x) {
  sf::Trace trace;
  sf::Tracer tr(trace, sf::ParamBinding::View);
  const double c0 = cpu_ms();
  const auto t0 = Clock::now();
  sf::dtransformer<float>(x, m.config, m.weights(), &tr);
  const double fwd = ms_since(t0);
  const auto t1 = Clock::now();
  sf::traced_backward<float>(m, sf::dtraining_batch(x, m.config), &tr);
  const double bwd = ms_since(t1), cpu = cpu_ms() - c0;
  const auto t2 = Clock::now();
  sf::traced_backward<float>(m, sf::dtraining_batch(x, m.config), nullptr);  // the same arithmetic, no events
  return {fwd + bwd, fwd, bwd, ms_since(t2), cpu, trace.size(), trace.bytes()};
}

void bench(const char* name, const sf::ModelConfig& c, int length, int repeats) {
  const sf::Model m = sf::Model::initialised(c, 1);
  sf::Rng rng(7);
  sf::Tokens x;
  for (int t = 0; t < length; ++t) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 1)));
  run_once(m, x);  // warm-up
  std::vector<Timing> runs;
  for (int r = 0; r < repeats; ++r) runs.push_back(run_once(m, x));
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
  std::string models = "default,gpt2";
  for (int i = 1; i < argc; i += 2) {
    const std::string a = argv[i];
    if (i + 1 == argc) throw sf::Error(a + " needs a value (--threads N, --repeats N, --models default,gpt2)");
    const std::string v = argv[i + 1];
    if (a == "--threads") threads = std::stoi(v);
    else if (a == "--repeats") repeats = std::max(1, std::stoi(v));
    else if (a == "--models") models = v;
    else throw sf::Error("unknown option " + a + " (--threads N, --repeats N, --models default,gpt2)");
  }
  sf::set_compute_threads(threads);
  std::printf("compute threads: %d, median of %d after a warm-up\n", threads, repeats);
  if (models.find("default") != std::string::npos) bench("default", default_model(), 64, repeats);
  if (models.find("gpt2") != std::string::npos) bench("gpt2", sf::gpt2_small(), 32, std::min(repeats, 3));
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_backprop: %s\n", e.what());
  return 1;
}
