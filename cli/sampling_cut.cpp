#include "cli/sampling_cut.hpp"

#include <cstdio>
#include <iostream>

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

int kv_block_option(const Args& args) {
  if (!args.has("kv-block")) return 0;
  if (!args.has("kv-cache"))
    throw UsageError("--kv-block pages the KV cache, so it needs --kv-cache: e.g. --kv-cache --kv-block 4");
  return static_cast<int>(args.get_int("kv-block", 0, 1, 4096));
}

std::vector<Option> cut_and_paging_option_specs() {
  return {
      {"kv-block", "B",
       "With --kv-cache: hold the cache in blocks of B tokens (1–4096) with a block table mapping the "
       "sequence's logical blocks to physical ones (PagedAttention, Kwon et al. 2023; not in the paper). GPT: every "
       "self-attention's K, V; encoder-decoder: the decoder self-attention's K, V (the cross-attention's K, V of Z "
       "are computed once and not paged). The same tokens, bit for bit. Default: not paged."},
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

void print_block_table(const BlockTable& t) {
  std::cout << "kv cache: paged in blocks of B = " << t.block_size << "; block table after the last step [";
  for (size_t b = 0; b < t.blocks.size(); ++b) std::cout << (b ? ", " : "") << t.blocks[b] + 1;
  const int n = static_cast<int>(t.blocks.size());
  std::cout << "] (" << t.tokens << " tokens, the last block holds " << (n ? t.fill(n - 1) : 0) << ")\n";
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
