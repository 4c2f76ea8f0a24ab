// Attention benchmark: Algorithm 5, MHAttention, as core computes it with Eigen (1 and 2
// threads) and as the GPU computes it with the OpenGL compute shaders of shaders/ (the
// teaching form, one dispatch per pseudocode line, and the fused flash-attention form), for
// every kind of attention the paper's transformers make:
//
//   causal         self-attention, Mask[t_z, t_x] = [[t_z ≤ t_x]] (Algorithm 10's)
//   bidirectional  self-attention, Mask ≡ 1 (Algorithm 9's)
//   cross-half     cross-attention, Z ≠ X with ℓ_z = ℓ_x/2, Mask ≡ 1 (Algorithm 8 line 16)
//   cross-double   cross-attention, ℓ_z = 2·ℓ_x, Mask ≡ 1
//   causal-rope    causal, RoPE (rope_base 10000) on Q and K
//   causal-alibi   causal, ALiBi (m_h·B added to the scores)
//
//   Shape: H = 8 heads, d_attn = d_mid = 64, d_x = d_z = d_out = 512, ℓ_x ∈ {64, 256, 1024,
//   4096} (--lengths), float32; random weights N(0, 1/fan-in), inputs N(0, 1).
//   FLOPs counted (2 per multiply–add, the same count for every implementation, so that GFLOP/s
//   compare as times do): lines 1–3 per head, 2·ℓ_x·d_x·d_attn + 2·ℓ_z·d_z·(d_attn + d_mid);
//   lines 4 and 6 per head, S = KᵀQ and Ṽ = V·A over the cells the mask keeps only,
//   2·n·(d_attn + d_mid) with n = ℓ_z·ℓ_x for Mask ≡ 1 and ℓ(ℓ+1)/2 for the causal mask;
//   Algorithm 5 line 4, 2·ℓ_x·H·d_mid·d_out. Not counted: softmax, masking, biases, RoPE's
//   rotation, ALiBi's bias. Eigen and the teaching form compute the masked cells of S anyway
//   (dense); the fused form skips the key tiles the causal mask hides.
//   Eigen, 1 and 2 threads: core's mh_attention with set_compute_threads(1 or 2) (core's heads
//     and large products on its pool; the result is bitwise the same on any count).
//   GPU: "wall ms" is the whole call, untimed per dispatch: upload of X, Z and the weights, the
//     dispatches, read-back of Ṽ (what the app's and the CLI's GPU hook pay per call). "GPU ms"
//     is the sum of the dispatches' GL_TIMESTAMP intervals in a second, timed series of calls
//     ("not measured" where the driver has no GPU clock); "L4–6 ms" its part in lines 4–6.
//   "× Eigen-2": Eigen-2's ms / this row's wall ms (above 1: faster than Eigen on 2 threads).
//   "max |ΔṼ|": max |Ṽ − Ṽ_Eigen| against core's mh_attention (1 thread), over every entry.
//   Each time is the median of repeated calls after one warm-up call (which compiles shaders).
//
// On Mesa's llvmpipe the "GPU" is the CPU: the shaders are far slower than Eigen there, and
// the GPU rows stop at ℓ = 256 unless --max-l says otherwise (ℓ = 1024 takes minutes). On a
// machine with a GPU and no X, the context comes from EGL_PLATFORM_DEVICE_EXT (see
// gpu/headless_gl.hpp).
//
// Columns are separated by two or more spaces (and no cell holds two), so that
// bench/attention_report.py can read the rows back.
//
//   bench_attention [--lengths 64,256,1024,4096] [--max-l N] [--min-time SECONDS] [--kinds K,…]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <iterator>
#include <limits>
#include <new>
#include <sstream>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/model/rng.hpp"
#include "core/parallel/parallel.hpp"
#include "gpu/attention.hpp"

