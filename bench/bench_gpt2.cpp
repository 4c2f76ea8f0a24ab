// GPT-2 124M benchmark (issue 11: big models stay interactive): the shape of GPT-2 small with
// random weights (seeded), float32, on the compute threads of core/parallel/parallel.hpp.
//
//   Shape: L = 12, H = 12, d_e = 768, d_attn = d_mid = 64, d_mlp = 3072, ℓ_max = 1024,
//   N_V = 50257, GELU_tanh, tied W_u = W_eᵀ, pre-LN, learned positions (124M parameters).
//
// It prints one JSON object (bench/run_gpt2.sh reads it beside bench/torch_gpt2.py's):
//   load_ms          open_model(--checkpoint) when given, else the seeded initialisation of θ
//   traced_ms        Algorithm 10 with a Tracer binding θ by reference (ParamBinding::View),
//                    32 tokens, median over the repeats
//   trace_mb         Trace::bytes() of that trace; trace_mb_copies: the same with ParamBinding::Copy
//   untraced_ms      Algorithm 10 untraced, 32 tokens, per thread count
//   kv_prefill_ms    Algorithm 14 with the KV cache, ℓ_gen = 1 from a 32-token prompt (τ = 0)
//   kv_tokens_per_s  decode rate: (ℓ_gen − 1) / (time(ℓ_gen) − time(1)), ℓ_gen = --gen
//   same_tokens      whether every thread count generated the same tokens with bitwise equal p
// Each time is the median of --repeats calls after one warm-up call.
//
//   bench_gpt2 [--threads 1,2] [--gen 64] [--repeats 5] [--checkpoint PATH] [--export DIR]
// --export DIR writes θ (theta.f32, raw float32), its parameter table (table.json), the prompt
// and P[:, 32] of the untraced forward (check.json), for bench/torch_gpt2.py to run the same
// weights and compare.
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/io/model_files.hpp"
#include "core/model/error.hpp"
#include "core/model/known_configs.hpp"
#include "core/model/rng.hpp"
#include "core/parallel/parallel.hpp"

namespace {

using Clock = std::chrono::steady_clock;

struct Options {
  std::vector<int> threads{1, 2};
  int gen = 64;
  int repeats = 5;
  std::string checkpoint, export_dir;
};

[[noreturn]] void usage(const std::string& why) {
  std::fprintf(stderr,
               "bench_gpt2: %s\nusage: bench_gpt2 [--threads 1,2] [--gen 64] [--repeats 5] [--checkpoint PATH] "
               "[--export DIR]\n",
               why.c_str());
  std::exit(2);
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (i + 1 >= argc) usage("missing value after " + a);
    const std::string v = argv[++i];
    if (a == "--threads") {
      o.threads.clear();
      std::stringstream ss(v);
      for (std::string t; std::getline(ss, t, ',');) o.threads.push_back(std::stoi(t));
    } else if (a == "--gen") {
      o.gen = std::stoi(v);
    } else if (a == "--repeats") {
      o.repeats = std::stoi(v);
    } else if (a == "--checkpoint") {
      o.checkpoint = v;
    } else if (a == "--export") {
      o.export_dir = v;
    } else {
      usage("unknown option " + a);
    }
  }
  if (o.threads.empty() || o.gen < 2 || o.repeats < 1) usage("--threads needs a count, --gen ≥ 2, --repeats ≥ 1");
  return o;
}

// Median wall time in ms of `repeats` calls of f after one warm-up call.
double median_ms(int repeats, const std::function<void()>& f) {
  f();
  std::vector<double> ms;
  for (int r = 0; r < repeats; ++r) {
    const auto t0 = Clock::now();
    f();
    ms.push_back(std::chrono::duration<double, std::milli>(Clock::now() - t0).count());
  }
  std::sort(ms.begin(), ms.end());
  return ms[ms.size() / 2];
}

void write_export(const std::string& dir, const sf::Model& m, const sf::Tokens& x, const sf::MatF& P) {
  std::ofstream(dir + "/theta.f32", std::ios::binary)
      .write(reinterpret_cast<const char*>(m.theta.data()), static_cast<std::streamsize>(m.theta.size() * sizeof(float)));
  std::ofstream t(dir + "/table.json");
  t << "[";
  bool first = true;
  for (const sf::ParamEntry& e : m.table.entries()) {
    t << (first ? "" : ",") << "\n{\"name\":\"" << e.name << "\",\"offset\":" << e.offset << ",\"count\":" << e.count
      << ",\"rows\":" << e.rows << ",\"cols\":" << e.cols << "}";
    first = false;
  }
  t << "\n]\n";
  std::ofstream c(dir + "/check.json");
  c << "{\"x\":[";
  for (size_t i = 0; i < x.size(); ++i) c << (i ? "," : "") << x[i];
  c << "],\"p_last\":[";
  for (Eigen::Index i = 0; i < P.rows(); ++i) c << (i ? "," : "") << P(i, P.cols() - 1);
  c << "]}\n";
}

}  // namespace

