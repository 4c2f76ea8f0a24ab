// PagedAttention's block view of the KV cache in the Sampling tab (Algorithm 14) and the Translation
// tab (Algorithm 15) (not in the paper; Kwon et al. 2023, vLLM; the encyclopedia article, seed 004;
// core/algorithms/paged_kv.hpp).
#pragma once
#include "app/app.hpp"
#include "core/algorithms/block_table.hpp"

namespace sf {
// "Paged (PagedAttention)" and its block size B, under the KV cache checkbox (disabled without
// kv_cache). `id`: an ImGui id suffix ("##ed") for a second set in the same window.
void draw_paged_kv_controls(bool kv_cache, bool& paged, int& kv_block_size, const char* id = "");
// What a tab's cache pages: `held` names the K and V in the blocks, `apart` (optional) what is not paged.
struct PagedCacheText {
  const char* held = "every layer and head";
  const char* apart = "";
};
// The block table of sequence `seq` ("x", "x̂") after the selected step: one box per logical block,
// labelled "b → physical j", its B slots filled in the accent colour as far as tokens reach; and a
// line saying how many tokens, blocks and unused slots there are.
void draw_paged_kv_view(const App& app, const BlockTable& t, const char* seq, const PagedCacheText& text = {});
}  // namespace sf
