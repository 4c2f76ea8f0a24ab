// Shared helpers for panels: colours and small widgets used by more than one panel.
#pragma once
#include <string>
#include <vector>

#include "app/app.hpp"
#include "imgui.h"

namespace sf {

// The paper's names for the algorithms ("DTransformer", "Attention", …).
const char* algorithm_name(int alg);
// "DTransformer line 6 (l=2)", "Attention line 5 (l=1, h=3)", "EDTransformer line 14 (decoder, l=1)"; a
// backward listing's line (issue 24, not in the paper): "DTransformer adjoint line 6 (l=2)".
std::string describe_event(const Event& e);
// "l=2, h=3" (only the indices in force); empty when none.
std::string describe_indices(const Indices& idx);
// The value's shape in the paper's notation with numbers filled in: "ℝ^{16×7}", "ℝ^{64}".
std::string paper_shape(const Value& v);
// A token's label for panels and axes: the tokenizer's label (its piece, GPT-2's Ġ already "␣")
// with any whitespace made visible: space "␣", newline "↵", tab "⇥", other control characters
// as their control pictures.
std::string token_label(const Tokenizer& tok, int id);
// `text` with space, newline and tab shown as "␣", "↵", "⇥" (other control characters as their pictures).
std::string visible_whitespace(const std::string& text);
// The tokens x as chips on the current line: each piece's label (token_label) in a box, shaded
// alternately so that piece boundaries show, with its 1-based paper id in small type; hovering
// one gives t, the paper id, the file's id and the piece as the tokenizer's files write it.
// Only chips that fit whole in `max_w` pixels are drawn; the rest are summarised as "+N more",
// whose tooltip lists them. `colors` (optional, one per token)
// shades each chip instead.
void token_chips(const App& app, const Tokens& x, float max_w, const std::vector<ImU32>* colors = nullptr);
// The tooltip text of token id at 1-based position t ("t = 3: “␣world”, paper id 996 = file id 995 + 1, “Ġworld”").
std::string token_tooltip(const Tokenizer& tok, int t, int id);
// "(?)" marker with a tooltip, as in ImGui's demo.
void help_marker(const char* text);
// A tooltip for the last item (1.86 has no SetItemTooltip).
void item_tooltip(const std::string& text);
// A table cell: `text` in the monospace font (in a column as wide as `width_sample`), then a
// bar for x in the rest of the cell, full width = `scale`. Signed bars grow left or right
// from the middle; unsigned ones from the left. A nonzero x gets at least one pixel.
void number_bar(const App& app, const std::string& text, const char* width_sample, float x, float scale, bool is_signed,
                ImU32 color);
// Black or white, whichever reads on the colour bg.
ImU32 ink_for(ImU32 bg);
// Accent colours that read well on both themes.
ImU32 accent_color(bool dark);
ImU32 highlight_bg(bool dark);
// The colour of what a variant changed (docs/variants.md): pseudocode lines, tags, banners.
ImU32 variant_color(bool dark);

}  // namespace sf