int main(int argc, char** argv) try {
  const Options o = parse(argc, argv);
  std::ostringstream js;
  js.precision(6);
  js << "{";

  // Load (or initialise) θ.
  const auto t0 = Clock::now();
  sf::Model model = o.checkpoint.empty() ? sf::Model::initialised(sf::gpt2_small(), 1)
                                         : std::move(sf::open_model(o.checkpoint).checkpoint.model);
  js << "\"load_what\":\"" << (o.checkpoint.empty() ? "seeded initialisation of θ" : "open_model " + o.checkpoint)
     << "\",\"load_ms\":" << std::chrono::duration<double, std::milli>(Clock::now() - t0).count() << ",";
  const sf::ModelConfig& c = model.config;
  const sf::GptW<const float> W = model.weights();
  js << "\"parameters\":" << model.theta.size() << ",\"theta_mb\":" << model.theta.size() * 4 / 1e6 << ",";

  sf::Rng rng(7);
  sf::Tokens x;  // a 32-token prompt of random ids
  for (int t = 0; t < 32; ++t) x.push_back(1 + static_cast<int>(rng.below(c.N_V() - 1)));

  // Traced forward: θ by reference, then by copy (memory only).
  sf::set_compute_threads(o.threads.back());
  size_t bytes_view = 0, bytes_copy = 0, events = 0;
  const double traced = median_ms(o.repeats, [&] {
    sf::Trace trace;
    sf::Tracer tr(trace, sf::ParamBinding::View);
    sf::dtransformer<float>(x, c, W, &tr);
    bytes_view = trace.bytes();
    events = trace.size();
  });
  {
    sf::Trace trace;
    sf::Tracer tr(trace, sf::ParamBinding::Copy);
    sf::dtransformer<float>(x, c, W, &tr);
    bytes_copy = trace.bytes();
  }
  js << "\"traced_threads\":" << o.threads.back() << ",\"traced_ms\":" << traced << ",\"trace_events\":" << events
     << ",\"trace_mb\":" << bytes_view / 1e6 << ",\"trace_mb_copies\":" << bytes_copy / 1e6 << ",";

  // Untraced forward and KV-cache generation per thread count.
  std::vector<sf::InferenceResult> runs;
  js << "\"by_threads\":[";
  for (size_t k = 0; k < o.threads.size(); ++k) {
    sf::set_compute_threads(o.threads[k]);
    sf::MatF P;
    const double untraced = median_ms(o.repeats, [&] { P = sf::dtransformer<float>(x, c, W); });
    if (k == 0 && !o.export_dir.empty()) write_export(o.export_dir, model, x, P);
    sf::InferenceOptions opt;
    opt.tau = 0;
    opt.kv_cache = true;
    opt.l_gen = 1;
    const double prefill = median_ms(o.repeats, [&] { sf::dinference(x, model, opt); });
    opt.l_gen = o.gen;
    sf::InferenceResult res;
    const double full = median_ms(std::max(1, o.repeats / 2), [&] { res = sf::dinference(x, model, opt); });
    runs.push_back(std::move(res));
    js << (k ? "," : "") << "{\"threads\":" << o.threads[k] << ",\"untraced_ms\":" << untraced
       << ",\"kv_prefill_ms\":" << prefill << ",\"kv_gen_ms\":" << full
       << ",\"kv_tokens_per_s\":" << (o.gen - 1) / ((full - prefill) / 1e3) << "}";
  }
  bool same = true;
  for (const auto& r : runs) {
    same = same && r.y == runs[0].y;
    for (size_t i = 0; same && i < r.steps.size(); ++i) same = r.steps[i].p == runs[0].steps[i].p;
  }
  js << "],\"gen\":" << o.gen << ",\"same_tokens\":" << (same ? "true" : "false") << "}";
  std::printf("%s\n", js.str().c_str());
  return 0;
} catch (const std::exception& e) {
  std::fprintf(stderr, "bench_gpt2: %s\n", e.what());
  return 1;
}