namespace {

using sf::MatF;
using Clock = std::chrono::steady_clock;

constexpr int kH = 8, kD = 64, kDe = 512;
constexpr int kNoLimit = 1 << 30;  // --max-l's default on a real GPU

// The GPU's Ṽ is right when max |Ṽ_gpu − Ṽ_Eigen| ≤ kTol: tests/gpu/gpu_test_support.hpp derives
// 1e-4 for the same scaling (inputs O(1), weights N(0, 1/fan-in), d_attn = 64): a score's
// rounding has σ ≈ 21u (u = 2⁻²⁴); Ṽ = V·A over ℓ_z keys adds σ ≲ u·√(3·ℓ_z), 157u = 9.4e-6 at
// the largest ℓ_z here (8192); W_o's sum over H·d_mid = 512 terms of weight 1/√512 keeps σ.
// So 1e-4 is ≥ 10σ everywhere here, while a wrong index, mask or scale is O(0.1).
constexpr double kTol = 1e-4;

// One kind of attention call: how ℓ_z follows from ℓ_x, the mask, the variant.
struct Kind {
  const char* name;  // the --kinds key and the table's first column
  bool self;         // Z = X
  int lz_num, lz_den;  // ℓ_z = ℓ_x·num/den
  bool causal;       // else Mask ≡ 1
  sf::AttentionOptions av;
};

std::vector<Kind> all_kinds() {
  sf::AttentionOptions rope, alibi;
  rope.rope_base = 10000;
  alibi.alibi = true;
  return {{"causal", true, 1, 1, true, {}},          {"bidirectional", true, 1, 1, false, {}},
          {"cross-half", false, 1, 2, false, {}},    {"cross-double", false, 2, 1, false, {}},
          {"causal-rope", true, 1, 1, true, rope},   {"causal-alibi", true, 1, 1, true, alibi}};
}

struct Options {
  std::vector<int> lengths{64, 256, 1024, 4096};
  int max_l = 0;  // 0: all on a GPU, 256 on a software renderer
  double min_time = 1.0;
  std::vector<Kind> kinds = all_kinds();
};

[[noreturn]] void usage(const std::string& why) {
  std::string names;
  for (const Kind& k : all_kinds()) names += std::string(names.empty() ? "" : ",") + k.name;
  std::fprintf(stderr,
               "bench_attention: %s\nusage: bench_attention [--lengths 64,256,1024,4096] [--max-l N] "
               "[--min-time SECONDS] [--kinds %s]\n",
               why.c_str(), names.c_str());
  std::exit(2);
}

std::vector<std::string> split_commas(const std::string& v) {
  std::vector<std::string> out;
  std::stringstream ss(v);
  for (std::string s; std::getline(ss, s, ',');) out.push_back(s);
  return out;
}

std::vector<Kind> parse_kinds(const std::string& v) {
  std::vector<Kind> out;
  for (const std::string& name : split_commas(v)) {
    const auto all = all_kinds();
    const auto it = std::find_if(all.begin(), all.end(), [&](const Kind& k) { return name == k.name; });
    if (it == all.end()) usage("unknown kind '" + name + "'");
    out.push_back(*it);
  }
  return out;
}

Options parse(int argc, char** argv) {
  Options o;
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    if (a == "--help" || a == "-h") usage("Algorithm 5 on Eigen and on the GPU, by kind of attention");
    if (i + 1 >= argc) usage(a + " needs a value");
    const std::string v = argv[++i];
    try {
      if (a == "--lengths") {
        o.lengths.clear();
        for (const std::string& n : split_commas(v)) o.lengths.push_back(std::stoi(n));
      } else if (a == "--max-l") {
        o.max_l = std::stoi(v);
      } else if (a == "--min-time") {
        o.min_time = std::stod(v);
      } else if (a == "--kinds") {
        o.kinds = parse_kinds(v);
      } else {
        usage("unknown option " + a);
      }
    } catch (const std::logic_error&) {
      usage("bad value for " + a + ": " + v);
    }
  }
  if (o.lengths.empty() || o.kinds.empty()) usage("--lengths and --kinds need at least one entry");
  for (int l : o.lengths)
    if (l < 2) usage("lengths must be at least 2 (cross-half attends to ℓ_x/2 keys)");
  if (o.max_l < 0) usage("--max-l must be positive (or 0: every ℓ on a GPU, 256 on a software renderer)");
  return o;
}

double ms_since(Clock::time_point t0) { return std::chrono::duration<double, std::milli>(Clock::now() - t0).count(); }

