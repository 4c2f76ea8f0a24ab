#include "cli/sampling_cut.hpp"

#include <cstdio>

namespace sf::cli {

TopKTopP top_k_top_p_options(const Args& args) {
  TopKTopP cut;
  cut.k = static_cast<int>(args.get_int("top-k", 0, 1, 1000000000));
  cut.p = args.get_double("top-p", 1.0, 0.0, 1.0);
  if (args.has("top-p") && cut.p <= 0.0)
    throw UsageError("--top-p must be greater than 0 (it keeps the smallest set of tokens whose mass reaches P; "
                     "1 keeps them all): e.g. --top-p 0.9");
  return cut;
}

std::vector<Option> top_k_top_p_option_specs() {
  return {
      {"top-k", "K",
       "Keep only the K most likely tokens (by p; equal p: the smaller id first) and renormalise q over them, after "
       "τ (a whole number ≥ 1; K ≥ N_V cuts nothing; K = 1 is argmax). Not in the paper (the encyclopedia article's "
       "top-k sampling). Default: no cut."},
      {"top-p", "P",
       "Nucleus sampling: keep the smallest set of most likely tokens whose q (after τ, and after --top-k when both "
       "are given) sums to at least P of the mass, at least one token, and renormalise q over them (0 < P ≤ 1; 1 "
       "cuts nothing). Not in the paper (the encyclopedia article's top-p). Default: 1."},
  };
}

std::string top_k_top_p_summary(const TopKTopP& cut) {
  std::string s;
  if (cut.k > 0) s += ", top-k = " + std::to_string(cut.k);
  if (cut.p < 1.0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, ", top-p = %g", cut.p);
    s += buf;
  }
  return s;
}

}  // namespace sf::cli
