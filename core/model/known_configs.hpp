// Configurations of known models, shared by the benchmarks and the tests that need a model of that
// shape (θ is theirs to make: random or a checkpoint's). Pure data: no I/O.
#pragma once
#include "core/model/config.hpp"

namespace sf {

// GPT-2's vocabulary on configuration c: the byte-level BPE with N_V tokens (the tokenizer's files,
// not a character list), the last of which, <|endoftext|>, is both bos_token and eos_token; no mask
// token. With it, GPT-2's choices where they differ from the paper's GPT: tied W_u = W_eᵀ and GELU-tanh
// (pre-LN and learned positions are the paper's already).
inline ModelConfig with_gpt2_choices(ModelConfig c, int N_V) {
  c.tokenizer = TokenizerKind::Gpt2;
  c.vocab.clear();
  c.vocab_size = N_V;
  c.bos_id = c.eos_id = N_V;  // <|endoftext|>, 1-based
  c.mask_id = -1;
  c.tied_unembedding = true;
  c.activation = Activation::GELUTanh;
  return c;
}

// GPT-2 small's shape (124M parameters): L = 12, H = 12, d_e = 768, d_attn = d_mid = 64,
// d_mlp = 3072, ℓ_max = 1024, N_V = 50257, pre-LN and learned positions (stated, as a checkpoint
// converted from GPT-2 states them).
inline ModelConfig gpt2_small() {
  ModelConfig c;
  c.norm_position = NormPosition::Pre;
  c.position = Position::Learned;
  c.L = 12;
  c.H = 12;
  c.d_e = 768;
  c.d_attn = c.d_mid = 64;
  c.d_mlp = 3072;
  c.l_max = 1024;
  return with_gpt2_choices(c, 50257);
}

}  // namespace sf
