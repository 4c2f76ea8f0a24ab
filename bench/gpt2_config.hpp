// GPT-2 small's shape (124M parameters: L = 12, H = 12, d_e = 768, tied W_u, GELU-tanh, pre-LN, learned W_p, the
// byte-level BPE's 50257 tokens), for the benchmarks that time a model of that size (bench_gpt2, bench_backprop).
#pragma once
#include "core/model/config.hpp"

namespace sf::bench {

inline ModelConfig gpt2_small() {
  ModelConfig c;
  c.L = 12;
  c.H = 12;
  c.d_e = 768;
  c.d_attn = c.d_mid = 64;
  c.d_mlp = 3072;
  c.l_max = 1024;
  c.activation = Activation::GELUTanh;
  c.tied_unembedding = true;
  c.norm_position = NormPosition::Pre;
  c.position = Position::Learned;
  c.tokenizer = TokenizerKind::Gpt2;
  c.vocab.clear();
  c.vocab_size = 50257;
  c.bos_id = c.eos_id = 50257;  // <|endoftext|>, 0-based 50256
  c.mask_id = -1;
  return c;
}

}  // namespace sf::bench
