#include "cli/trace_print.hpp"

#include <algorithm>
#include <map>
#include <ostream>
#include <string>
#include <vector>

#include "cli/common.hpp"
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/pseudocode.hpp"

namespace sf::cli {

namespace {

// A SubStep is drawn one level deeper than its line but belongs to the line's frame.
int frame_depth(const Event& e) { return e.kind == EventKind::SubStep ? e.depth - 1 : e.depth; }

std::string alg_name(int alg) {
  const PseudoAlgorithm* a = pseudocode(alg);
  return "Alg " + algorithm_label(alg) + (a ? " " + a->name : "") + (not_in_paper(alg) ? " (not in the paper)" : "");
}

// Runs of two or more spaces (the margin notes of Algorithm 4) become two spaces.
std::string squeeze(const std::string& s) {
  std::string out;
  for (size_t i = 0; i < s.size(); ++i)
    if (!(s[i] == ' ' && i >= 2 && s[i - 1] == ' ' && s[i - 2] == ' ')) out += s[i];
  return out;
}

std::string indices_text(const Indices& idx) {
  std::string s;
  auto add = [&](const char* name, int v) {
    if (!v) return;
    if (!s.empty()) s += ' ';
    s += name;
    s += '=';
    s += std::to_string(v);
  };
  add("l", idx.l);
  add("h", idx.h);
  add("t", idx.t);
  add("i", idx.i);
  add("n", idx.n);
  return s.empty() ? s : " [" + s + "]";
}

// The line an event is at: "line 6", or for a backward event "adjoint of line 6" (Stepformer's
// backward listing, not in the paper).
std::string line_name(const Event& e) {
  return e.pass == Pass::Backward ? adjoint_name(e.line) : "line " + std::to_string(e.line);
}

// The text of the event's line (or, for an Enter, its algorithm's signature) in the paper's
// pseudocode or, for a backward event, in Stepformer's backward listing (the paper's configuration).
std::string code_text(const Event& e) {
  const bool backward = e.pass == Pass::Backward;
  if (e.kind == EventKind::Enter) {
    if (backward) return backward_pseudocode(e.alg).signature;
    const PseudoAlgorithm* a = pseudocode(e.alg);
    return a ? a->signature : "";
  }
  if (e.kind != EventKind::Line) return "";
  const PseudoLine* l = backward ? backward_line(e.alg, e.line) : pseudocode_line(e.alg, e.line);
  return l ? squeeze(l->text) : "";
}

std::string event_text(const Event& e, const TracePrintOptions& opt) {
  std::string s = std::string(2 * e.depth, ' ') + alg_name(e.alg);
  switch (e.kind) {
    case EventKind::Enter: s += e.pass == Pass::Backward ? " adjoint call" : " call"; break;
    case EventKind::Line: s += " " + line_name(e); break;
    case EventKind::SubStep: s += " " + line_name(e) + " ▸ " + e.label; break;
  }
  s += indices_text(e.idx);
  if (opt.pseudocode) {
    if (const std::string code = code_text(e); !code.empty()) s += "  │ " + code;
  }
  if (!e.values.empty()) {
    s += "  │ ";
    for (size_t i = 0; i < e.values.size(); ++i) s += (i ? ", " : "") + value_text(e.values[i]);
  }
  return s;
}

bool shown(const Event& e, const TracePrintOptions& opt) {
  if (!opt.abbreviate || frame_depth(e) == 0) return true;
  return e.idx.l == 1 && e.idx.t <= 1 && e.idx.h <= 1;
}

// One line for a run of hidden events [begin, end): per algorithm, its calls (or its lines
// when the run holds no call of it) and the ranges of the loop indices.
std::string hidden_summary(const Trace& trace, size_t begin, size_t end) {
  struct Group {
    int alg = 0, calls = 0, lines = 0;
    Indices lo, hi;
  };
  std::vector<Group> groups;
  int depth = 1 << 30;
  for (size_t k = begin; k < end; ++k) {
    const Event& e = trace.events[k];
    depth = std::min(depth, frame_depth(e));
    auto g = std::find_if(groups.begin(), groups.end(), [&](const Group& x) { return x.alg == e.alg; });
    if (g == groups.end()) {
      groups.push_back({e.alg, 0, 0, {}, {}});
      g = groups.end() - 1;
    }
    (e.kind == EventKind::Enter ? g->calls : g->lines) += 1;
    for (int Indices::*f : {&Indices::l, &Indices::h, &Indices::t, &Indices::i, &Indices::n}) {
      const int v = e.idx.*f;  // 0: not in force, left out of the range
      if (v && (g->lo.*f == 0 || v < g->lo.*f)) g->lo.*f = v;
      g->hi.*f = std::max(g->hi.*f, v);
    }
  }
  std::string s = std::string(2 * depth, ' ') + "⋮ not shown:";
  for (size_t j = 0; j < groups.size(); ++j) {
    const Group& g = groups[j];
    const int n = g.calls ? g.calls : g.lines;
    s += j ? "; " : " ";
    s += alg_name(g.alg) + " ×" + std::to_string(n);
    s += g.calls ? (n == 1 ? " call" : " calls") : (n == 1 ? " line" : " lines");
    std::string ranges;
    const std::pair<const char*, int Indices::*> fields[] = {
        {"l", &Indices::l}, {"h", &Indices::h}, {"t", &Indices::t}, {"i", &Indices::i}, {"n", &Indices::n}};
    for (const auto& [name, f] : fields) {
      if (g.hi.*f == 0) continue;
      if (!ranges.empty()) ranges += ' ';
      ranges += name;
      ranges += '=';
      ranges += std::to_string(g.lo.*f);
      if (g.hi.*f != g.lo.*f) ranges += "…" + std::to_string(g.hi.*f);
    }
    if (!ranges.empty()) s += " [" + ranges + "]";
  }
  return s;
}

}  // namespace

void print_trace(std::ostream& os, const Trace& trace, const TracePrintOptions& opt) {
  std::vector<std::string> notes;
  size_t hidden_from = trace.size();  // start of the current run of hidden events
  for (size_t k = 0; k <= trace.size(); ++k) {
    const bool end = k == trace.size();
    if (!end && !shown(trace.events[k], opt)) {
      if (hidden_from == trace.size()) hidden_from = k;
      continue;
    }
    if (hidden_from < k) os << hidden_summary(trace, hidden_from, k) << "\n";
    hidden_from = trace.size();
    if (end) break;
    const Event& e = trace.events[k];
    os << event_text(e, opt) << "\n";
    for (const auto& v : e.values)
      if (!v.note.empty() && std::find(notes.begin(), notes.end(), v.note) == notes.end()) notes.push_back(v.note);
  }
  for (const auto& n : notes) os << "note: " << n << "\n";
  const bool backward = std::any_of(trace.events.begin(), trace.events.end(), [](const Event& e) { return e.pass == Pass::Backward; });
  if (backward) os << "note: \"adjoint of line N\" is a line of " << kBackwardListingLabel << " (the adjoint of forward line N)\n";
}

void print_algorithm_trace(std::ostream& os, int alg, const Trace& trace) {
  os << "\ntrace of Algorithm " << alg << ": " << trace.size()
     << " events (call = the algorithm is entered with its inputs; line N = line N has run, with what it bound; "
        "nested calls come before the line that made them)\n";
  print_trace(os, trace);
}

}  // namespace sf::cli
