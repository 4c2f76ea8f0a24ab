// The heatmaps' colours, shared by the on-screen heatmap (heatmap.hpp) and the exported
// figures (app/export/): no ImGui, no GL.
//
// Two palettes. Standard: Moreland's cool-warm (blue, grey, red) for signed data, viridis for
// non-negative data. Colour-blind safe (View › Colour-blind palette, and presentation mode):
// ColorBrewer's PuOr (purple, white, orange), readable with red-green colour blindness, and
// cividis, which keeps its order in grey scale (docs/sessions.md, "Themes and palettes").
#pragma once
#include <cstdint>

namespace sf {

struct Rgb8 {
  uint8_t r = 0, g = 0, b = 0;
  bool operator==(const Rgb8&) const = default;
};

enum class Palette { Standard, ColorBlind };

// The colour at t ∈ [0, 1] of the diverging (t = 0.5 is zero) or the sequential map.
Rgb8 colormap(float t, bool diverging, Palette p);
// Cells that have no place on the scale.
Rgb8 infinity_color();  // ±∞ (drawn hatched or with "−∞" on top)
Rgb8 hatch_color();
Rgb8 nan_color();

// The palette every heatmap uses now (the app sets it from its settings each frame).
Palette heatmap_palette();
void set_heatmap_palette(Palette p);

}  // namespace sf
