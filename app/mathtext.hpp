// Paper notation in ImGui: "W_q", "ℓ_max", "W^l_mlp1", "Σ_{i=1}^{d_e}", "ℝ^{16×7}" drawn with
// real sub- and superscripts (a smaller font, shifted). Words such as layer_norm and
// eos_token keep their underscore.
#pragma once
#include <string>
#include <vector>

#include "imgui.h"

namespace sf {

struct Fonts;

struct MathRun {
  std::string text;
  int level = 0;  // 0 baseline, +1 superscript, −1 subscript
};

// Splits notation into runs (pure; tested headless).
std::vector<MathRun> parse_math(const std::string& s);

// Size of the drawn text.
ImVec2 math_text_size(const Fonts& f, const std::string& s);
// Draws at `pos` into the window's draw list (no layout); returns the width.
float draw_math(const Fonts& f, ImVec2 pos, const std::string& s, ImU32 color);
// Draws as a layout item (advances the cursor like ImGui::Text).
void math_text(const Fonts& f, const std::string& s, ImU32 color = 0);

}  // namespace sf
