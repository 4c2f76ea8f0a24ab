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

struct Colors {
  ImU32 axis, grid, text, background, target;
};

Colors chart_colors(bool dark) {
  return {dark ? IM_COL32(160, 160, 160, 255) : IM_COL32(80, 80, 80, 255),
          dark ? IM_COL32(255, 255, 255, 28) : IM_COL32(0, 0, 0, 28), ImGui::GetColorU32(ImGuiCol_Text),
          dark ? IM_COL32(20, 22, 28, 255) : IM_COL32(250, 250, 250, 255),
          dark ? IM_COL32(240, 200, 80, 255) : IM_COL32(190, 120, 0, 255)};
}

// The plot area in pixels and the data range it shows (y transformed: log10 on a log axis).
struct Frame {
  float left = 0, right = 0, top = 0, bottom = 0;
  double xmin = 1e300, xmax = -1e300, ymin = 1e300, ymax = -1e300;
  bool log_y = false;
  double ty(double v) const { return log_y ? std::log10(std::max(v, 1e-12)) : v; }
  float X(double x) const { return static_cast<float>(left + (x - xmin) / (xmax - xmin) * (right - left)); }
  float Y(double y) const { return static_cast<float>(bottom - (y - ymin) / (ymax - ymin) * (bottom - top)); }
};

// Each series smoothed (EMA; non-finite values keep the last finite one), and the data's extent
// into `f` (y transformed).
std::vector<std::vector<float>> smooth(const std::vector<ChartSeries>& series, float ema, Frame& f) {
  std::vector<std::vector<float>> ys(series.size());
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
        f.ymin = std::min(f.ymin, f.ty(acc));
        f.ymax = std::max(f.ymax, f.ty(acc));
      }
      f.xmin = std::min(f.xmin, static_cast<double>(pts[k].step));
      f.xmax = std::max(f.xmax, static_cast<double>(pts[k].step));
    }
  }
  return ys;
}

// The range `range` holds the chart to, in place of the data's; a flat range opened up.
void hold_range(const ChartRange& range, Frame& f) {
  if (std::isfinite(range.x0)) f.xmin = range.x0, f.xmax = range.x1;
  if (std::isfinite(range.y0)) f.ymin = f.ty(range.y0), f.ymax = f.ty(range.y1);
  if (f.xmax - f.xmin < 1) f.xmax = f.xmin + 1;
  if (f.ymax - f.ymin < 1e-6) {
    f.ymin -= 0.5 * (f.log_y ? 0.1 : std::max(1e-3, std::abs(f.ymin) * 0.1));
    f.ymax = f.ymin + (f.log_y ? 0.1 : std::max(2e-3, std::abs(f.ymin) * 0.2));
  }
  if (!std::isfinite(range.y0)) {  // the data's range gets a margin; a fixed one (0–1) keeps its round ends
    const double pad = (f.ymax - f.ymin) * 0.05;
    f.ymin -= pad;
    f.ymax += pad;
  }
}

// Grid, axes and tick labels. The y axis has room for five labels; the x axis gets as many as
// fit: the end labels are held inside the axis, which moves each up to half its width towards
// its neighbour, so ticks must be 1.5 of the widest label (the last step's) plus a gap of one em apart.
void draw_axes(ImDrawList* dl, const Frame& f, const Colors& c, ChartDrawn& drawn) {
  const float fs = ImGui::GetFontSize();
  for (int k = 0; k <= 4; ++k) {
    const double yv = f.ymin + (f.ymax - f.ymin) * k / 4.0;
    const float y = f.Y(yv);
    dl->AddLine(ImVec2(f.left, y), ImVec2(f.right, y), c.grid);
    const std::string lab = fmt("%.3g", f.log_y ? std::pow(10.0, yv) : yv);
    dl->AddText(ImVec2(f.left - ImGui::CalcTextSize(lab.c_str()).x - fs * 0.25f, y - fs * 0.5f), c.text, lab.c_str());
  }
  const float widest = ImGui::CalcTextSize(fmt("%.0f", f.xmax).c_str()).x;
  const int nx = tick_intervals(f.right - f.left, 1.5f * widest + fs);
  for (int k = 0; k <= nx; ++k) {
    const double xv = f.xmin + (f.xmax - f.xmin) * k / nx;
    const float x = f.X(xv);
    dl->AddLine(ImVec2(x, f.top), ImVec2(x, f.bottom), c.grid);
    const std::string xl = fmt("%.0f", xv);
    const ImVec2 ts = ImGui::CalcTextSize(xl.c_str());
    const ImVec2 at(std::clamp(x - ts.x / 2, f.left, f.right - ts.x), f.bottom + fs * 0.2f);
    dl->AddText(at, c.text, xl.c_str());
    drawn.x_ticks.emplace_back(at.x, at.y, ts.x, ts.y);
    drawn.x_labels.push_back(xl);
  }
  dl->AddLine(ImVec2(f.left, f.top), ImVec2(f.left, f.bottom), c.axis);
  dl->AddLine(ImVec2(f.left, f.bottom), ImVec2(f.right, f.bottom), c.axis);
}

