#include "app/logic/flash_blocks.hpp"

#include <algorithm>
#include <cstdio>
#include <limits>

#include "app/attention_calls.hpp"  // event_value
#include "app/session.hpp"

namespace sf {

namespace L = lines::flash_attention;

const char* to_string(FlashBlockState s) {
  switch (s) {
    case FlashBlockState::Unseen: return "unseen";
    case FlashBlockState::Current: return "current";
    case FlashBlockState::Done: return "done";
    case FlashBlockState::Skipped: return "skipped";
  }
  return "unseen";
}

namespace {

int scalar(const Event& e, const char* name) {
  const Value* v = event_value(e, name);
  return v && v->m.size() == 1 ? static_cast<int>(v->m(0, 0)) : 0;
}

// The frame's shape and its blocks, all Unseen, from its Enter event (B_r, B_c and the ℓ_z×ℓ_x Mask).
bool read_enter(const Event& e, FlashBlocks& f) {
  const Value* mask = event_value(e, "Mask");
  f.B_r = scalar(e, "B_r"), f.B_c = scalar(e, "B_c");
  if (!mask || f.B_r < 1 || f.B_c < 1) return false;
  f.l_z = static_cast<int>(mask->m.rows()), f.l_x = static_cast<int>(mask->m.cols());
  f.n_i = (f.l_x + f.B_r - 1) / f.B_r, f.n_j = (f.l_z + f.B_c - 1) / f.B_c;  // as lines 4 and 6 loop
  for (int i = 1; i <= f.n_i; ++i)
    for (int j = 1; j <= f.n_j; ++j) {
      FlashBlock b;
      b.i = i, b.j = j;
      b.x0 = (i - 1) * f.B_r, b.x_size = std::min(f.B_r, f.l_x - b.x0);
      b.z0 = (j - 1) * f.B_c, b.z_size = std::min(f.B_c, f.l_z - b.z0);
      f.blocks.push_back(b);
    }
  f.S = MatF::Constant(f.l_z, f.l_x, std::numeric_limits<float>::quiet_NaN());
  return true;
}

std::string row_text(const MatF& r) {
  std::string s = "(";
  char buf[32];
  for (Eigen::Index c = 0; c < r.size(); ++c) {
    std::snprintf(buf, sizeof buf, "%s%.4g", c ? ", " : "", static_cast<double>(r(c)));
    s += buf;
  }
  return s + ")";
}

}  // namespace

const FlashBlock* FlashBlocks::block_of_cell(int row, int col) const {
  if (row < 0 || col < 0 || row >= l_z || col >= l_x) return nullptr;
  return &at(col / B_r + 1, row / B_c + 1);
}

FlashBlocks flash_blocks(const Trace& t, size_t cursor) {
  FlashBlocks f;
  if (cursor >= t.size()) return f;
  const size_t enter = t.frame_start(cursor);
  const Event& in = t.events[enter];
  if (in.kind != EventKind::Enter || in.alg != algs::flash_attention || !read_enter(in, f)) return f;
  f.enter = enter;
  f.idx = in.idx;
  f.line = t.events[cursor].line;
  FlashBlock* cur = nullptr;  // the block whose key loop iteration is running
  auto finish = [&] {
    if (cur && cur->state == FlashBlockState::Current) cur->state = FlashBlockState::Done;
    cur = nullptr;
  };
  for (size_t k = enter + 1; k <= cursor; ++k) {
    const Event& e = t.events[k];
    if (e.depth != in.depth || e.kind != EventKind::Line) continue;
    const LineRef r = e.ref();
    if (r == L::for_i) {
      finish();
      f.i = scalar(e, "i"), f.j = 0;
    } else if (r == L::for_j) {
      finish();
      f.j = scalar(e, "j");
      if (f.i < 1 || f.i > f.n_i || f.j < 1 || f.j > f.n_j) return FlashBlocks{};  // not the listing's loops
      cur = &f.blocks[static_cast<size_t>((f.i - 1) * f.n_j + (f.j - 1))];
      cur->state = FlashBlockState::Current;
    } else if (cur && r == L::skip && scalar(e, "skip") == 1) {
      cur->state = FlashBlockState::Skipped;
    } else if (cur && r == L::S_blk) {
      if (const Value* S = event_value(e, "S_blk"); S && S->m.rows() == cur->z_size && S->m.cols() == cur->x_size)
        f.S.block(cur->z0, cur->x0, cur->z_size, cur->x_size) = S->m;
    } else if (cur && r == L::ell) {
      if (const Value* v = event_value(e, "ℓ")) cur->ell = v->m;
    } else if (cur && r == L::m) {
      if (const Value* v = event_value(e, "m")) cur->m = v->m;
    } else if (r == L::V_block || r == L::V_tilde) {
      finish();
      f.j = 0;
      if (r == L::V_tilde) f.i = 0;
    }
  }
  return f;
}

std::string flash_block_text(const FlashBlocks& f, const FlashBlock& b) {
  std::string s = "Query block i = " + std::to_string(b.i) + " of ⌈ℓ_x/B_r⌉ = " + std::to_string(f.n_i) + " (t_x = " +
                  std::to_string(b.x0 + 1) + " … " + std::to_string(b.x0 + b.x_size) + "), key block j = " +
                  std::to_string(b.j) + " of ⌈ℓ_z/B_c⌉ = " + std::to_string(f.n_j) + " (t_z = " +
                  std::to_string(b.z0 + 1) + " … " + std::to_string(b.z0 + b.z_size) + "): ";
  switch (b.state) {
    case FlashBlockState::Unseen: return s + "not computed yet.";
    case FlashBlockState::Skipped:
      return s + "skipped at line 7: the mask forbids every pair of the block, so its scores would all be −∞.";
    case FlashBlockState::Current:
    case FlashBlockState::Done: break;
  }
  s += b.state == FlashBlockState::Current ? "being computed." : "done.";
  if (b.m.size() == 0) return s + " Its m and ℓ are not updated yet (lines 11–12).";
  return s + "\nAfter it, per query column: m = " + row_text(b.m) + ", ℓ = " + row_text(b.ell) + ".";
}

size_t first_flash_call(const Trace& t) {
  for (size_t k = 0; k < t.size(); ++k)
    if (t.events[k].kind == EventKind::Enter && t.events[k].alg == algs::flash_attention) return k;
  return t.size();
}

bool set_flash_blocks(Session& s, int B_r, int B_c, std::string& error) {
  constexpr int kMax = 65536;  // as the configuration's block_r, block_c (config_from_json)
  if (B_r < 1 || B_c < 1 || B_r > kMax || B_c > kMax) {
    error = "FlashAttention's block sizes must be whole numbers of at least 1 (B_r = " + std::to_string(B_r) +
            ", B_c = " + std::to_string(B_c) + "): a block holds at least one query column and one key, and at most " +
            std::to_string(kMax) + ". The blocks are unchanged.";
    return false;
  }
  // Where the cursor is, to find the same step in the new trace (find_matching reads no values).
  const Trace& t = s.trace();
  const size_t k = s.cursor();
  Event old;
  const bool had = k < t.size();
  if (had) {
    const Event& e = t.events[k];
    old.kind = e.kind, old.alg = e.alg, old.line = e.line, old.pass = e.pass, old.depth = e.depth, old.idx = e.idx;
    old.label = e.label;
  }
  const LineRef caller = had ? t.caller_ref(k) : LineRef{};
  Model m = s.model();  // the same θ: only how Algorithm 5's heads compute their attention changes
  m.config.attention = AttentionKind::Flash;
  m.config.block_r = B_r;
  m.config.block_c = B_c;
  s.set_model(std::move(m), s.model_label(), nullptr, ModelOrigin(s.origin()));  // re-traces the forward pass
  if (had) s.jump_ungated(s.trace().find_matching(old, caller));
  return true;
}

}  // namespace sf
