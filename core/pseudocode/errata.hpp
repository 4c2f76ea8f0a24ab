// The slips (and silent departures) of the seeds' pseudocode, as data for the app's Errata panel:
// the paper (Phuong & Hutter 2022, seed 000), Carpenter's "Transformer decoding in fifty lines"
// (seed 002) and the Dinan–Yaida–Zhang index tutorial (seed 001). Each names where it is, quotes
// what is printed, says what Stepformer does instead, and lists the pseudocode lines of the
// paper's algorithms where it shows in a trace (for the panel's "Show me").
// Pure data: no Eigen, no I/O.
#pragma once
#include <string>
#include <vector>

namespace sf {

// The seed a slip is in: the paper (000), Carpenter's "Transformer decoding in fifty lines" (002,
// code listings) and the Dinan–Yaida–Zhang index tutorial (001, formulas).
// Article: the encyclopedia article (seed 004), whose algorithms issue 25 adds (not in the paper).
enum class Seed { Paper, Carpenter, DinanYaidaZhang, Article };

enum class ErratumKind {
  Slip,     // wrong as printed: a typo, a wrong shape, code that does not do what it says
  Departure  // as intended by its author, but not what the paper or practice does
};

// A line of the paper's pseudocode (core/pseudocode) where an erratum shows in a trace.
struct ErratumTarget {
  int alg;
  int line;
};

struct Erratum {
  std::string id;          // stable key, e.g. "paper-layer-norm-eps" (tests, --actions errata:show:ID)
  Seed seed;
  ErratumKind kind;
  std::string where;       // "Algorithm 6, line 3", "LOG_DENSITY", …
  std::string printed;     // what the seed prints, quoted
  std::string problem;     // what is wrong with it (or how it departs)
  std::string stepformer;  // what Stepformer does instead
  // Where it shows, best first; the panel jumps to the first one the current trace has.
  std::vector<ErratumTarget> show;
};

// Every erratum, the paper's first, then Carpenter's, then Dinan–Yaida–Zhang's.
const std::vector<Erratum>& errata();
// The erratum with that id, or nullptr.
const Erratum* find_erratum(const std::string& id);
const char* to_string(ErratumKind k);
// "Phuong & Hutter 2022 (seed 000)", "Carpenter 2023 (seed 002)", "Dinan–Yaida–Zhang (seed 001)".
const char* to_string(Seed s);

}  // namespace sf
