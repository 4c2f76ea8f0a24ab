// heatmap(): lays the heatmap out, takes its input (hover, click, zoom, the right-click menu),
// draws its parts (heatmap_*.cpp) and records it for --dump-state (heatmap_report.hpp).
#include "app/widgets/heatmap.hpp"

#include "app/ui_probe.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <utility>

#include "app/widgets/heatmap_parts.hpp"
#include "app/widgets/heatmap_report.hpp"
#include "imgui_internal.h"  // SetItemUsingMouseWheel, the window's clip rectangle

namespace sf {

using namespace heatmap_detail;

namespace {

// The part shown: the zoom window (kept inside the matrix), else the whole.
MatWindow shown_window(int R_all, int C_all, MatWindow* zoom) {
  const MatWindow all = whole(R_all, C_all);
  if (!zoom) return all;
  MatWindow& z = *zoom;
  if (z.rows() <= 0 || z.cols() <= 0 || z.r1 > R_all || z.c1 > C_all || z.r0 < 0 || z.c0 < 0) z = all;
  return z;
}

// What is written under the legend: the reduction, the part shown, how to zoom.
std::string caption_for(const Layout& L, const CachedTexture* tex, bool zoomable) {
  std::string caption = tex ? downsample_caption(tex->red_rows, tex->red_cols) : "";
  const MatWindow& w = L.win;
  if (L.zoomed)
    caption += (caption.empty() ? "" : " · ") + std::string("showing rows ") + std::to_string(w.r0 + 1) + "–" +
               std::to_string(w.r1) + " of " + std::to_string(L.R_all) + ", columns " + std::to_string(w.c0 + 1) +
               "–" + std::to_string(w.c1) + " of " + std::to_string(L.C_all);
  if (zoomable && (L.zoomed || tex))
    caption += std::string(caption.empty() ? "" : " · ") + "wheel: zoom, drag: pan, double-click: all";
  return caption;
}

// The wheel zooms about the pointer, dragging pans, a double-click shows the whole matrix.
void zoom_input(const Layout& L, const HeatmapHover& hv, bool active, MatWindow& zoom) {
  const ImGuiIO& io = ImGui::GetIO();
  const ImVec2 mouse = io.MousePos;
  if (hv.hovered && io.MouseWheel != 0.0f) {
    const double at_r = L.win.r0 + (mouse.y - L.gy) / L.cell_h, at_c = L.win.c0 + (mouse.x - L.gx) / L.cell_w;
    zoom = zoom_window(L.win, L.R_all, L.C_all, std::pow(0.8, io.MouseWheel), at_r, at_c);
  } else if (hv.hovered && ImGui::IsMouseDoubleClicked(0)) {
    zoom = whole(L.R_all, L.C_all);
  } else if (active && ImGui::IsMouseDragging(0)) {
    const ImVec2 d = ImGui::GetMouseDragDelta(0);
    const int dr = static_cast<int>(-d.y / L.cell_h), dc = static_cast<int>(-d.x / L.cell_w);
    if (dr || dc) {
      zoom = pan_window(L.win, L.R_all, L.C_all, dr, dc);
      ImGui::ResetMouseDragDelta(0);
    }
  }
}

// A right-click asks for the heatmap's menu (export, experiments), which App::draw opens.
void request_menu(const MatView& m, const HeatmapOptions& o, const HeatmapHover& hv, const MatWindow& win) {
  HeatmapMenuRequest req;
  if (o.value) {
    req.value = *o.value;
  } else {
    req.value.name = o.value_name;
    req.value.m = TraceMat(MatF(m));
  }
  req.opt = o;
  req.opt.on_click = nullptr;
  req.opt.zoom = nullptr;
  req.opt.value = nullptr;
  req.row = hv.row;
  req.col = hv.col;
  req.window = win;
  heatmap_menu_request() = std::move(req);
}

// Whether the rectangle (x, y, w, h) lies inside the current clip rectangle and the window's
// inner one (a scrolled-out heatmap, or one wider than its table column, is cut).
bool clipped(const ImVec4& r) {
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImRect clip(dl->GetClipRectMin(), dl->GetClipRectMax());
  clip.ClipWith(ImGui::GetCurrentWindow()->InnerClipRect);
  // Half a pixel of slack: rectangles are rounded to whole pixels, the clip is not.
  return r.x < clip.Min.x - 0.5f || r.y < clip.Min.y - 0.5f || r.x + r.z > clip.Max.x + 0.5f ||
         r.y + r.w > clip.Max.y + 0.5f;
}

// Only while --dump-state (or a test action) asks for reports: a normal frame copies nothing.
void record(const HeatmapOptions& o, const ImVec4& rect, const Scale& sc, const Legend* lg, AxisLabels labels) {
  if (!ui_probe::is_enabled()) return;
  HeatmapRecord r;
  r.value = o.value_name;
  r.rect = rect;
  r.thumbnail = o.thumbnail;
  r.clipped = clipped(rect);
  r.window = ImGui::GetCurrentWindow();
  r.lo = sc.lo;
  r.hi = sc.hi;
  r.diverging = sc.diverging;
  if (lg) {
    r.lo_text = lg->ends.lo;
    r.hi_text = lg->ends.hi;
    r.lo_rect = lg->lo_rect;
    r.hi_rect = lg->hi_rect;
  }
  r.row_labels = std::move(labels.rows);
  r.col_labels = std::move(labels.cols);
  r.row_images = std::move(labels.row_images);
  r.col_images = std::move(labels.col_images);
  record_heatmap(std::move(r));
}

}  // namespace

EntryCounts count_entries(const MatView& m) {
  EntryCounts c;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const double x = m(i, j);
      if (std::isnan(x)) {
        ++c.nan;
      } else if (std::isinf(x)) {
        ++(x < 0 ? c.neg_inf : c.pos_inf);
      } else {
        ++c.finite;
        c.sum += x;
        c.sum2 += x * x;
        c.min = std::min(c.min, x);
        c.max = std::max(c.max, x);
      }
    }
  return c;
}

