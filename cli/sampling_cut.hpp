// --top-k K and --top-p P of stepformer-cli sample (not in the paper: core/algorithms/sampling.hpp).
#pragma once
#include "cli/args.hpp"
#include <string>
#include <vector>

#include "core/algorithms/block_table.hpp"
#include "core/algorithms/sampling.hpp"

namespace sf::cli {
// The cut the options ask for (off when neither is given); throws UsageError on a bad K or P.
TopKTopP top_k_top_p_options(const Args& args);
// --top-k, --top-p and --kv-block for the command's option list and man page.
std::vector<Option> cut_and_paging_option_specs();
// --kv-block B (with --kv-cache: PagedAttention's block size); 0 when not given. Throws UsageError
// on a bad B or without --kv-cache.
int kv_block_option(const Args& args);
// "kv cache: paged in blocks of B = 4; block table [1, 2, 3] (10 tokens, the last block holds 2)" on stdout.
void print_block_table(const BlockTable& t);
// " top-k = K, top-p = P" for the printed settings; "" when off.
std::string top_k_top_p_summary(const TopKTopP& cut);
}  // namespace sf::cli
