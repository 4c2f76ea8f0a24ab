#include "app/widgets/colormap.hpp"

#include <algorithm>
#include <cstddef>

namespace sf {

namespace {

struct Stop {
  float r, g, b;
};

// Moreland's cool-warm (matplotlib's "coolwarm"), evenly spaced over [−a, a].
constexpr Stop kCoolWarm[] = {{59, 76, 192},   {98, 130, 234},  {141, 176, 254}, {184, 208, 249}, {221, 221, 221},
                              {245, 196, 173}, {244, 154, 123}, {222, 96, 77},   {180, 4, 38}};
// viridis, evenly spaced over [lo, hi].
constexpr Stop kViridis[] = {{68, 1, 84},    {71, 44, 122}, {59, 81, 139},  {44, 113, 142}, {33, 144, 141},
                             {39, 173, 129}, {92, 200, 99}, {170, 220, 50}, {253, 231, 37}};

// Colour-blind safe, diverging: ColorBrewer's PuOr (purple, white, orange), 9 classes, purple for
// negative values. Its two arms differ in blue and in lightness, not in red against green, so
// deuteranopes and protanopes read the sign (Brewer's "colorblind safe" list).
constexpr Stop kPuOr[] = {{84, 39, 136},   {128, 115, 172}, {178, 171, 210}, {216, 218, 235}, {247, 247, 247},
                          {254, 224, 182}, {253, 184, 99},  {224, 130, 20},  {179, 88, 6}};
// Colour-blind safe, sequential: cividis (Nuñez, Anderton & Renslow 2018), made so that a viewer with
// deuteranomaly sees the same map; its lightness rises monotonically (viridisLite's cividis(10)).
constexpr Stop kCividis[] = {{0, 32, 77},     {0, 51, 111},    {57, 72, 107},   {87, 92, 109},  {112, 113, 115},
                             {138, 135, 121}, {166, 157, 117}, {196, 181, 108}, {228, 207, 91}, {255, 234, 70}};

template <size_t N>
Rgb8 lerp_stops(const Stop (&s)[N], float t) {
  t = std::clamp(t, 0.0f, 1.0f) * static_cast<float>(N - 1);
  const size_t i = std::min(static_cast<size_t>(t), N - 2);
  const float f = t - static_cast<float>(i);
  auto mix = [f](float a, float b) { return static_cast<uint8_t>(a + (b - a) * f + 0.5f); };
  return {mix(s[i].r, s[i + 1].r), mix(s[i].g, s[i + 1].g), mix(s[i].b, s[i + 1].b)};
}

Palette g_palette = Palette::Standard;

}  // namespace

Rgb8 colormap(float t, bool diverging, Palette p) {
  if (p == Palette::ColorBlind) return diverging ? lerp_stops(kPuOr, t) : lerp_stops(kCividis, t);
  return diverging ? lerp_stops(kCoolWarm, t) : lerp_stops(kViridis, t);
}

Rgb8 infinity_color() { return {52, 52, 58}; }
Rgb8 hatch_color() { return {150, 150, 162}; }
Rgb8 nan_color() { return {255, 0, 255}; }

Palette heatmap_palette() { return g_palette; }
void set_heatmap_palette(Palette p) { g_palette = p; }

}  // namespace sf