uint64_t content_hash(const MatView& m) {
  const Eigen::Index n = m.size(), R = std::max<Eigen::Index>(1, m.rows());
  const Eigen::Index stride = std::max<Eigen::Index>(1, n / 65536);
  uint64_t h = 1469598103934665603ull ^ static_cast<uint64_t>(n);
  for (Eigen::Index i = 0; i < n; i += stride) {
    const float x = m(i % R, i / R);
    uint32_t bits;
    std::memcpy(&bits, &x, sizeof bits);
    h = (h ^ bits) * 1099511628211ull;
  }
  return h;
}

float heatmap_detail::text_w(const ImFont* font, const std::string& s) {
  return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, s.c_str()).x;
}

std::string fit_text(const ImFont* font, const std::string& s, float max_w) {
  if (text_w(font, s) <= max_w) return s;
  const float ell = text_w(font, "…");
  size_t end = 0;  // the longest prefix of whole characters that fits with "…"
  for (size_t i = 0; i < s.size();) {
    size_t n = 1;
    const unsigned char b = static_cast<unsigned char>(s[i]);
    if (b >= 0xF0) n = 4;
    else if (b >= 0xE0) n = 3;
    else if (b >= 0xC0) n = 2;
    if (text_w(font, s.substr(0, i + n)) + ell > max_w) break;
    i += n;
    end = i;
  }
  return s.substr(0, end) + "…";
}

