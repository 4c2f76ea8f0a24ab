// Three notations for the same computation, one written mapping per traced line:
//   - Phuong & Hutter (the paper): column vectors, tokens are columns (pseudocode.hpp);
//   - Carpenter, "Transformer decoding in fifty lines of pseudocode" (seed 002): row vectors,
//     tokens are rows (xs[n, 1:V]), his functions DECODE, ATTEND, FEED_FORWARD, …;
//   - Dinan, Yaida & Zhang, "Tutorial on Transformers with Indices" (seed 001): every
//     quantity written with its indices, e.g. z_{α;t;i} (sample α, token t, feature i),
//     C = n/H, q^h_{α;t;c}.
// For each (algorithm, line) the mapping gives Carpenter's line and DYZ's equation, or says
// there is none and why. For the values a line binds, notation_name() says what each
// notation calls them and whether it writes them with tokens as rows. Pure data: no I/O.
#pragma once
#include <optional>
#include <string>
#include <vector>

#include "core/model/config.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {

enum class Notation { PhuongHutter, Carpenter, DinanYaidaZhang };
// "Phuong & Hutter", "Carpenter", "Dinan–Yaida–Zhang".
const char* to_string(Notation n);
// "paper", "carpenter", "dyz" (the app's --actions names).
const char* notation_key(Notation n);
// The notation whose notation_key is `key`; false when there is none.
bool notation_from_key(const std::string& key, Notation& out);

// One notation's version of a line: its text, or an empty text and the reason there is none.
struct NotationText {
  std::string text;            // "ATTEND: q[n, 1:K] = x[n, 1:V] * beta.query"
  std::string no_counterpart;  // why there is no text ("" when there is one)
};

struct NotationEntry {
  int alg = 0, line = 0;  // the paper's algorithm and line
  NotationText carpenter, dyz;
  Pass pass = Pass::Forward;  // Backward: the adjoint of that line, in Stepformer's backward listing
  LineRef ref() const { return {alg, line, pass}; }
};

// Every mapped forward line, by algorithm then line.
const std::vector<NotationEntry>& notation_entries();
// Every line of Stepformer's backward listings (core/pseudocode/backward_listings.hpp; not in the
// paper), in each listing's order: neither seed writes a backward pass, so Carpenter has no
// counterpart for any of them, and the DYZ texts write the adjoints in the tutorial's indices
// (core/pseudocode/backward_notations.cpp).
const std::vector<NotationEntry>& backward_notation_entries();
// The entry for (alg, line), or nullptr; for a LineRef, the forward or the backward table's.
const NotationEntry* notation_entry(int alg, int line);
const NotationEntry* notation_entry(LineRef r);
// The line in notation n: the paper's text (pseudocode_line) or the entry's; an empty text with
// the reason where n has no counterpart or (alg, line) is not a mapped line. For a backward line
// the "paper" text is the backward listing's (the paper's configuration).
NotationText notation_text(Notation n, int alg, int line);
NotationText notation_text(Notation n, LineRef r);
// As notation_text(n, r), for the open model of configuration c: the DYZ text of a backward line of
// Algorithm 8, 9 or 10 follows the norm order that listing runs (backward_listing_pre_ln), where the
// line's meaning depends on it (a residual sub-layer's two lines, a stack's final norm).
NotationText notation_text(Notation n, LineRef r, const ModelConfig& c);

// The DYZ text of the adjoint of line `line` of Algorithm 8, 9 or 10 in a stack whose norms come
// before their sub-layers (pre_ln) or after the residual sum (post-LN): a sub-layer's two lines swap
// meaning, the norm's adjoint adds to ∂ℒ/∂z (pre) or replaces it (post), and a stack's final norm
// exists or not. nullopt for a line the norm order does not change.
std::optional<NotationText> norm_ordered_dyz(int alg, int line, bool pre_ln);

// What a notation calls a value the paper binds at a line of `alg`, e.g. for Q: Carpenter
// "q[n, 1:K]", DYZ "q^h" with indices "t;c".
struct NotationName {
  std::string carpenter;  // "" when Carpenter has no such value
  std::string dyz;        // the symbol without its indices; "" when DYZ has none
  std::string dyz_indices;  // the indices after α, e.g. "t;i", "tt′" (t first: tokens lead)
};
NotationName notation_name(int alg, const std::string& paper_name);

// One entry of a value in DYZ's index form, e.g. "q^2_{1;3;5}" for Q's row 5, column 3 in
// head 2 (α = 1: the one sequence traced). `t`, `k`: the 1-based token and feature (or second
// token) index; h the head (0: none).
std::string dyz_entry(const NotationName& n, int t, int k, int h);

}  // namespace sf
