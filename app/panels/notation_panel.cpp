#include "app/panels/notation_panel.hpp"

#include <cstdio>
#include <functional>

#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "core/pseudocode/backward_listings.hpp"
#include "core/pseudocode/pseudocode.hpp"
#include "core/pseudocode/variants.hpp"

namespace sf {

namespace {

constexpr int kMaxRows = 8, kMaxCols = 8;  // the part of a value a table shows

bool token_axis(Axis a) { return a == Axis::TokenX || a == Axis::TokenZ; }

std::string fixed3(float x) {
  char b[32];
  std::snprintf(b, sizeof b, "%.3f", x);
  return b;
}

// Notation text, one piece per row: the seeds' long equations are split where they put wide
// spaces ("   "), so that they fit a column.
void wrapped_math(const App& app, const std::string& s, ImU32 color) {
  size_t from = 0;
  while (from <= s.size()) {
    const size_t gap = s.find("   ", from);
    const std::string piece = s.substr(from, gap == std::string::npos ? std::string::npos : gap - from);
    if (!piece.empty()) math_text(app.fonts, piece, color);
    if (gap == std::string::npos) break;
    from = s.find_first_not_of(' ', gap);
    if (from == std::string::npos) break;
  }
}

// The line of event `ev` in notation n: its name, then its text or why it has none. `own`: the
// open model's own line where a variant rewrote it (core/pseudocode/variants), or a backward
// event's line of Stepformer's backward listing with its sub-steps, which the paper's column then
// shows; the other notations write the paper's line, and say so.
void notation_line(const App& app, Notation n, const Event& ev, const PseudoLine* own, bool selected) {
  const ImU32 dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  const bool variant = own && !own->variant.empty();
  ImGui::TextColored(ImColor(selected ? accent_color(app.settings.dark) : dim), "%s", to_string(n));
  ImGui::Indent();
  if (own && n == Notation::PhuongHutter) {
    wrapped_math(app, own->text, selected ? (variant ? variant_color(app.settings.dark) : ImGui::GetColorU32(ImGuiCol_Text)) : dim);
    for (const std::string& step : own->steps) wrapped_math(app, "· " + step, selected ? ImGui::GetColorU32(ImGuiCol_Text) : dim);
    if (variant) ImGui::TextDisabled("(variant: %s)", own->variant.c_str());
  } else {
    const NotationText nt = notation_text(n, ev.ref(), app.session.model().config);
    if (!nt.text.empty()) {
      wrapped_math(app, nt.text, selected ? ImGui::GetColorU32(ImGuiCol_Text) : dim);
      // A backward line's DYZ text follows the model's norm order (notation_text); its other variants are the paper's.
      if (variant)
        ImGui::TextDisabled("%s", ev.pass == Pass::Backward && n == Notation::DinanYaidaZhang
                                      ? "(written for this model's norm order and otherwise the paper's configuration; this model runs the variant above)"
                                      : "(written for the paper's configuration; this model runs the variant above)");
    } else {
      ImGui::PushTextWrapPos(0.0f);
      ImGui::TextDisabled("no counterpart: %s", nt.no_counterpart.c_str());
      ImGui::PopTextWrapPos();
    }
  }
  ImGui::Unindent();
}

// A table of at most kMaxRows × kMaxCols entries of m, its rows and columns labelled, the entry
// `mark` (row, column) highlighted; returns the hovered entry as (row, column), or (−1, −1).
std::pair<int, int> value_table(const App& app, const char* id, const MatF& m, const std::function<std::string(int)>& row_label,
                                const std::function<std::string(int)>& col_label, std::pair<int, int> mark = {-1, -1}) {
  const int rows = std::min<int>(kMaxRows, static_cast<int>(m.rows())), cols = std::min<int>(kMaxCols, static_cast<int>(m.cols()));
  std::pair<int, int> hovered{-1, -1};
  if (rows == 0 || cols == 0) return hovered;
  if (m.rows() > rows || m.cols() > cols)
    ImGui::TextDisabled("showing %d × %d of %d × %d", rows, cols, static_cast<int>(m.rows()), static_cast<int>(m.cols()));
  if (!ImGui::BeginTable(id, cols + 1, ImGuiTableFlags_Borders | ImGuiTableFlags_SizingFixedFit)) return hovered;
  ImGui::PushFont(app.fonts.mono);
  ImGui::TableNextRow();
  ImGui::TableNextColumn();
  for (int c = 0; c < cols; ++c) {
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", col_label(c).c_str());
  }
  for (int r = 0; r < rows; ++r) {
    ImGui::TableNextRow();
    ImGui::TableNextColumn();
    ImGui::TextDisabled("%s", row_label(r).c_str());
    for (int c = 0; c < cols; ++c) {
      ImGui::TableNextColumn();
      if (mark == std::pair<int, int>{r, c}) ImGui::TableSetBgColor(ImGuiTableBgTarget_CellBg, highlight_bg(app.settings.dark));
      ImGui::TextUnformatted(fixed3(m(r, c)).c_str());
      if (ImGui::IsItemHovered()) hovered = {r, c};
    }
  }
  ImGui::PopFont();
  ImGui::EndTable();
  return hovered;
}

// "index = label" for a row or column along axis a (tokens get their character).
std::string axis_label(const Session& s, size_t k, Axis a, const char* index, int i) {
  std::string out = std::string(index) + "=" + std::to_string(i + 1);
  if (!token_axis(a)) return out;
  const Tokens& toks = s.tokens_at(k, a);
  if (i < static_cast<int>(toks.size())) out.append(" ").append(token_label(s.tokenizer(), toks[static_cast<size_t>(i)]));
  return out;
}

// The index letter DYZ gives the second index of a symbol: i in "t;i", t′ in "tt′".
std::string dyz_second(const NotationName& n) {
  const size_t semi = n.dyz_indices.find(';');
  return semi != std::string::npos ? n.dyz_indices.substr(semi + 1) : n.dyz_indices == "tt′" ? "t′" : "i";
}

}  // namespace

void NotationPanel::draw(App& app) {
  Session& s = app.session;
  if (s.trace().size() == 0) {
    ImGui::TextDisabled("No trace.");
    return;
  }
  ImGui::PushFont(app.fonts.text);
  for (Notation n : {Notation::PhuongHutter, Notation::Carpenter, Notation::DinanYaidaZhang}) {
    if (n != Notation::PhuongHutter) ImGui::SameLine();
    if (ImGui::RadioButton(to_string(n), notation == n)) notation = n;
  }
  help_marker(
      "Phuong & Hutter: column vectors, tokens are columns (the paper).\n"
      "Carpenter, \"Transformer decoding in fifty lines of pseudocode\" (seed 002): row vectors, tokens are rows: xs[n, 1:V].\n"
      "Dinan, Yaida & Zhang, \"Tutorial on Transformers with Indices\" (seed 001): every index written, z_{α;t;i} "
      "(sample α, token t, feature i), C = n/H per head.");
  const size_t k = app.shown_event();
  const Event& ev = s.trace().events[k];
  ImGui::Separator();
  ImGui::TextColored(ImColor(accent_color(app.settings.dark)), "%s", describe_event(ev).c_str());
  const bool backward = ev.pass == Pass::Backward;
  if (backward) {
    ImGui::PushStyleColor(ImGuiCol_Text, variant_color(app.settings.dark));
    ImGui::TextWrapped("%s", kBackwardListingLabel);
    ImGui::PopStyleColor();
  }
  if (ev.kind == EventKind::Enter) {
    ImGui::TextDisabled("The call of Algorithm %d%s: its inputs (no line yet).", ev.alg, backward ? "'s adjoint" : "");
  } else {
    const PseudoAlgorithm listing = backward ? backward_pseudocode_for(ev.alg, s.model().config)
                                             : pseudocode_for(ev.alg, s.model().config, s.traced_with_kv_cache());
    const PseudoLine* own = adjoint_line(listing, ev.line);  // the numbered line `ev.line` of either listing
    if (own && !backward && own->variant.empty()) own = nullptr;  // the paper's own line: notation_text has it
    for (Notation n : {Notation::PhuongHutter, Notation::Carpenter, Notation::DinanYaidaZhang})
      notation_line(app, n, ev, own, n == notation);
  }
  ImGui::Separator();
  ImGui::TextDisabled("What this step bound, as %s writes it:", to_string(notation));

  const int h = ev.idx.h;
  for (size_t vi = 0; vi < ev.values.size(); ++vi) {
    const Value& v = ev.values[vi];
    ImGui::PushID(static_cast<int>(vi));
    if (v.kind == ValueKind::Scalar && v.m.size() == 1) {
      math_text(app.fonts, v.name + " = " + fixed3(v.m(0, 0)));
    } else if (v.kind == ValueKind::Tokens) {
      std::string list;
      for (int id : v.tokens) list.append(list.empty() ? "" : " ").append(token_label(s.tokenizer(), id));
      math_text(app.fonts, v.name + " = [" + list + "]");
    } else if (v.kind == ValueKind::Mask) {
      math_text(app.fonts, v.name + " ∈ {0,1}^{" + std::to_string(v.m.rows()) + "×" + std::to_string(v.m.cols()) + "}  (see the Attention tab)",
                ImGui::GetColorU32(ImGuiCol_TextDisabled));
    } else if (v.kind == ValueKind::Matrix && v.m.size() > 0) {
      const NotationName nn = notation_name(ev.alg, v.name);
      const bool tokens_are_columns = token_axis(v.cols);
      if (notation == Notation::PhuongHutter) {
        math_text(app.fonts, v.name + " ∈ " + paper_shape(v) + (tokens_are_columns ? "   (columns are tokens)" : ""));
        value_table(app, "paper", v.m, [&](int r) { return axis_label(s, k, v.rows, token_axis(v.rows) ? "t" : "i", r); },
                    [&](int c) { return axis_label(s, k, v.cols, "t", c); });
      } else if (notation == Notation::Carpenter) {
        // Row vectors: a value whose columns are tokens is shown transposed, a row per token n.
        const MatF m = tokens_are_columns ? MatF(v.m.transpose()) : MatF(v.m);
        const std::string name = nn.carpenter.empty() ? v.name + (tokens_are_columns ? "ᵀ" : "") : nn.carpenter;
        math_text(app.fonts, name + (tokens_are_columns ? "   (rows are tokens n)" : ""));
        if (nn.carpenter.empty())
          ImGui::TextDisabled("no counterpart in Carpenter's listing: the paper's %s%s", v.name.c_str(), tokens_are_columns ? ", transposed" : "");
        value_table(app, "carpenter", m, [&](int r) { return axis_label(s, k, tokens_are_columns ? v.cols : v.rows, "n", r); },
                    [&](int c) { return std::to_string(c + 1); });
      } else if (nn.dyz.empty()) {
        ImGui::TextDisabled("%s: no symbol in Dinan–Yaida–Zhang's tutorial", v.name.c_str());
      } else {
        // Index form, token first: z_{α;t;i}. A single column (one token's vector) is at t.
        const bool one_token = !tokens_are_columns && v.m.cols() == 1;
        const MatF m = (tokens_are_columns || one_token) ? MatF(v.m.transpose()) : MatF(v.m);
        const int t0 = one_token ? std::max(1, ev.idx.t) : 1;  // the t of row 0
        const std::string second = dyz_second(nn);
        int t = t0, kk = 1;
        if (hover_value_ == v.name && hover_t_ >= t0 && hover_t_ - t0 < m.rows() && hover_k_ >= 1 && hover_k_ <= m.cols())
          t = hover_t_, kk = hover_k_;
        math_text(app.fonts, dyz_entry(nn, t, kk, h) + " = " + fixed3(m(t - t0, kk - 1)) + "   (the paper's " + v.name + ")",
                  accent_color(app.settings.dark));
        const auto hovered = value_table(
            app, "dyz", m, [&](int r) { return one_token ? "t=" + std::to_string(t0) : axis_label(s, k, v.cols, "t", r); },
            [&](int c) { return second + "=" + std::to_string(c + 1); }, {t - t0, kk - 1});
        if (hovered.first >= 0) hover_value_ = v.name, hover_t_ = hovered.first + t0, hover_k_ = hovered.second + 1;
      }
    }
    ImGui::PopID();
  }
  ImGui::PopFont();
}

}  // namespace sf
