// Algorithm 4-F's blocks (FlashAttention, not in the paper) at a step of the trace, for the
// Attention tab's block view (app/panels/flash_blocks_view.cpp) and --dump-state. Everything is
// read from the trace: B_r, B_c and the Mask from the call's Enter event, i and j from lines 4 and 6,
// "skip" from line 7, S_blk from line 8, ℓ and m from lines 11 and 12; nothing is recomputed.
// Headless (tests/app use it).
#pragma once
#include <cstddef>
#include <string>
#include <vector>

#include "core/trace/trace.hpp"

namespace sf {

// What the cursor has seen of block (i, j): not reached yet, being computed (the latest key block
// of the query block in progress), finished, or skipped at line 7 (every pair masked).
enum class FlashBlockState { Unseen, Current, Done, Skipped };
const char* to_string(FlashBlockState s);  // "unseen", "current", "done", "skipped"

struct FlashBlock {
  int i = 0, j = 0;                  // 1-based: query block i, key block j
  int x0 = 0, x_size = 0;            // its query columns, 0-based first and how many
  int z0 = 0, z_size = 0;            // its key rows
  FlashBlockState state = FlashBlockState::Unseen;
  MatF m, ell;                       // (1, |I|): m and ℓ after this block (lines 12 and 11); empty before
};

struct FlashBlocks {
  size_t enter = SIZE_MAX;  // the Algorithm 4-F frame's Enter event; SIZE_MAX: the cursor is in none
  Indices idx;              // the call's layer and head
  int B_r = 0, B_c = 0, l_x = 0, l_z = 0;
  int n_i = 0, n_j = 0;     // ⌈ℓ_x/B_r⌉ query blocks, ⌈ℓ_z/B_c⌉ key blocks
  int i = 0, j = 0;         // the blocks at the cursor: query block i (0: none), key block j (0: none)
  int line = 0;             // the cursor's line of Algorithm 4-F
  std::vector<FlashBlock> blocks;  // n_i·n_j of them, query block by query block: blocks[(i−1)·n_j + (j−1)]
  // ℓ_z×ℓ_x: S_blk of every block computed up to the cursor in its place (−∞ where masked); NaN (no
  // value yet) in blocks not computed (unseen, or skipped: the view greys those out).
  MatF S;

  bool found() const { return enter != SIZE_MAX; }
  const FlashBlock& at(int bi, int bj) const { return blocks[static_cast<size_t>((bi - 1) * n_j + (bj - 1))]; }
  // The block holding cell (t_z, t_x) (0-based), nullptr outside.
  const FlashBlock* block_of_cell(int row, int col) const;
};

// The Algorithm 4-F call the cursor is in (its Enter event or one of its lines), seen up to the cursor.
// found() is false when the cursor is not in one.
FlashBlocks flash_blocks(const Trace& t, size_t cursor);

// What hovering block b says: "Query block i = 2 of ⌈ℓ_x/B_r⌉ = 3 (t_x = 4 … 6), key block j = 1 of
// ⌈ℓ_z/B_c⌉ = 3 (t_z = 1 … 3): done", then its m and ℓ, or why it has none.
std::string flash_block_text(const FlashBlocks& f, const FlashBlock& b);

// The first Enter event of Algorithm 4-F in the trace; t.size() when there is none.
size_t first_flash_call(const Trace& t);

class Session;
// The learner's B_r and B_c (the Attention tab, the --actions verb flash-blocks:R:C): the session's model
// gets "attention": "flash" with block_r = B_r, block_c = B_c, its θ unchanged, and its forward pass is
// re-traced with the cursor kept on its step where that step still exists (same algorithm, line, layer
// and head). False, with `error` saying what is wrong and what to do, when B_r or B_c is outside 1 … 65536
// (the configuration's range): nothing changes.
bool set_flash_blocks(Session& s, int B_r, int B_c, std::string& error);

}  // namespace sf
