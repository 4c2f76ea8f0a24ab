// The pseudocode of the paper's 15 algorithms as a data table, transcribed from
// reference/algorithms.md ("Formal Algorithms for Transformers", Phuong & Hutter 2022;
// adapted from [PH22]). Line numbers are the paper's, so that the line a trace event names
// (Event::alg, Event::line) is the line a learner holding the PDF sees.
//
// Used by the CLI's --trace and by the desktop app's pseudocode panel. Pure data: no
// Eigen, no I/O.
#pragma once
#include <string>
#include <vector>

namespace sf {

struct PseudoLine {
  int number;        // the paper's line number; 0 for an unnumbered comment line (Alg. 8)
  std::string text;  // the line as printed, without its number or leading indentation
  int indent;        // nesting level (0 = the algorithm's body)
  // "" for the paper's line; else the variant that rewrote it and its source, e.g.
  // "RMSNorm — encyclopedia article (seed 004)" (core/pseudocode/variants.hpp).
  std::string variant{};
  // The sub-steps of a line that does several things, in the order they run; empty for a line with
  // one statement. Only Stepformer's backward listings have them (core/pseudocode/backward_listings.hpp).
  std::vector<std::string> steps{};
};

struct PseudoAlgorithm {
  int number;                       // 1 … 15
  std::string name;                 // "DTransformer", "layer_norm", "Token embedding", …
  std::string signature;            // "P ← DTransformer(x | θ)"; "" where the paper gives none
  std::vector<std::string> header;  // the /* comment */, Input/Output/Parameters/… lines
  std::vector<PseudoLine> lines;    // in order, comment lines included
  // Lines a model's variants add under the header (number 0, variant set), e.g. the tensors
  // they add or remove; empty for the paper's algorithm (core/pseudocode/variants.hpp).
  std::vector<PseudoLine> variant_header{};
};

// The algorithm with that number, or nullptr when there is none (outside 1 … 15 and extra_pseudocode()).
const PseudoAlgorithm* pseudocode(int alg);

// The numbered line `line` of algorithm `alg`, or nullptr (line 0 and unknown lines).
const PseudoLine* pseudocode_line(int alg, int line);

// Which stack of layers the numbered line `line` of `alg` belongs to: "encoder" (Algorithm 8
// lines 4–9), "decoder" (Algorithm 8 lines 13–20), "" elsewhere. Labels call-stack frames.
const char* loop_role(int alg, int line);

// All 15 algorithms, in order.
const std::vector<PseudoAlgorithm>& pseudocode_all();

// Stepformer's listings of algorithms that are NOT in the paper (issue 25: the encyclopedia
// article's, seed 004), numbered by their ids in vocabulary.hpp's `algs` (e.g. 104 for Algorithm
// 4-F, FlashAttention; core/pseudocode/flash_listing.cpp). pseudocode(alg) finds them too.
const std::vector<PseudoAlgorithm>& extra_pseudocode();

// How an algorithm is numbered where "Algorithm N" is shown: "4-F" for algs::flash_attention, the
// paper's number otherwise ("10").
std::string algorithm_label(int alg);
// True for the listings of extra_pseudocode(): they are labelled "not in the paper" wherever they show.
bool not_in_paper(int alg);

}  // namespace sf
