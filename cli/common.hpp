// Helpers shared by the commands: loading a model, turning --prompt/--tokens into x,
// printing tokens, shapes and predictions.
#pragma once
#include <iosfwd>
#include <string>

#include "cli/args.hpp"
#include "core/config.hpp"
#include "core/params.hpp"
#include "core/tokenizer.hpp"
#include "core/trace.hpp"
#include "core/types.hpp"

namespace sf::cli {

// Loads a checkpoint (core/checkpoint.hpp); throws sf::Error naming what is wrong.
Model load_model(const std::string& path);

// "gpt L=2 H=4 d_e=64 d_attn=16 d_mid=16 d_mlp=256 ℓ_max=64 N_V=64 ε=1e-05 W_p=learned"
std::string config_summary(const ModelConfig& c);

// 104320 → "104,320"
std::string thousands(size_t n);

// The model input x from --prompt TEXT ([bos_token, characters…]) or --tokens 3,1,4
// (1-based ids). Throws UsageError for a malformed --tokens list, sf::Error for a character
// outside the vocabulary or an x longer than ℓ_max.
Tokens input_tokens(const Args& args, const ModelConfig& c, const CharTokenizer& tok);

// One token for people: 'h', ' ' (quoted), or <bos>, <eos>, <mask>.
std::string show_token(const CharTokenizer& tok, int id);

// "[63, 8, 5]"
std::string id_list(const Tokens& x, const char* separator = ", ");

// "ℝ^{16×7}", "ℝ^{64}" (a column vector), "{0,1}^{7×7}" for a mask.
std::string shape_text(const Value& v);
// "S ∈ ℝ^{7×7}", "ℓ = 7", "x = [63, 8]".
std::string value_text(const Value& v);

// The tokens with their positions, ids and labels, one row per position.
void print_tokens(std::ostream& os, const Tokens& x, const CharTokenizer& tok);

// For each position t, the top-k entries of P[:, t] (the prediction for x[t+1]) and the
// probability P gave the actual next token.
void print_predictions(std::ostream& os, const MatF& P, const Tokens& x, const CharTokenizer& tok, int k = 3);

}  // namespace sf::cli
