// The high-contrast theme (View › High-contrast theme, and presentation mode): black
// backgrounds, white text, yellow accents and thick borders, for projectors and low vision.
#pragma once

struct ImGuiStyle;

namespace sf {

// Overwrites style's colours and border sizes (call after the dark or light colours are set,
// before ScaleAllSizes).
void apply_high_contrast(ImGuiStyle& style);

}  // namespace sf
