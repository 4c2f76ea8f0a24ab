#include "app/attention_calls.hpp"

#include <algorithm>
#include <cctype>

#include "core/pseudocode/pseudocode.hpp"
#include "core/trace/value_keys.hpp"

namespace sf {

const Value* event_value(const Event& e, const std::string& name) {
  for (const auto& v : e.values)
    if (v.name == name) return &v;
  return nullptr;
}

namespace {

// The transformer line whose MHAttention made the Attention frame entered at k (the caller of
// Attention is MHAttention's line, and MHAttention's caller is the transformer line); none at top level.
LineRef transformer_line(const Trace& t, size_t k) {
  size_t up = t.caller_line(k);
  while (up < t.size() && (t.events[up].alg == 4 || t.events[up].alg == 5)) up = t.caller_line(up);
  return up < t.size() ? t.events[up].ref() : LineRef{};
}

// The last ∇A and ∇S bound in the adjoint frame entered at k (its lines and their sub-steps).
void read_adjoint(const Trace& t, size_t k, HeadCall& c) {
  const int d = t.events[k].depth;
  c.back_enter = k;
  for (size_t j = k + 1; j < t.size() && t.events[j].depth >= d; ++j) {
    const Event& x = t.events[j];
    if (x.depth == d && x.kind == EventKind::Enter) break;  // the next head's frame
    if (const Value* v = event_value(x, "∇A")) c.dA = v, c.dA_event = j;
    if (const Value* v = event_value(x, "∇S")) c.dS = v, c.dS_event = j;
  }
}

// The sliding window's part of a self-attention's mask (issue 25, not in the paper).
std::string window_text(int w, bool causal) {
  const std::string W = std::to_string(w);
  return causal ? "; sliding window w = " + W + " (a variant, seed 004): only t_x − " + W + " ≤ t_z ≤ t_x, the " +
                      std::to_string(w + 1) + " keys up to and including the query"
                : "; sliding window w = " + W + " (a variant, seed 004): only |t_x − t_z| ≤ " + W;
}

}  // namespace

std::vector<HeadCall> head_calls(const Trace& t) {
  std::vector<HeadCall> out;
  for (size_t k = 0; k < t.size(); ++k) {
    const Event& e = t.events[k];
    if (e.alg != 4 || e.kind != EventKind::Enter) continue;
    const LineRef up = transformer_line(t, k);
    if (e.pass == Pass::Backward) {  // the adjoint of a call already listed (the forward runs first)
      for (HeadCall& c : out)
        if (c.caller_alg == up.alg && c.caller_line == up.line && c.idx == e.idx) read_adjoint(t, k, c);
      continue;
    }
    HeadCall c;
    c.enter = k;
    c.idx = e.idx;
    c.mask = event_value(e, "Mask");
    c.caller_alg = up.alg, c.caller_line = up.line;
    for (size_t j = k + 1; j < t.size() && t.events[j].depth >= e.depth; ++j) {
      const Event& x = t.events[j];
      if (x.depth == e.depth + 1 && x.kind == EventKind::SubStep && x.ref() == lines::attention::V_tilde &&
          x.label.find("relative position bias") != std::string::npos)
        c.B = event_value(x, "B"), c.B_event = j;
      if (x.depth != e.depth || x.kind != EventKind::Line) continue;
      if (x.ref() == lines::attention::S) c.line4 = j, c.S = event_value(x, "S");
      if (x.ref() == lines::attention::mask) c.line5 = j, c.S_masked = event_value(x, "S");
      if (x.ref() == lines::attention::V_tilde) c.line6 = j, c.A = event_value(x, keys::attention_weights);
    }
    out.push_back(c);
  }
  return out;
}

std::vector<AttentionGroup> attention_groups(const std::vector<HeadCall>& calls, const ModelConfig& config) {
  std::vector<AttentionGroup> out;
  for (const auto& c : calls) {
    if (std::any_of(out.begin(), out.end(), [&](const AttentionGroup& g) { return g.alg == c.caller_alg && g.line == c.caller_line; }))
      continue;
    AttentionGroup g;
    g.alg = c.caller_alg;
    g.line = c.caller_line;
    const PseudoLine* pl = pseudocode_line(g.alg, g.line);
    const std::string text = pl ? pl->text : "";
    const bool cross = text.find("X, Z") != std::string::npos;
    const char* role = loop_role(g.alg, g.line);
    std::string what = cross ? "Cross-attention (queries x, keys and values z)" : "Self-attention";
    if (!cross && *role) {
      what = std::string(role) + " self-attention";
      what[0] = static_cast<char>(std::toupper(what[0]));
    }
    g.title = what + " — " + (pseudocode(g.alg) ? pseudocode(g.alg)->name : std::string("?")) + " line " +
              std::to_string(g.line);
    g.mask_text = text.find("Mask ≡ 1") != std::string::npos ? "Mask ≡ 1: every query attends to every key"
                  : config.mask == MaskKind::Prefix
                      ? "Mask[t_z, t_x] = [t_z ≤ max(t_x, p)]: prefix-LM (a variant, seed 004), every query sees "
                        "the first p tokens (up to the first \"" + config.prefix_separator + "\") and the keys up to itself"
                      : "Mask[t_z, t_x] = [t_z ≤ t_x]: causal, a query sees the keys up to itself";
    if (!cross && config.window > 0) g.mask_text += window_text(config.window, text.find("Mask ≡ 1") == std::string::npos);
    out.push_back(g);
  }
  return out;
}

const HeadCall* find_head_call(const std::vector<HeadCall>& calls, int alg, int line, int l, int h, int i) {
  for (const auto& c : calls)
    if (c.caller_alg == alg && c.caller_line == line && c.idx.l == l && c.idx.h == h && c.idx.i == i) return &c;
  return nullptr;
}

}  // namespace sf
