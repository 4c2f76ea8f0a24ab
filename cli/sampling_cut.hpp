// --top-k K and --top-p P of stepformer-cli sample (not in the paper: core/algorithms/sampling.hpp).
#pragma once
#include "cli/args.hpp"
#include <string>
#include <vector>

#include "core/algorithms/sampling.hpp"

namespace sf::cli {
// The cut the options ask for (off when neither is given); throws UsageError on a bad K or P.
TopKTopP top_k_top_p_options(const Args& args);
// The two options' entries for the command's option list and man page.
std::vector<Option> top_k_top_p_option_specs();
// " top-k = K, top-p = P" for the printed settings; "" when off.
std::string top_k_top_p_summary(const TopKTopP& cut);
}  // namespace sf::cli
