// Small vision-transformer configurations and images for the tests of arch "vit".
#pragma once
#include <string>
#include <vector>

#include "core/arch/vit.hpp"
#include "core/gradients/grad.hpp"
#include "core/model/config.hpp"
#include "core/model/rng.hpp"

namespace sf::test {

// arch "vit", vocab "0" … "9"; d_mid ≠ d_attn and d_f ≠ d_e so that a transposed shape shows.
inline ModelConfig vit_test_config(int patch, int L = 2, int H = 2, int d_e = 8, int d_attn = 4, int d_mid = 3,
                                   int d_mlp = 12, int d_f = 5) {
  ModelConfig c;
  c.arch = "vit";
  c.patch = patch;
  c.L = L;
  c.H = H;
  c.d_e = d_e;
  c.d_attn = d_attn;
  c.d_mid = d_mid;
  c.d_mlp = d_mlp;
  c.d_f = d_f;
  c.l_max = vit_tokens(patch);
  c.vocab.clear();
  for (int k = 0; k <= 9; ++k) c.vocab.push_back(std::to_string(k));
  return c;
}

// An image of seeded intensities 0 … 16.
inline Tokens random_image(uint64_t seed) {
  Rng rng(seed);
  Tokens img(kImagePixels);
  for (int& v : img) v = static_cast<int>(rng.below(kDigitMax + 1));
  return img;
}

// A batch of images with their class ids (class + 1), as VitArchitecture::make_batch lays it out.
inline Batch image_batch(const std::vector<Tokens>& images, const std::vector<int>& ids) {
  Batch b;
  b.B = static_cast<int>(images.size());
  b.l = kImagePixels;
  b.lengths.assign(b.B, kImagePixels);
  for (size_t s = 0; s < images.size(); ++s) {
    b.tokens.insert(b.tokens.end(), images[s].begin(), images[s].end());
    b.targets.resize(b.tokens.size(), 0);
    b.targets[s * kImagePixels] = ids[s];
  }
  return b;
}

}  // namespace sf::test
