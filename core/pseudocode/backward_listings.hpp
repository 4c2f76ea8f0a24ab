// Stepformer's backward listings: NOT IN THE PAPER. The paper prints no backward pass; these
// listings are how Stepformer writes one, in the paper's style (column vectors, the paper's names
// with ∇ prefixed: ∇S ∈ ℝ^{ℓ_z×ℓ_x} is ∂loss/∂S), for every forward algorithm that has parameters or
// carries a gradient: Algorithms 1, 2, 4, 5, 6, 7, 8, 9, 10 and the loss lines of 11, 12, 13.
//
// Each line of a backward listing is the ADJOINT of one forward line and carries that line's number
// (PseudoLine::number): LineRef{alg, n, Pass::Backward}, "adjoint of line n", is the line a traced
// backward event names (core/trace/vocabulary.hpp). The lines are listed in the order they run, the
// REVERSE of the forward's, except that a loop's header comes first: the adjoint of "for l = 1, …, L"
// opens the reversed loop "for l = L, …, 1" over its body's adjoints (and the forward's "end" has
// none). A line that does several things lists its sub-steps (PseudoLine::steps) in the order they
// run before the line's own statement, e.g. softmax's Jacobian in Algorithm 4's adjoint of line 6.
// Forward lines with nothing to differentiate (ℓ ← length(x)) have no adjoint line.
//
// The math is that of core/gradients/*.cpp, the batched backward training uses. Pure data: no
// Eigen, no I/O.
#pragma once
#include "core/model/config.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// The label every backward listing carries, wherever it is shown: each listing's first header line
// is this label as a comment, "/* not in the paper: Stepformer's backward listing. */".
inline constexpr const char* kBackwardListingLabel = "not in the paper: Stepformer's backward listing";

// Whether algorithm `alg` has a backward listing (1, 2, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, and the variant
// Algorithm 4-R, algs::random_feature_attention).
bool has_backward_listing(int alg);

// The backward listing of algorithm `alg` as the model of configuration `c` runs it: the variants'
// lines rewritten and marked (PseudoLine::variant), as pseudocode_for marks the forward's. The
// forward algorithms 8, 9, 10 and the training algorithms 11, 12, 13 are written for their own
// architecture (8 and 11: "ed", 9 and 12: "bert", 10 and 13: "gpt"), whatever c.arch says. An
// algorithm without a listing gives one numbered 0 with no lines.
PseudoAlgorithm backward_pseudocode_for(int alg, const ModelConfig& c);

// The backward listing of `alg` for the paper's configuration of its architecture (no variant).
const PseudoAlgorithm& backward_pseudocode(int alg);

// The adjoint of line `line` in `listing` (a backward listing), or nullptr.
const PseudoLine* adjoint_line(const PseudoAlgorithm& listing, int line);

// The adjoint of line `line` of `alg` in the paper's configuration's listing, or nullptr.
const PseudoLine* backward_line(int alg, int line);

// How many SubStep events of event k's line ran in its frame before event k (a SubStep or the
// line's Line event): the sub-steps of one execution of the line, skipping the frames nested in
// it (e.g. layer_norm's adjoint frames between two sub-steps). For a line of a backward listing
// this is the index into PseudoLine::steps of the sub-step event k is, or, at its Line event, how
// many sub-steps it ran.
int count_substeps(const Trace& t, size_t k);

// Whether the listing of `alg` as shown for the model of configuration c runs its norms before their
// sub-layers (pre-LN): the model's norm position when it is of that listing's architecture (8: "ed",
// 9: "bert", 10: "gpt"), else the paper's, where only GPT (Algorithm 10) is pre-LN.
bool backward_listing_pre_ln(int alg, const ModelConfig& c);

// "adjoint of line 6": how a backward line is named wherever one is shown.
std::string adjoint_name(int line);

// Plain words for the adjoint of line `line` of `alg` (the listing's tooltip), or "" when the
// listing has no such line: for the paper's configuration, or for the model of configuration `c`
// (its norm position decides which line of a residual sub-layer is the norm's).
const char* explain_adjoint(int alg, int line);
const char* explain_adjoint(int alg, int line, const ModelConfig& c);

}  // namespace sf
