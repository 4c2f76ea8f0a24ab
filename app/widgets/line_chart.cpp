#include "app/widgets/line_chart.hpp"

#include <algorithm>
#include <cstdio>

namespace sf {

namespace {

std::string fmt(const char* f, double v) {
  char buf[64];
  std::snprintf(buf, sizeof buf, f, v);
  return buf;
}

}  // namespace

int tick_intervals(float span_px, float labels_px, int most) {
  int n = most;
  while (n > 1 && span_px / static_cast<float>(n) < labels_px) --n;
  return n;
}

ChartDrawn line_chart(const char* id, const std::vector<ChartSeries>& series, ImVec2 size, bool log_y, float ema,
                      bool dark, const ChartRange& range) {
  ImGui::InvisibleButton(id, size);
  const bool hovered = ImGui::IsItemHovered();
  const ImVec2 p0 = ImGui::GetItemRectMin(), p1 = ImGui::GetItemRectMax();
  ChartDrawn drawn;
  drawn.rect = ImVec4(p0.x, p0.y, p1.x - p0.x, p1.y - p0.y);
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const float fs = ImGui::GetFontSize();
  const ImU32 axis = dark ? IM_COL32(160, 160, 160, 255) : IM_COL32(80, 80, 80, 255);
  const ImU32 grid = dark ? IM_COL32(255, 255, 255, 28) : IM_COL32(0, 0, 0, 28);
  const ImU32 text = ImGui::GetColorU32(ImGuiCol_Text);
  dl->AddRectFilled(p0, p1, dark ? IM_COL32(20, 22, 28, 255) : IM_COL32(250, 250, 250, 255));

  // Smoothed values (EMA), transformed for the y axis.
  auto ty = [&](double v) { return log_y ? std::log10(std::max(v, 1e-12)) : v; };
  std::vector<std::vector<float>> ys(series.size());
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  for (size_t s = 0; s < series.size(); ++s) {
    const auto& pts = *series[s].pts;
    ys[s].resize(pts.size());
    double acc = 0;
    bool first = true;
    for (size_t k = 0; k < pts.size(); ++k) {
      const double v = pts[k].loss;
      if (std::isfinite(v)) {
        acc = first ? v : ema * acc + (1 - ema) * v;
        first = false;
      }
      ys[s][k] = static_cast<float>(acc);
      if (!first && std::isfinite(acc)) {
        ymin = std::min(ymin, ty(acc));
        ymax = std::max(ymax, ty(acc));
      }
      xmin = std::min(xmin, static_cast<double>(pts[k].step));
      xmax = std::max(xmax, static_cast<double>(pts[k].step));
    }
  }
  const float left = p0.x + ImGui::CalcTextSize("0.0000").x + fs * 0.5f, right = p1.x - fs * 0.5f;
  const float top = p0.y + fs * 0.5f, bottom = p1.y - fs * 1.6f;
  if (xmin > xmax || ymin > ymax || right - left < 20 || bottom - top < 20) {
    dl->AddText(ImGui::GetFont(), fs, ImVec2(p0.x + fs, p0.y + fs), axis, range.empty, nullptr,
                std::max(fs, p1.x - p0.x - 2 * fs));  // wrapped inside the chart, however narrow
    return drawn;
  }
  if (std::isfinite(range.x0)) xmin = range.x0, xmax = range.x1;
  if (std::isfinite(range.y0)) ymin = ty(range.y0), ymax = ty(range.y1);
  if (xmax - xmin < 1) xmax = xmin + 1;
  if (ymax - ymin < 1e-6) {
    ymin -= 0.5 * (log_y ? 0.1 : std::max(1e-3, std::abs(ymin) * 0.1));
    ymax = ymin + (log_y ? 0.1 : std::max(2e-3, std::abs(ymin) * 0.2));
  }
  if (!std::isfinite(range.y0)) {  // the data's range gets a margin; a fixed one (0–1) keeps its round ends
    const double pad = (ymax - ymin) * 0.05;
    ymin -= pad;
    ymax += pad;
  }
  auto X = [&](double x) { return static_cast<float>(left + (x - xmin) / (xmax - xmin) * (right - left)); };
  auto Y = [&](double y) { return static_cast<float>(bottom - (y - ymin) / (ymax - ymin) * (bottom - top)); };

  // Axes, grid and tick labels. The y axis has room for five labels; the x axis gets as many as
  // fit: the end labels are held inside the axis, which moves each up to half its width towards
  // its neighbour, so ticks must be 1.5 of the widest label (the last step's) plus a gap of one em apart.
  for (int k = 0; k <= 4; ++k) {
    const double yv = ymin + (ymax - ymin) * k / 4.0;
    const float y = Y(yv);
    dl->AddLine(ImVec2(left, y), ImVec2(right, y), grid);
    const std::string lab = fmt("%.3g", log_y ? std::pow(10.0, yv) : yv);
    dl->AddText(ImVec2(left - ImGui::CalcTextSize(lab.c_str()).x - fs * 0.25f, y - fs * 0.5f), text, lab.c_str());
  }
  const float widest = ImGui::CalcTextSize(fmt("%.0f", xmax).c_str()).x;
  const int nx = tick_intervals(right - left, 1.5f * widest + fs);
  for (int k = 0; k <= nx; ++k) {
    const double xv = xmin + (xmax - xmin) * k / nx;
    const float x = X(xv);
    dl->AddLine(ImVec2(x, top), ImVec2(x, bottom), grid);
    const std::string xl = fmt("%.0f", xv);
    const ImVec2 ts = ImGui::CalcTextSize(xl.c_str());
    const ImVec2 at(std::clamp(x - ts.x / 2, left, right - ts.x), bottom + fs * 0.2f);
    dl->AddText(at, text, xl.c_str());
    drawn.x_ticks.emplace_back(at.x, at.y, ts.x, ts.y);
    drawn.x_labels.push_back(xl);
  }
  dl->AddLine(ImVec2(left, top), ImVec2(left, bottom), axis);
  dl->AddLine(ImVec2(left, bottom), ImVec2(right, bottom), axis);

  // The target line, dashed, with its label at the left end under it (the legend is at the top right).
  if (std::isfinite(range.target)) {
    const ImU32 target_c = dark ? IM_COL32(240, 200, 80, 255) : IM_COL32(190, 120, 0, 255);
    const float y = Y(ty(range.target));
    const float dash = fs * 0.5f;
    for (float x = left; x < right; x += dash * 2) dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + dash, right), y), target_c, 1.5f);
    dl->AddText(ImVec2(left + fs * 0.3f, y + fs * 0.1f), target_c, range.target_label.c_str());
    drawn.target_y = y;
  }

  // The series: every point when there are few, else min and max per pixel column.
  dl->PushClipRect(ImVec2(left, top), ImVec2(right + 1, bottom + 1), true);
  std::vector<ImVec2> line;
  for (size_t s = 0; s < series.size(); ++s) {
    const auto& pts = *series[s].pts;
    line.clear();
    const int cols = static_cast<int>(right - left) + 1;
    if (pts.size() <= static_cast<size_t>(cols) * 2) {
      for (size_t k = 0; k < pts.size(); ++k) line.emplace_back(X(pts[k].step), Y(ty(ys[s][k])));
    } else {
      int col = -1;
      float lo = 0, hi = 0;
      for (size_t k = 0; k <= pts.size(); ++k) {
        const int c = k < pts.size() ? static_cast<int>(X(pts[k].step) - left) : cols + 1;
        if (c != col) {
          if (col >= 0) {
            line.emplace_back(left + col, Y(lo));
            if (hi != lo) line.emplace_back(left + col, Y(hi));
          }
          if (k == pts.size()) break;
          col = c;
          lo = hi = static_cast<float>(ty(ys[s][k]));
        } else {
          const float v = static_cast<float>(ty(ys[s][k]));
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
    if (line.size() == 1) dl->AddCircleFilled(line[0], 3, series[s].color);
    else dl->AddPolyline(line.data(), static_cast<int>(line.size()), series[s].color, 0, 2.0f);
  }
  dl->PopClipRect();

  // Legend.
  float lx = right - fs * 0.5f;
  for (size_t s = series.size(); s-- > 0;) {
    const float w = ImGui::CalcTextSize(series[s].name).x;
    lx -= w;
    dl->AddText(ImVec2(lx, top + fs * 0.2f), series[s].color, series[s].name);
    lx -= fs;
  }

  // Crosshair and tooltip.
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (hovered && m.x >= left && m.x <= right && m.y >= top && m.y <= bottom) {
    dl->AddLine(ImVec2(m.x, top), ImVec2(m.x, bottom), axis);
    dl->AddLine(ImVec2(left, m.y), ImVec2(right, m.y), axis);
    const double step = xmin + (m.x - left) / (right - left) * (xmax - xmin);
    ImGui::BeginTooltip();
    ImGui::Text("step %.0f", step);
    for (size_t s = 0; s < series.size(); ++s) {
      const auto& pts = *series[s].pts;
      if (pts.empty()) continue;
      auto it = std::lower_bound(pts.begin(), pts.end(), step,
                                 [](const LossPoint& p, double v) { return static_cast<double>(p.step) < v; });
      if (it == pts.end()) --it;
      if (it != pts.begin() && std::abs(double(std::prev(it)->step) - step) < std::abs(double(it->step) - step)) --it;
      const size_t k = static_cast<size_t>(it - pts.begin());
      dl->AddCircleFilled(ImVec2(X(it->step), Y(ty(ys[s][k]))), 4, series[s].color);
      ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series[s].color), "%s at step %lld: %.4f (smoothed %.4f)",
                         series[s].name, static_cast<long long>(it->step), it->loss, ys[s][k]);
    }
    ImGui::EndTooltip();
  }
  return drawn;
}

}  // namespace sf