namespace {

// A heatmap laid out: where its parts go, its texture (a large matrix), its colour scale, its
// legend, and the size of it all.
struct Plan {
  Layout L;
  const CachedTexture* tex = nullptr;
  Scale sc;
  std::optional<Legend> lg;
  ImVec2 total;
};

Plan plan_heatmap(const MatView& m, const MatWindow& win, const Fonts& f, const HeatmapOptions& o) {
  const int R_all = static_cast<int>(m.rows()), C_all = static_cast<int>(m.cols());
  Plan p;
  p.L = layout_heatmap(win, R_all, C_all, f, o);
  const Layout& L = p.L;
  const bool use_texture = L.R > kMaxCellByCell || L.C > kMaxCellByCell || L.cell_w < 2.0f || L.cell_h < 2.0f;
  // A texture holds at most one texel per pixel drawn (and no more than GL allows).
  const int side = max_texture_side();
  p.tex = use_texture ? &texture_for(m, o, win, std::clamp(static_cast<int>(std::ceil(L.gh)), 1, side),
                                     std::clamp(static_cast<int>(std::ceil(L.gw)), 1, side))
                      : nullptr;
  p.sc = p.tex ? p.tex->scale : resolve_scale(m, o);
  if (L.full) p.lg = layout_legend(L, p.sc, caption_for(L, p.tex, o.zoom != nullptr));
  const float total_w = std::max(L.gx - L.p0.x + L.gw, p.lg ? p.lg->w : 0.0f);  // gx is rounded to a pixel
  p.total = ImVec2(std::max(total_w, 1.0f), L.title_h + L.col_h + L.gh + (p.lg ? p.lg->h : 0.0f));
  return p;
}

}  // namespace

HeatmapHover heatmap(const char* id, const MatView& m, const Fonts& f, const HeatmapOptions& o) {
  HeatmapHover out;
  const int R_all = static_cast<int>(m.rows()), C_all = static_cast<int>(m.cols());
  if (R_all == 0 || C_all == 0) {
    ImGui::TextDisabled("(empty)");
    return out;
  }
  const MatWindow win = shown_window(R_all, C_all, o.zoom);
  Plan p = plan_heatmap(m, win, f, o);
  // The layout reserves one line for the legend; where it takes more (its ends stacked, its
  // swatches wrapped) and the height is a hard limit (fit_height), the cells give up the
  // difference, once, so that the whole heatmap fits that height.
  if (o.fit_height && o.max_height > 0 && p.L.full && p.total.y > o.max_height + 0.5f) {
    HeatmapOptions fit = o;
    fit.max_height = std::max(1.0f, o.max_height - (p.total.y - o.max_height));
    p = plan_heatmap(m, win, f, fit);
  }
  const Layout& L = p.L;
  const CachedTexture* tex = p.tex;
  const Scale& sc = p.sc;
  std::optional<Legend>& lg = p.lg;
  const ImVec2 total = p.total;
  out.caption = lg ? lg->caption : "";
  out.cells = ImVec4(L.gx, L.gy, L.gw, L.gh);

  ImGui::PushID(id);
  ImGui::InvisibleButton("##heatmap", total);
  if (o.zoom) ImGui::SetItemUsingMouseWheel();  // the wheel zooms the heatmap, not the window
  const bool item_hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked();
  const bool active = ImGui::IsItemActive();
  ImGui::PopID();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (item_hovered && L.col_at(mouse.x) >= 0 && L.row_at(mouse.y) >= 0) {
    out.hovered = true;
    out.col = win.c0 + L.col_at(mouse.x);
    out.row = win.r0 + L.row_at(mouse.y);
  }
  if (o.zoom) zoom_input(L, out, active, *o.zoom);

  ImDrawList* dl = ImGui::GetWindowDrawList();
  draw_cells(dl, m, L, sc, tex, o);
  draw_marks(dl, L, o, out);
  if (item_hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) request_menu(m, o, out, win);
  AxisLabels labels;
  if (L.full) {
    labels = draw_axes(dl, L, f, o);
    draw_legend(dl, L, sc, *lg);
  }
  if (out.hovered)
    cell_tooltip(m, L, f, o, out, tex);
  else if (item_hovered && L.full)
    axis_label_tooltip(L, f, o, mouse);
  record(o, ImVec4(L.p0.x, L.p0.y, total.x, total.y), sc, lg ? &*lg : nullptr, std::move(labels));
  if (clicked && out.hovered && o.on_click) o.on_click(out.row, out.col);
  return out;
}

std::optional<HeatmapMenuRequest>& heatmap_menu_request() {
  static std::optional<HeatmapMenuRequest> r;
  return r;
}

}  // namespace sf