// The median; NaN when any is NaN (a dispatch the driver could not time).
double median(std::vector<double> v) {
  if (std::any_of(v.begin(), v.end(), [](double x) { return std::isnan(x); }))
    return std::numeric_limits<double>::quiet_NaN();
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

MatF random_matrix(sf::Rng& rng, int rows, int cols, double sigma) {
  MatF m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(sigma * rng.normal());
  return m;
}

// One layer's parameters (eq. 4), random, with the views the algorithms take.
struct Layer {
  std::vector<MatF> W_q, W_k, W_v, b_q, b_k, b_v;
  MatF W_o, b_o;
  sf::MHAttentionW<const float> W;
  explicit Layer(sf::Rng& rng) {
    const double s = 1.0 / std::sqrt(kDe);
    for (int h = 0; h < kH; ++h) {
      W_q.push_back(random_matrix(rng, kD, kDe, s));
      W_k.push_back(random_matrix(rng, kD, kDe, s));
      W_v.push_back(random_matrix(rng, kD, kDe, s));
      b_q.push_back(random_matrix(rng, kD, 1, 0.1));
      b_k.push_back(random_matrix(rng, kD, 1, 0.1));
      b_v.push_back(random_matrix(rng, kD, 1, 0.1));
    }
    W_o = random_matrix(rng, kDe, kH * kD, 1.0 / std::sqrt(kH * kD));
    b_o = random_matrix(rng, kDe, 1, 0.1);
    using M = sf::MapM<const float>;
    using V = sf::MapV<const float>;
    for (int h = 0; h < kH; ++h)
      W.heads.push_back({M(W_q[h].data(), kD, kDe), V(b_q[h].data(), kD), M(W_k[h].data(), kD, kDe),
                         V(b_k[h].data(), kD), M(W_v[h].data(), kD, kDe), V(b_v[h].data(), kD)});
    new (&W.W_o) M(W_o.data(), kDe, kH * kD);
    new (&W.b_o) V(b_o.data(), kDe);
  }
};

sf::Mask kind_mask(const Kind& k, int l_z, int l_x) {
  return k.causal ? sf::unidirectional_mask(l_z, l_x) : sf::bidirectional_mask(l_z, l_x);
}

// One benchmarked call: a kind at one ℓ_x, with its inputs.
struct Call {
  const Kind& kind;
  MatF X, Z_own;  // Z_own: cross-attention's Z (empty for self-attention)
  sf::Mask mask;
  Call(const Kind& k, int l_x, sf::Rng& rng) : kind(k), X(random_matrix(rng, kDe, l_x, 1.0)) {
    const int l_z = k.self ? l_x : l_x * k.lz_num / k.lz_den;
    if (!k.self) Z_own = random_matrix(rng, kDe, l_z, 1.0);
    mask = kind_mask(k, l_z, l_x);
  }
  const MatF& Z() const { return kind.self ? X : Z_own; }  // self: the same object, Z.data() == X.data()
  int l_x() const { return static_cast<int>(X.cols()); }
  int l_z() const { return static_cast<int>(Z().cols()); }
  // The (t_z, t_x) cells the mask keeps, whose scores and weights the FLOP count includes.
  double kept() const { return static_cast<double>((mask.array() != 0).count()); }
  double flops() const {
    const double per_head = 2.0 * l_x() * kDe * kD + 2.0 * l_z() * kDe * 2 * kD + 2.0 * kept() * 2 * kD;
    return kH * per_head + 2.0 * l_x() * kH * kD * kDe;
  }
};

// What a row shows; NaN: "—" (or "not measured" for the GPU clock).
struct Row {
  std::string impl;
  double wall_ms = NAN, gpu_ms = NAN, l46_ms = NAN, vs_eigen2 = NAN, err = NAN;
};

std::string cell(double v, const char* fmt, const char* nan_text) {
  if (std::isnan(v)) return nan_text;
  char s[32];
  std::snprintf(s, sizeof s, fmt, v);
  return s;
}

// `s` padded with spaces to `width` characters (UTF-8 code points: ℓ, Δ, Ṽ are one each),
// to the right (numbers) or to the left (names).
std::string pad(const std::string& s, int width, bool right) {
  const auto chars = std::count_if(s.begin(), s.end(), [](char ch) { return (ch & 0xC0) != 0x80; });
  const std::string fill(std::max<std::ptrdiff_t>(0, width - chars), ' ');
  return right ? fill + s : s + fill;
}

// The table's columns: name, width, right-aligned. Two spaces between cells.
struct Column {
  const char* name;
  int width;
  bool right;
};
constexpr Column kColumns[] = {{"kind", 13, false},     {"ℓ_x", 5, true},          {"ℓ_z", 5, true},
                               {"implementation", 18, false}, {"wall ms", 9, true}, {"GFLOP/s", 8, true},
                               {"× Eigen-2", 9, true},  {"GPU ms", 12, true},      {"L4–6 ms", 12, true},
                               {"max |ΔṼ|", 8, true}};

// Prints the first cells.size() columns; a last cell beyond them (a note) is printed as it is.
void print_cells(const std::vector<std::string>& cells) {
  std::string line;
  for (std::size_t i = 0; i < cells.size(); ++i) {
    if (i) line += "  ";
    line += i < std::size(kColumns) ? pad(cells[i], kColumns[i].width, kColumns[i].right) : cells[i];
  }
  std::printf("%s\n", line.c_str());
}

void print_header() {
  std::vector<std::string> names;
  for (const Column& c : kColumns) names.push_back(c.name);
  print_cells(names);
}

void print_row(const Call& c, const Row& r) {
  const bool gpu = r.impl.rfind("GPU", 0) == 0;
  const char* no_clock = gpu ? "not measured" : "—";
  print_cells({c.kind.name, std::to_string(c.l_x()), std::to_string(c.l_z()), r.impl, cell(r.wall_ms, "%.2f", "—"),
               cell(c.flops() / (r.wall_ms * 1e6), "%.1f", "—"), cell(r.vs_eigen2, "%.3f", "—"),
               cell(r.gpu_ms, "%.2f", no_clock), cell(r.l46_ms, "%.2f", no_clock), cell(r.err, "%.1e", "—")});
}

// A row with no times: why (skipped, not run), in place of the figures.
void print_note(const Call& c, const std::string& impl, const std::string& note) {
  print_cells({c.kind.name, std::to_string(c.l_x()), std::to_string(c.l_z()), impl, note});
}

double max_abs_diff(const MatF& a, const MatF& b) { return static_cast<double>((a - b).cwiseAbs().maxCoeff()); }

// Core's mh_attention on `threads` compute threads; `out` receives its Ṽ.
double time_eigen(const Call& c, const Layer& layer, int threads, double min_time, MatF& out) {
  sf::set_compute_threads(threads);
  return measure(
      [&] {
        const auto t0 = Clock::now();
        MatF Vt = sf::mh_attention<float>(c.X, c.Z(), layer.W, c.mask, nullptr, nullptr, c.kind.av);
        const double ms = ms_since(t0);
        out = std::move(Vt);
        return ms;
      },
      min_time);
}

// Lines 4–6 of Algorithm 4: the scores, the mask, the softmax and V·A, or the one fused dispatch.
bool in_lines_4_to_6(const sf::gpu::DispatchTime& t) { return t.algorithm == 4 && t.line_first >= 4; }

// One GPU form on one call: wall-clock (Ṽ kept for the check), then the dispatch times.
Row time_gpu(sf::gpu::GpuAttention& gpu, const Call& c, const Layer& layer, sf::gpu::Form form, double min_time,
             const MatF& reference) {
  Row r;
  r.impl = std::string("GPU, ") + sf::gpu::to_string(form) + " form";
  MatF out;
  r.wall_ms = measure(
      [&] {
        const auto t0 = Clock::now();
        MatF Vt = gpu.mh_attention(c.X, c.Z(), layer.W, c.mask, form, nullptr, nullptr, c.kind.av);
        const double ms = ms_since(t0);
        out = std::move(Vt);
        return ms;
      },
      min_time);
  r.err = max_abs_diff(out, reference);
  std::vector<double> l46;  // lines 4–6 of each timed call
  r.gpu_ms = measure(
      [&] {
        std::vector<sf::gpu::DispatchTime> times;
        gpu.mh_attention(c.X, c.Z(), layer.W, c.mask, form, &times, nullptr, c.kind.av);
        double total = 0, part = 0;
        for (const auto& t : times) {
          total += t.gpu_ms;
          if (in_lines_4_to_6(t)) part += t.gpu_ms;
        }
        l46.push_back(part);
        return total;
      },
      min_time, false);  // warm already
  r.l46_ms = median(l46);
  return r;
}

void print_preamble(const Options& opt, const sf::gpu::GpuAttention* gpu, const std::string& why_not, int max_l) {
  std::printf("MHAttention (Algorithm 5), H = %d, d_attn = d_mid = %d, d_x = d_z = d_out = %d, float32\n", kH, kD,
              kDe);
  if (gpu)
    std::printf("GPU: %s%s\n", gpu->device().summary().c_str(),
                gpu->device().software() ? " (software renderer)" : "");
  else
    std::printf("GPU: none: %s\n", why_not.c_str());
  std::printf("Eigen: SIMD %s; core's compute threads set to 1 and 2\n", Eigen::SimdInstructionSetsInUse());
  for (const Kind& k : opt.kinds) {
    std::printf("kind %-13s  %s, ℓ_z = %s\n", k.name,
                sf::gpu::describe_call(k.self, kind_mask(k, 2, 2), k.av, kH).c_str(),
                k.self ? "ℓ_x" : (k.lz_num > k.lz_den ? "2·ℓ_x" : "ℓ_x/2"));
  }
  std::printf(
      "FLOPs: projections, S = KᵀQ and Ṽ = V·A over the cells the mask keeps, W_o (2 per multiply–add); "
      "GFLOP/s = FLOPs / wall ms.\n");
  std::printf(
      "wall ms: the whole call (GPU: upload, dispatches, read-back); GPU ms: sum of GL_TIMESTAMP dispatch "
      "intervals; × Eigen-2: Eigen-2's ms / wall ms.\n");
  std::printf("max |ΔṼ|: max |Ṽ − Ṽ_Eigen| against core's mh_attention; correct when ≤ %.0e.\n", kTol);
  if (max_l < kNoLimit)
    std::printf("GPU rows up to ℓ_x = %d (--max-l).\n\n", max_l);
  else
    std::printf("GPU rows at every ℓ_x.\n\n");
}

}  // namespace

