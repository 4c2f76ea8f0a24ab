#include "app/panels/vision_canvas.hpp"

#include <algorithm>
#include <cmath>
#include <cstdio>

#include "app/panels/panel.hpp"
#include "app/widgets/colormap.hpp"
#include "core/arch/vit.hpp"

namespace sf {

namespace {

ImU32 im(Rgb8 c, int alpha) { return IM_COL32(c.r, c.g, c.b, alpha); }

std::string weight_text(double w) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4f", w);
  return buf;
}

}  // namespace

CanvasResult draw_image_canvas(const App& app, const std::vector<int>& pixels, int patch, const VisionReadout& r,
                               bool overlay, const std::string& weights_of, float side) {
  CanvasResult out;
  const float cell = std::floor(side / kImageSide);
  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const ImVec2 p1(p0.x + cell * kImageSide, p0.y + cell * kImageSide);
  out.rect = ImRect(p0, p1);
  ImGui::InvisibleButton("##image", ImVec2(p1.x - p0.x, p1.y - p0.y),
                         ImGuiButtonFlags_MouseButtonLeft | ImGuiButtonFlags_MouseButtonRight);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  // The pixels, intensity 0 … 16 as grey (ink light on dark).
  for (int y = 0; y < kImageSide; ++y)
    for (int x = 0; x < kImageSide; ++x) {
      const int g = intensity_grey(pixels[static_cast<size_t>(y * kImageSide + x)]);
      dl->AddRectFilled(ImVec2(p0.x + x * cell, p0.y + y * cell), ImVec2(p0.x + (x + 1) * cell, p0.y + (y + 1) * cell),
                        IM_COL32(g, g, g, 255));
    }
  // The patches: their weights as a colour over them (scaled to the largest patch weight), their grid and numbers.
  const int per_row = kImageSide / patch;
  const size_t n_patches = static_cast<size_t>(per_row * per_row);
  const bool have = r.weights.size() == n_patches + 1;
  double w_max = 0;
  if (have)
    for (size_t k = 1; k < r.weights.size(); ++k) w_max = std::max(w_max, r.weights[k]);
  const Palette pal = heatmap_palette();
  const ImU32 grid = accent_color(app.settings.dark);
  for (int k = 1; k <= per_row * per_row; ++k) {
    const int py = (k - 1) / per_row, px = (k - 1) % per_row;
    const ImVec2 a(p0.x + px * patch * cell, p0.y + py * patch * cell), b(a.x + patch * cell, a.y + patch * cell);
    if (overlay && have && w_max > 0)
      dl->AddRectFilled(a, b, im(colormap(static_cast<float>(r.weights[static_cast<size_t>(k)] / w_max), false, pal), 130));
    dl->AddRect(a, b, grid, 0.0f, 0, 1.5f);
    const std::string num = std::to_string(k + 1);  // token k + 1
    dl->AddRectFilled(ImVec2(a.x + 2, a.y + 2), ImVec2(a.x + 4 + ImGui::CalcTextSize(num.c_str()).x, a.y + 2 + ImGui::GetTextLineHeight()),
                      IM_COL32(0, 0, 0, 160));
    dl->AddText(ImVec2(a.x + 3, a.y + 2), IM_COL32(255, 255, 255, 255), num.c_str());
  }
  // The pointer: which pixel and patch, its weight; the buttons paint.
  if (ImGui::IsItemHovered()) {
    const ImVec2 m = ImGui::GetIO().MousePos;
    const int x = std::clamp(static_cast<int>((m.x - p0.x) / cell), 0, kImageSide - 1);
    const int y = std::clamp(static_cast<int>((m.y - p0.y) / cell), 0, kImageSide - 1);
    const int k = y / patch * per_row + x / patch + 1;
    std::string tip = "pixel row " + std::to_string(y + 1) + ", column " + std::to_string(x + 1) + ": intensity " +
                      std::to_string(pixels[static_cast<size_t>(y * kImageSide + x)]) + " of 16\n" +
                      vision_token_label(k + 1, patch, false) + " = token " + std::to_string(k + 1);
    if (have)
      tip += "\nthe class token's weight on it: " + weight_text(r.weights[static_cast<size_t>(k)]) + " (" + weights_of + ")";
    tip += "\nleft button: paint (16), right button: erase (0)";
    item_tooltip(tip);
    const int v = ImGui::IsMouseDown(ImGuiMouseButton_Left) ? kDigitMax : ImGui::IsMouseDown(ImGuiMouseButton_Right) ? 0 : -1;
    if (v >= 0 && pixels[static_cast<size_t>(y * kImageSide + x)] != v) out.row = y + 1, out.col = x + 1, out.value = v;
  }
  // The class token's own weight (token 1), beside the image.
  if (have) {
    ImGui::SameLine();
    ImGui::BeginGroup();
    const ImVec2 s0 = ImGui::GetCursorScreenPos();
    const float sw = cell * 1.2f;
    const double w = r.weights[0];
    dl->AddRectFilled(s0, ImVec2(s0.x + sw, s0.y + sw),
                      im(colormap(w_max > 0 ? static_cast<float>(std::min(1.0, w / w_max)) : 0.0f, false, pal), 255));
    dl->AddRect(s0, ImVec2(s0.x + sw, s0.y + sw), grid, 0.0f, 0, 1.5f);
    ImGui::Dummy(ImVec2(sw, sw));
    item_tooltip("token 1, the class token (CLS): its weight on itself " + weight_text(w) + " (" + weights_of + ")");
    ImGui::TextUnformatted("1 CLS");
    ImGui::TextUnformatted(weight_text(w).c_str());
    ImGui::EndGroup();
  }
  return out;
}

void draw_class_bars(const App& app, const VisionReadout& r, const std::vector<std::string>& classes, int true_class) {
  const ImU32 accent = accent_color(app.settings.dark);
  const ImU32 plain = ImGui::GetColorU32(ImGuiCol_PlotHistogram);
  for (size_t c = 0; c < r.P.size(); ++c) {
    const bool predicted = static_cast<int>(c) == r.predicted;
    const std::string name = c < classes.size() ? classes[c] : std::to_string(c);
    const std::string text = name + (static_cast<int>(c) == true_class ? " true " : "      ") + weight_text(r.P[c]);
    if (predicted) ImGui::PushStyleColor(ImGuiCol_Text, accent);
    number_bar(app, text, "0 true 0.0000 ", static_cast<float>(r.P[c]), 1.0f, false, predicted ? accent : plain);
    if (predicted) ImGui::PopStyleColor();
    item_tooltip("P[" + std::to_string(c + 1) + ", 1] = " + weight_text(r.P[c]) + ": class \"" + name + "\"" +
                 (predicted ? ", the prediction (the largest)" : "") +
                 (static_cast<int>(c) == true_class ? ", the test digit's true class" : ""));
  }
}

}  // namespace sf