// The target line, dashed, with its label at the left end under it (the legend is at the top right).
void draw_target(ImDrawList* dl, const Frame& f, const ChartRange& range, ImU32 color, ChartDrawn& drawn) {
  if (!std::isfinite(range.target)) return;
  const float fs = ImGui::GetFontSize(), dash = fs * 0.5f;
  const float y = f.Y(f.ty(range.target));
  for (float x = f.left; x < f.right; x += dash * 2)
    dl->AddLine(ImVec2(x, y), ImVec2(std::min(x + dash, f.right), y), color, 1.5f);
  dl->AddText(ImVec2(f.left + fs * 0.3f, y + fs * 0.1f), color, range.target_label.c_str());
  drawn.target_y = y;
}

// The series: every point when there are few, else min and max per pixel column.
void draw_series(ImDrawList* dl, const Frame& f, const std::vector<ChartSeries>& series,
                 const std::vector<std::vector<float>>& ys) {
  dl->PushClipRect(ImVec2(f.left, f.top), ImVec2(f.right + 1, f.bottom + 1), true);
  std::vector<ImVec2> line;
  const int cols = static_cast<int>(f.right - f.left) + 1;
  for (size_t s = 0; s < series.size(); ++s) {
    const auto& pts = *series[s].pts;
    line.clear();
    if (pts.size() <= static_cast<size_t>(cols) * 2) {
      for (size_t k = 0; k < pts.size(); ++k) line.emplace_back(f.X(pts[k].step), f.Y(f.ty(ys[s][k])));
    } else {
      int col = -1;
      float lo = 0, hi = 0;
      for (size_t k = 0; k <= pts.size(); ++k) {
        const int c = k < pts.size() ? static_cast<int>(f.X(pts[k].step) - f.left) : cols + 1;
        if (c != col) {
          if (col >= 0) {
            line.emplace_back(f.left + col, f.Y(lo));
            if (hi != lo) line.emplace_back(f.left + col, f.Y(hi));
          }
          if (k == pts.size()) break;
          col = c;
          lo = hi = static_cast<float>(f.ty(ys[s][k]));
        } else {
          const float v = static_cast<float>(f.ty(ys[s][k]));
          lo = std::min(lo, v);
          hi = std::max(hi, v);
        }
      }
    }
    if (line.size() == 1) dl->AddCircleFilled(line[0], 3, series[s].color);
    else dl->AddPolyline(line.data(), static_cast<int>(line.size()), series[s].color, 0, 2.0f);
  }
  dl->PopClipRect();
}

void draw_legend(ImDrawList* dl, const Frame& f, const std::vector<ChartSeries>& series) {
  const float fs = ImGui::GetFontSize();
  float lx = f.right - fs * 0.5f;
  for (size_t s = series.size(); s-- > 0;) {
    lx -= ImGui::CalcTextSize(series[s].name).x;
    dl->AddText(ImVec2(lx, f.top + fs * 0.2f), series[s].color, series[s].name);
    lx -= fs;
  }
}

// Under the mouse: a crosshair, and a tooltip with each series' point nearest the step there.
void draw_hover(ImDrawList* dl, const Frame& f, const std::vector<ChartSeries>& series,
                const std::vector<std::vector<float>>& ys, ImU32 axis) {
  const ImVec2 m = ImGui::GetIO().MousePos;
  if (m.x < f.left || m.x > f.right || m.y < f.top || m.y > f.bottom) return;
  dl->AddLine(ImVec2(m.x, f.top), ImVec2(m.x, f.bottom), axis);
  dl->AddLine(ImVec2(f.left, m.y), ImVec2(f.right, m.y), axis);
  const double step = f.xmin + (m.x - f.left) / (f.right - f.left) * (f.xmax - f.xmin);
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
    dl->AddCircleFilled(ImVec2(f.X(it->step), f.Y(f.ty(ys[s][k]))), 4, series[s].color);
    ImGui::TextColored(ImGui::ColorConvertU32ToFloat4(series[s].color), "%s at step %lld: %.4f (smoothed %.4f)",
                       series[s].name, static_cast<long long>(it->step), it->loss, ys[s][k]);
  }
  ImGui::EndTooltip();
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
  const Colors c = chart_colors(dark);
  dl->AddRectFilled(p0, p1, c.background);

  Frame f;
  f.log_y = log_y;
  const std::vector<std::vector<float>> ys = smooth(series, ema, f);
  f.left = p0.x + ImGui::CalcTextSize("0.0000").x + fs * 0.5f, f.right = p1.x - fs * 0.5f;
  f.top = p0.y + fs * 0.5f, f.bottom = p1.y - fs * 1.6f;
  if (f.xmin > f.xmax || f.ymin > f.ymax || f.right - f.left < 20 || f.bottom - f.top < 20) {
    dl->AddText(ImGui::GetFont(), fs, ImVec2(p0.x + fs, p0.y + fs), c.axis, range.empty, nullptr,
                std::max(fs, p1.x - p0.x - 2 * fs));  // wrapped inside the chart, however narrow
    return drawn;
  }
  hold_range(range, f);
  draw_axes(dl, f, c, drawn);
  draw_target(dl, f, range, c.target, drawn);
  draw_series(dl, f, series, ys);
  draw_legend(dl, f, series);
  if (hovered) draw_hover(dl, f, series, ys, c.axis);
  return drawn;
}

}  // namespace sf