int main(int argc, char** argv) {
  const Options opt = parse(argc, argv);
  std::string why_not;
  const auto gpu = sf::gpu::GpuAttention::create(why_not);
  const int max_l = opt.max_l ? opt.max_l : (gpu && gpu->device().software() ? 256 : kNoLimit);
  print_preamble(opt, gpu.get(), why_not, max_l);
  print_header();

  sf::Rng rng(1);
  const Layer layer(rng);
  for (const Kind& kind : opt.kinds) {
    for (const int l : opt.lengths) {
      const Call c(kind, l, rng);
      MatF reference, two_threads;
      Row eigen1{"Eigen, 1 thread"}, eigen2{"Eigen, 2 threads"};
      eigen1.wall_ms = time_eigen(c, layer, 1, opt.min_time, reference);
      eigen2.wall_ms = time_eigen(c, layer, 2, opt.min_time, two_threads);
      eigen1.vs_eigen2 = eigen2.wall_ms / eigen1.wall_ms;
      eigen2.vs_eigen2 = 1;
      eigen2.err = max_abs_diff(two_threads, reference);  // 0: the split is fixed by the shapes alone
      print_row(c, eigen1);
      print_row(c, eigen2);

      if (!gpu) continue;
      for (const sf::gpu::Form form : {sf::gpu::Form::Teaching, sf::gpu::Form::Fused}) {
        const std::string name = std::string("GPU, ") + sf::gpu::to_string(form) + " form";
        if (l > max_l) {
          print_note(c, name, "skipped (--max-l " + std::to_string(max_l) + ")");
          continue;
        }
        try {
          Row r = time_gpu(*gpu, c, layer, form, opt.min_time, reference);
          r.vs_eigen2 = eigen2.wall_ms / r.wall_ms;
          print_row(c, r);
        } catch (const std::exception& e) {
          print_note(c, name, std::string("not run: ") + e.what());
        }
      }
      std::fflush(stdout);
    }
  }
  return 0;
}
