// A seeded generator with the same stream on every platform (std::normal_distribution is
// implementation-defined, so normals are made here by Box–Muller from 53-bit uniforms).
#pragma once
#include <cmath>
#include <cstdint>

namespace sf {

class Rng {
 public:
  explicit Rng(uint64_t seed) : s_(seed ^ 0x9E3779B97F4A7C15ULL) {}
  // splitmix64
  uint64_t next() {
    uint64_t z = (s_ += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
  }
  // Uniform in [0, 1).
  double uniform() { return (next() >> 11) * (1.0 / 9007199254740992.0); }
  // Uniform integer in [0, n).
  uint64_t below(uint64_t n) { return n ? next() % n : 0; }
  double normal() {
    if (has_spare_) {
      has_spare_ = false;
      return spare_;
    }
    double u1 = uniform(), u2 = uniform();
    if (u1 < 1e-300) u1 = 1e-300;
    const double r = std::sqrt(-2.0 * std::log(u1)), a = 6.283185307179586 * u2;
    spare_ = r * std::sin(a);
    has_spare_ = true;
    return r * std::cos(a);
  }
  uint64_t state() const { return s_; }

 private:
  uint64_t s_;
  double spare_ = 0;
  bool has_spare_ = false;
};

}  // namespace sf
