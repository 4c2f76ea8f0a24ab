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
  (void)p;  // the colour-blind palette: issue 12 (sessions and themes)
  return diverging ? lerp_stops(kCoolWarm, t) : lerp_stops(kViridis, t);
}

Rgb8 infinity_color() { return {52, 52, 58}; }
Rgb8 hatch_color() { return {150, 150, 162}; }
Rgb8 nan_color() { return {255, 0, 255}; }

Palette heatmap_palette() { return g_palette; }
void set_heatmap_palette(Palette p) { g_palette = p; }

}  // namespace sf
