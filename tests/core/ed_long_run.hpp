// An initialised encoder-decoder (θ multiplied by `scale`) whose translation runs to the ℓ_max cap
// without drawing eos_token, for the tests of Algorithm 15's cache (test_ed_relative.cpp,
// test_ed_paged_kv.cpp): the last decoder layer's β⁵ is set to 5 and W_u's eos_token row to −5, so
// that eos_token's logit is −5·Σ_i (γ⁵ x̂ + 5)[i] = −25·d_e (post-LN: x̂ has mean 0 and γ⁵ is the
// same in every entry), against logits of O(0.1) (O(20) at scale 20).
#pragma once
#include <string>

#include "core/model/params.hpp"

namespace sf::test {

inline Model long_running_ed(const ModelConfig& c, uint64_t seed, float scale = 1) {
  Model m = Model::initialised(c, seed);
  for (float& v : m.theta) v *= scale;
  const ParamEntry& beta = m.table.at("dec.layer" + std::to_string(c.L_dec) + ".beta5");
  for (size_t k = 0; k < beta.size(); ++k) m.theta[beta.offset + k] = 5;
  const ParamEntry& W_u = m.table.at("W_u");
  for (int col = 0; col < W_u.cols; ++col) m.theta[W_u.offset + static_cast<size_t>(col) * W_u.rows + c.eos_token() - 1] = -5;
  return m;
}

}  // namespace sf::test
