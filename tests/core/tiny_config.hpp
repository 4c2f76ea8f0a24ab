// The smallest GPT the tests build by hand: 2 layers, 2 heads, d_e = 8, d_attn = d_mid = 4, d_mlp = 16,
// the default vocabulary, and ℓ_max as asked. Small enough that every sum in it is exact to a few
// float ulps, big enough to have more than one layer and head.
#pragma once
#include "core/model/config.hpp"

namespace sf::test {

inline ModelConfig tiny_gpt_config(int l_max) {
  ModelConfig c;
  c.L = 2;
  c.H = 2;
  c.d_e = 8;
  c.d_attn = 4;
  c.d_mid = 4;
  c.d_mlp = 16;
  c.l_max = l_max;
  return c;
}

}  // namespace sf::test
