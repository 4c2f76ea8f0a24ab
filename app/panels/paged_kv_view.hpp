// PagedAttention's block view of the KV cache in the Sampling tab (not in the paper; Kwon et al. 2023,
// vLLM; the encyclopedia article, seed 004; core/algorithms/paged_kv.hpp).
#pragma once
#include "app/app.hpp"
#include "app/session_generation.hpp"
#include "core/algorithms/block_table.hpp"

namespace sf {
// "Paged (PagedAttention)" and its block size B, under the KV cache checkbox (disabled without it).
void draw_paged_kv_controls(SamplingSettings& st);
// The block table of sequence `seq` ("x") after the selected step: one box per logical block,
// labelled "b → physical j", its B slots filled in the accent colour as far as tokens reach; and a
// line saying how many tokens, blocks and unused slots there are.
void draw_paged_kv_view(const App& app, const BlockTable& t, const char* seq);
}  // namespace sf
