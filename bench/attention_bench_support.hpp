// What bench_flash_attention and bench_random_feature_attention share (issue 25, item 8): one head of
// size 64, seeded N(0, 1) matrices, the median of a few timed runs (wall and process CPU time), and
// the --lengths list.
#pragma once
#include <algorithm>
#include <chrono>
#include <cstdlib>
#include <ctime>
#include <functional>
#include <sstream>
#include <string>
#include <vector>

#include "core/model/rng.hpp"
#include "core/model/types.hpp"

namespace sf::attention_bench {

constexpr int kD = 64;  // d_x = d_z = d_attn = d_out

// The CPU time of the whole process in ms.
inline double cpu_ms() {
  timespec t{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &t);
  return t.tv_sec * 1e3 + t.tv_nsec * 1e-6;
}

struct Timing {
  double wall_ms, cpu_ms;
};

// The median wall time over `repeats` runs of f, and the CPU time of that run.
inline Timing median(int repeats, const std::function<void()>& f) {
  using Clock = std::chrono::steady_clock;
  std::vector<Timing> t;
  for (int r = 0; r < repeats; ++r) {
    const double c0 = cpu_ms();
    const auto w0 = Clock::now();
    f();
    t.push_back({std::chrono::duration<double, std::milli>(Clock::now() - w0).count(), cpu_ms() - c0});
  }
  std::sort(t.begin(), t.end(), [](const Timing& a, const Timing& b) { return a.wall_ms < b.wall_ms; });
  return t[t.size() / 2];
}

// A rows × cols matrix of N(0, 1) entries drawn from rng.
inline MatF normal(Rng& rng, int rows, int cols) {
  MatF m(rows, cols);
  for (Eigen::Index i = 0; i < m.size(); ++i) m.data()[i] = static_cast<float>(rng.normal());
  return m;
}

// "256,1024,4096" → {256, 1024, 4096}.
inline std::vector<int> parse_lengths(const std::string& s) {
  std::vector<int> out;
  std::stringstream in(s);
  for (std::string part; std::getline(in, part, ',');) out.push_back(std::atoi(part.c_str()));
  return out;
}

}  // namespace sf::attention_bench
