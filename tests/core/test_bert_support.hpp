// What the BERT tests (tests/core/test_bert*.cpp) share: a configuration, a θ with more spread
// than the GPT-2 initialisation (so that every term of the loss matters), and finding a value
// bound by a trace event.
#pragma once
#include <string>
#include <utility>
#include <vector>

#include "core/arch/bert.hpp"
#include "core/model/rng.hpp"
#include "grad_check.hpp"

namespace sf::test {

// "arch": "bert" with these sizes; N_V = vocab.size() + 3 (mask_token, bos_token, eos_token).
inline ModelConfig bert_test_config(int L, int H, int d_e, int d_attn, int d_mid, int d_mlp, int d_f, int l_max,
                                    std::vector<std::string> vocab) {
  ModelConfig c;
  c.arch = "bert";
  const std::pair<const char*, int> sizes[] = {{"L", L},         {"H", H},         {"d_e", d_e}, {"d_attn", d_attn},
                                               {"d_mid", d_mid}, {"d_mlp", d_mlp}, {"d_f", d_f}, {"l_max", l_max}};
  for (const auto& [key, v] : sizes) *config_int(c, key) = v;
  c.vocab = std::move(vocab);
  return c;
}


// The value `name` bound by event e; nullptr when it binds none.
inline const Value* find_value(const Event& e, const std::string& name) {
  for (const Value& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

}  // namespace sf::test
