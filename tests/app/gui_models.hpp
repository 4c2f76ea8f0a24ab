// Small untrained models for the GUI tests, saved once per test process to a temporary checkpoint
// (the bundled BERT and ED models may not be built yet).
#pragma once
#include <unistd.h>

#include <cstdint>
#include <filesystem>
#include <string>

#include "core/io/checkpoint.hpp"
#include "core/model/params.hpp"

namespace gui {

// L = L_enc = L_dec = 2, H = 4, d_e = d_f = 64, d_attn = d_mid = 16, ℓ_max = 16: small enough for
// llvmpipe and the GUI's frame budget, large enough that every panel has something to show.
inline sf::ModelConfig small_config(const std::string& arch, int d_mlp = 256) {
  sf::ModelConfig c;
  c.arch = arch;
  c.L = c.L_enc = c.L_dec = 2;
  c.H = 4;
  c.d_e = 64;
  c.d_attn = c.d_mid = 16;
  c.d_mlp = d_mlp;
  c.d_f = 64;
  c.l_max = 16;
  return c;
}

// θ initialised from `seed`, saved as <temp>/stepformer-gui-<name>-<pid>.safetensors the first time;
// returns the path.
inline std::string temp_checkpoint(const sf::ModelConfig& c, const std::string& name, uint64_t seed) {
  const std::string path = (std::filesystem::temp_directory_path() /
                            ("stepformer-gui-" + name + "-" + std::to_string(::getpid()) + ".safetensors"))
                               .string();
  if (!std::filesystem::exists(path)) sf::save_checkpoint(path, sf::Model::initialised(c, seed));
  return path;
}

}  // namespace gui
