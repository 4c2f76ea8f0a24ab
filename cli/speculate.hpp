// stepformer-cli sample --draft MODEL --speculate K: Algorithm 14-S, speculative decoding (not in
// the paper), with the target --model and the draft --draft.
#pragma once
#include "cli/args.hpp"
#include "core/model/params.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf::cli {
// Runs Algorithm 14-S and prints the continuation and the counts (rounds, proposals accepted,
// target passes against plain Algorithm 14's); --json prints them as one object. Returns 0.
int speculate(const Args& args, const Model& target, const Tokenizer& tok);
}  // namespace sf::cli
