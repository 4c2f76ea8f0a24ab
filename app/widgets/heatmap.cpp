#include "app/widgets/heatmap.hpp"

#include <glad/gl.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <utility>

#include "app/app.hpp"
#include "app/logic/figure_layout.hpp"
#include "app/mathtext.hpp"
#include "app/widgets/colormap.hpp"
#include "app/panels/panel.hpp"
#include "imgui_internal.h"  // SetItemUsingMouseWheel

namespace sf {

namespace {

ImU32 to_imu32(Rgb8 c) { return IM_COL32(c.r, c.g, c.b, 255); }
const ImU32 kInfColor = to_imu32(infinity_color());
const ImU32 kHatchColor = to_imu32(hatch_color());
const ImU32 kNanColor = to_imu32(nan_color());

// Matrices up to this size in both dimensions may be drawn cell by cell.
constexpr int kMaxCellByCell = 128;

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

namespace {

// The resolved colour scale and the counts of the cells it cannot colour.
struct Scale {
  bool diverging = false;
  float lo = 0, hi = 1;
  int neg_inf = 0, pos_inf = 0, nan = 0;

  ImU32 color_at(float t) const { return to_imu32(colormap(t, diverging, heatmap_palette())); }
  ImU32 color(float x) const {
    if (std::isnan(x)) return kNanColor;
    if (std::isinf(x)) return kInfColor;
    return color_at(hi > lo ? (x - lo) / (hi - lo) : 0.5f);
  }
};

// The scale rule is the exported figures' (figure_layout.hpp), so that screen and figure agree.
Scale resolve_scale(const MatView& m, const HeatmapOptions& o) {
  FigureSpec spec;
  spec.scale = o.scale == ColorScale::Diverging    ? FigureScaleKind::Diverging
               : o.scale == ColorScale::Sequential ? FigureScaleKind::Sequential
                                                   : FigureScaleKind::Auto;
  spec.lo = o.lo;
  spec.hi = o.hi;
  const FigureScale f = figure_scale(m, spec);
  Scale s;
  s.diverging = f.diverging;
  s.lo = f.lo;
  s.hi = f.hi;
  s.nan = static_cast<int>(f.nan);
  s.neg_inf = static_cast<int>(f.neg_inf);
  s.pos_inf = static_cast<int>(f.pos_inf);
  return s;
}

// --- textures for large matrices, cached per matrix and view -------------------------------

struct CachedTexture {
  // Which matrix (its storage and strides: a view of Wᵀ reads W's storage), which colour request
  // and which kind of view (a thumbnail and the tensor view of one matrix differ).
  const float* data = nullptr;
  Eigen::Index rows = 0, cols = 0, outer = 0, inner = 0;
  ColorScale requested = ColorScale::Auto;
  float req_lo = NAN, req_hi = NAN;
  bool thumbnail = false;
  Palette palette = Palette::Standard;
  // What the texture holds now.
  uint64_t hash = 0;
  MatWindow window;
  int max_rows = 0, max_cols = 0;
  AxisReduction red_rows, red_cols;
  Scale scale;
  GLuint tex = 0;
  int last_frame = 0;
};

std::vector<CachedTexture>& texture_cache() {
  static std::vector<CachedTexture> cache;
  return cache;
}

bool same_request(float a, float b) { return (std::isnan(a) && std::isnan(b)) || a == b; }

// Frees textures no heatmap has drawn for a while (once a frame).
void sweep_textures(int frame) {
  static int swept = -1;
  if (swept == frame) return;
  swept = frame;
  auto& cache = texture_cache();
  for (auto it = cache.begin(); it != cache.end();) {
    if (it->last_frame < frame - 120) {
      glDeleteTextures(1, &it->tex);
      it = cache.erase(it);
    } else {
      ++it;
    }
  }
}

// The window `w` of m reduced to at most max_rows × max_cols texels (each the largest |value| of
// its block), coloured by the scale of the whole matrix.
const CachedTexture& texture_for(const MatView& m, const HeatmapOptions& o, const MatWindow& w, int max_rows,
                                 int max_cols) {
  const int frame = ImGui::GetFrameCount();
  sweep_textures(frame);
  auto& cache = texture_cache();
  auto it = std::find_if(cache.begin(), cache.end(), [&](const CachedTexture& c) {
    return c.data == m.data() && c.rows == m.rows() && c.cols == m.cols() && c.outer == m.outerStride() &&
           c.inner == m.innerStride() && c.requested == o.scale && same_request(c.req_lo, o.lo) &&
           same_request(c.req_hi, o.hi) && c.thumbnail == o.thumbnail && c.palette == heatmap_palette();
  });
  if (it == cache.end()) {
    cache.push_back({});
    it = cache.end() - 1;
    it->data = m.data();
    it->rows = m.rows();
    it->cols = m.cols();
    it->outer = m.outerStride();
    it->inner = m.innerStride();
    it->requested = o.scale;
    it->req_lo = o.lo;
    it->req_hi = o.hi;
    it->thumbnail = o.thumbnail;
    it->palette = heatmap_palette();
    it->hash = ~content_hash(m);  // not yet uploaded
    glGenTextures(1, &it->tex);
  }
  CachedTexture& c = *it;
  c.last_frame = frame;
  const uint64_t hash = content_hash(m);
  const bool same_values = c.hash == hash;
  if (same_values && c.window == w && c.max_rows == max_rows && c.max_cols == max_cols) return c;
  if (!same_values) c.scale = resolve_scale(m, o);  // the whole matrix's, whatever part is shown
  c.hash = hash;
  c.window = w;
  c.max_rows = max_rows;
  c.max_cols = max_cols;
  const Downsampled d = downsample(m, w, max_rows, max_cols);  // (texel rows, texel columns)
  c.red_rows = d.rows;
  c.red_cols = d.cols;
  const Eigen::Index th = d.m.rows(), tw = d.m.cols();
  std::vector<ImU32> px(static_cast<size_t>(tw * th));
  for (Eigen::Index y = 0; y < th; ++y)
    for (Eigen::Index x = 0; x < tw; ++x) px[static_cast<size_t>(y * tw + x)] = c.scale.color(d.m(y, x));
  GLint bound = 0;
  glGetIntegerv(GL_TEXTURE_BINDING_2D, &bound);
  glBindTexture(GL_TEXTURE_2D, c.tex);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MIN_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_MAG_FILTER, GL_NEAREST);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_S, GL_CLAMP_TO_EDGE);
  glTexParameteri(GL_TEXTURE_2D, GL_TEXTURE_WRAP_T, GL_CLAMP_TO_EDGE);
  glPixelStorei(GL_UNPACK_ROW_LENGTH, 0);
  glPixelStorei(GL_UNPACK_ALIGNMENT, 4);
  // ImU32 from IM_COL32 is R, G, B, A in memory order.
  glTexImage2D(GL_TEXTURE_2D, 0, GL_RGBA8, static_cast<GLsizei>(tw), static_cast<GLsizei>(th), 0, GL_RGBA,
               GL_UNSIGNED_BYTE, px.data());
  glBindTexture(GL_TEXTURE_2D, static_cast<GLuint>(bound));
  return c;
}

// The largest texture side GL allows (queried once).
int max_texture_side() {
  static GLint side = 0;
  if (!side) {
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &side);
    if (side <= 0) side = 4096;
  }
  return side;
}

// --- drawing helpers -----------------------------------------------------------------------

float text_w(const ImFont* font, const std::string& s) {
  return font->CalcTextSizeA(font->FontSize, FLT_MAX, 0.0f, s.c_str()).x;
}

// The smallest of 1, 2, 5, 10, 20, 50, … that is at least n.
int nice_step(float n) {
  for (int decade = 1;; decade *= 10)
    for (int m : {1, 2, 5})
      if (static_cast<float>(m * decade) >= n) return m * decade;
}

void hatch(ImDrawList* dl, ImVec2 a, ImVec2 b) {
  dl->AddRectFilled(a, b, kInfColor);
  dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), kHatchColor, 1.0f);
}

std::string value_text(float x) { return x == -INFINITY ? "−∞ (masked)" : exact_number(x); }

std::string number(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.3g", static_cast<double>(x));
  return buf;
}

// "t_z = 3" (paper notation) then " “l”" in plain text, on one tooltip line.
void axis_line(const Fonts& f, const HeatmapAxis& ax, bool is_row, int i) {
  const std::string name = ax.index.empty() ? (is_row ? "row" : "column") : ax.index;
  math_text(f, name + " = " + std::to_string(i + 1));
  if (static_cast<size_t>(i) < ax.labels.size()) {
    ImGui::SameLine(0, 0);
    ImGui::Text("  “%s”", ax.labels[static_cast<size_t>(i)].c_str());
  }
}

}  // namespace

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

std::string exact_number(float x) {
  if (std::isnan(x)) return "NaN";
  if (std::isinf(x)) return x < 0 ? "−∞" : "+∞";
  char buf[32];
  for (int digits = 6; digits <= 9; ++digits) {
    std::snprintf(buf, sizeof buf, "%.*g", digits, static_cast<double>(x));
    if (std::strtof(buf, nullptr) == x) break;
  }
  return buf;
}

HeatmapHover heatmap(const char* id, const MatView& m, const Fonts& f, const HeatmapOptions& o) {
  HeatmapHover out;
  const int R_all = static_cast<int>(m.rows()), C_all = static_cast<int>(m.cols());
  if (R_all == 0 || C_all == 0) {
    ImGui::TextDisabled("(empty)");
    return out;
  }
  // The part shown: the zoom window (kept inside the matrix), else the whole.
  MatWindow win = whole(R_all, C_all);
  if (o.zoom) {
    MatWindow& z = *o.zoom;
    if (z.rows() <= 0 || z.cols() <= 0 || z.r1 > R_all || z.c1 > C_all || z.r0 < 0 || z.c0 < 0) z = win;
    win = z;
  }
  const int R = win.rows(), C = win.cols();
  const bool zoomed = win != whole(R_all, C_all);
  const ImFont* big = f.text;
  const ImFont* small = f.small;
  const float F = big->FontSize, Fs = small->FontSize, gap = std::round(F * 0.3f);
  const bool full = !o.thumbnail;
  const bool row_chars = full && o.rows.labels.size() == static_cast<size_t>(R_all);
  const bool col_chars = full && o.cols.labels.size() == static_cast<size_t>(C_all);
  const ImVec2 avail = ImGui::GetContentRegionAvail();
  // Token labels are cut to a few characters' width (GPT-2's pieces can be long words).
  const float max_row_label = F * 6.0f, max_col_label = F * 4.0f;

  // Label and legend extents (full mode).
  float row_chr_w = 0;
  if (row_chars && R <= 1024) {
    for (int r = win.r0; r < win.r1; ++r)
      row_chr_w = std::max(row_chr_w, text_w(big, o.rows.labels[static_cast<size_t>(r)]));
    row_chr_w = std::min(row_chr_w, max_row_label);
  } else if (row_chars) {
    row_chr_w = max_row_label;
  }
  const float row_idx_w = text_w(small, std::to_string(win.r1));
  const float row_w = full ? row_idx_w + gap + (row_chars ? row_chr_w + gap : 0.0f) : 0.0f;
  const bool titles = full && (!o.rows.title.empty() || !o.cols.title.empty());
  const float title_h = titles ? std::round(F * 1.35f) : 0.0f;
  const float col_h = full ? Fs + (col_chars ? F : 0.0f) + gap : 0.0f;
  const float legend_h = full ? std::round(F * 1.6f) : 0.0f;
  const float caption_h = full ? std::round(F * 1.3f) : 0.0f;  // the reduction or zoom line, when there is one

  // Cell size: square where it fits; a very tall or wide matrix gets cells stretched up to
  // a label's size along its short side, so that its columns (or rows) stay readable.
  float cell_w, cell_h;
  if (full) {
    const float W = o.max_width > 0 ? o.max_width : avail.x;
    const float H = o.max_height > 0 ? o.max_height : std::max(avail.y, F * 10.0f);
    const float cw = std::max(W - row_w, F) / static_cast<float>(C);
    const float ch = std::max(H - title_h - col_h - legend_h - caption_h, F * 2.0f) / static_cast<float>(R);
    const float c = std::min({cw, ch, F * 3.0f});
    cell_w = std::max(c, std::min(cw, F * 1.5f));
    cell_h = std::max(c, std::min(ch, F * 1.5f));
  } else {
    const float W = o.max_width > 0 ? o.max_width : std::min(avail.x, 96.0f);
    const float H = o.max_height > 0 ? o.max_height : 48.0f;
    const float h = std::clamp(W * static_cast<float>(R) / static_cast<float>(C), std::min(12.0f, H), H);
    const float w = std::clamp(h * static_cast<float>(C) / static_cast<float>(R), std::min(16.0f, W), W);
    cell_w = w / static_cast<float>(C);
    cell_h = h / static_cast<float>(R);
  }
  const float gw = cell_w * static_cast<float>(C), gh = cell_h * static_cast<float>(R);
  const bool use_texture = R > kMaxCellByCell || C > kMaxCellByCell || cell_w < 2.0f || cell_h < 2.0f;
  // A texture holds at most one texel per pixel drawn (and no more than GL allows).
  const int side = max_texture_side();
  const CachedTexture* tex =
      use_texture ? &texture_for(m, o, win, std::clamp(static_cast<int>(std::ceil(gh)), 1, side),
                                 std::clamp(static_cast<int>(std::ceil(gw)), 1, side))
                  : nullptr;
  const Scale sc = tex ? tex->scale : resolve_scale(m, o);
  std::string caption = tex ? downsample_caption(tex->red_rows, tex->red_cols) : "";
  if (zoomed)
    caption += (caption.empty() ? "" : " · ") + std::string("showing rows ") + std::to_string(win.r0 + 1) + "–" +
               std::to_string(win.r1) + " of " + std::to_string(R_all) + ", columns " + std::to_string(win.c0 + 1) +
               "–" + std::to_string(win.c1) + " of " + std::to_string(C_all);
  if (o.zoom && (zoomed || tex)) caption += std::string(caption.empty() ? "" : " · ") + "wheel: zoom, drag: pan, double-click: all";

  const ImVec2 p0 = ImGui::GetCursorScreenPos();
  const float gx = std::round(p0.x + row_w), gy = std::round(p0.y + title_h + col_h);
  out.caption = full ? caption : "";
  out.cells = ImVec4(gx, gy, gw, gh);
  // Legend, on one line: lo, the colour bar, hi, then the cells the scale cannot colour.
  const std::string lo = number(sc.lo), hi = number(sc.hi);
  std::vector<std::pair<bool, std::string>> swatches;  // (hatched, text)
  if (sc.neg_inf) swatches.emplace_back(true, "−∞ masked: " + std::to_string(sc.neg_inf));
  if (sc.pos_inf) swatches.emplace_back(true, "+∞: " + std::to_string(sc.pos_inf));
  if (sc.nan) swatches.emplace_back(false, "NaN: " + std::to_string(sc.nan));
  const float lo_w = text_w(big, lo), hi_w = text_w(big, hi), bh = std::round(F * 0.85f);
  const float bar_w = std::clamp(gw - lo_w - hi_w - 2 * gap, F * 5.0f, F * 12.0f);
  const float scale_w = lo_w + bar_w + hi_w + 2 * gap;
  float swatch_w = 0;
  for (const auto& sw : swatches) swatch_w += F + bh + gap + text_w(big, sw.second);
  // The swatches go on a second line where one line would be wider than the space.
  const bool wrap_swatches = !swatches.empty() && row_w + scale_w + swatch_w > std::max(avail.x, row_w + gw);
  const float legend_w = wrap_swatches ? std::max(row_w + scale_w, swatch_w - F) : row_w + scale_w + swatch_w;
  const float total_w = std::max(row_w + gw, full ? legend_w : 0.0f);
  const bool has_caption = full && !caption.empty();
  const ImVec2 total(std::max(total_w, 1.0f), title_h + col_h + gh + legend_h +
                                                  (full && wrap_swatches ? std::round(F * 1.3f) : 0.0f) +
                                                  (has_caption ? caption_h : 0.0f));

  ImGui::PushID(id);
  ImGui::InvisibleButton("##heatmap", total);
  if (o.zoom) ImGui::SetItemUsingMouseWheel();  // the wheel zooms the heatmap, not the window
  const bool item_hovered = ImGui::IsItemHovered();
  const bool clicked = ImGui::IsItemClicked();
  const bool active = ImGui::IsItemActive();
  ImGui::PopID();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  if (item_hovered && mouse.x >= gx && mouse.x < gx + gw && mouse.y >= gy && mouse.y < gy + gh) {
    out.hovered = true;
    out.col = win.c0 + std::clamp(static_cast<int>((mouse.x - gx) / cell_w), 0, C - 1);
    out.row = win.r0 + std::clamp(static_cast<int>((mouse.y - gy) / cell_h), 0, R - 1);
  }
  if (o.zoom) {  // wheel: zoom about the pointer; drag: pan; double-click: the whole matrix
    const ImGuiIO& io = ImGui::GetIO();
    if (out.hovered && io.MouseWheel != 0.0f) {
      const double at_r = win.r0 + (mouse.y - gy) / cell_h, at_c = win.c0 + (mouse.x - gx) / cell_w;
      *o.zoom = zoom_window(win, R_all, C_all, std::pow(0.8, io.MouseWheel), at_r, at_c);
    } else if (out.hovered && ImGui::IsMouseDoubleClicked(0)) {
      *o.zoom = whole(R_all, C_all);
    } else if (active && ImGui::IsMouseDragging(0)) {
      const ImVec2 d = ImGui::GetMouseDragDelta(0);
      const int dr = static_cast<int>(-d.y / cell_h), dc = static_cast<int>(-d.x / cell_w);
      if (dr || dc) {
        *o.zoom = pan_window(win, R_all, C_all, dr, dc);
        ImGui::ResetMouseDragDelta(0);
      }
    }
  }

  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 text_col = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);

  // Cells.
  if (tex) {
    dl->AddImage(reinterpret_cast<ImTextureID>(static_cast<intptr_t>(tex->tex)), ImVec2(gx, gy),
                 ImVec2(gx + gw, gy + gh));
  } else {
    const float sep = cell_w >= 8 && cell_h >= 8 ? 1.0f : 0.0f;  // a hairline between large cells
    const ImVec2 cmin = dl->GetClipRectMin(), cmax = dl->GetClipRectMax();
    const int c0 = std::max(0, static_cast<int>((cmin.x - gx) / cell_w)),
              c1 = std::min(C, static_cast<int>((cmax.x - gx) / cell_w) + 1);
    const int r0 = std::max(0, static_cast<int>((cmin.y - gy) / cell_h)),
              r1 = std::min(R, static_cast<int>((cmax.y - gy) / cell_h) + 1);
    const bool fits_h = cell_h >= Fs;
    auto centred = [&](ImVec2 a, const char* text, ImU32 ink) {
      const float w = text_w(small, text);
      if (!fits_h || w + 2 > cell_w) return false;
      dl->AddText(small, Fs, ImVec2(a.x + (cell_w - sep - w) * 0.5f, a.y + (cell_h - sep - Fs) * 0.5f), ink, text);
      return true;
    };
    for (int c = c0; c < c1; ++c)
      for (int r = r0; r < r1; ++r) {
        const float x = m(win.r0 + r, win.c0 + c);
        const ImVec2 a(gx + static_cast<float>(c) * cell_w, gy + static_cast<float>(r) * cell_h);
        const ImVec2 b(a.x + cell_w - sep, a.y + cell_h - sep);
        if (std::isnan(x)) {
          dl->AddRectFilled(a, b, kNanColor);
          centred(a, "NaN", IM_COL32(0, 0, 0, 255));
          continue;
        }
        if (std::isinf(x)) {
          // Written "−∞" where it fits, else hatched.
          dl->AddRectFilled(a, b, kInfColor);
          if (!centred(a, x < 0 ? "−∞" : "+∞", kHatchColor))
            dl->AddLine(ImVec2(a.x, b.y), ImVec2(b.x, a.y), kHatchColor);
          continue;
        }
        const ImU32 col = sc.color(x);
        dl->AddRectFilled(a, b, col);
        if (o.cell_values) {
          char buf[16];
          // Whole numbers (mask entries, a softmax weight of exactly 0 or 1) are written without
          // decimals, so that "0.00" always means a rounded small number.
          std::snprintf(buf, sizeof buf, x == std::round(x) ? "%.0f" : "%.2f", static_cast<double>(x));
          centred(a, buf, ink_for(col));
        }
      }
  }
  if (o.frame_color)
    dl->AddRect(ImVec2(gx - 2, gy - 2), ImVec2(gx + gw + 2, gy + gh + 2), o.frame_color, 0.0f, 0, 2.0f);
  auto outline = [&](int r, int c) {  // r, c: the matrix's indices
    r -= win.r0;
    c -= win.c0;
    if (r < 0 || r >= R || c < 0 || c >= C) return;
    const ImVec2 a(gx + static_cast<float>(c) * cell_w - 1, gy + static_cast<float>(r) * cell_h - 1);
    const ImVec2 b(a.x + cell_w + 2, a.y + cell_h + 2);
    dl->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0.0f, 0, 3.0f);
    dl->AddRect(a, b, IM_COL32(255, 255, 255, 255), 0.0f, 0, 1.5f);
  };
  outline(o.mark_row, o.mark_col);
  if (out.hovered) outline(out.row, out.col);
  // Regions another view points at (the cells a hovered value was computed from, changed cells):
  // a bright frame around each block, clipped to the part shown.
  for (const CellRegion& g : o.regions) {
    const int r0 = std::max(g.row0, win.r0) - win.r0, r1 = std::min(g.row0 + g.rows, win.r1) - win.r0;
    const int c0 = std::max(g.col0, win.c0) - win.c0, c1 = std::min(g.col0 + g.cols, win.c1) - win.c0;
    if (r0 >= r1 || c0 >= c1) continue;
    const ImVec2 a(gx + static_cast<float>(c0) * cell_w - 1, gy + static_cast<float>(r0) * cell_h - 1);
    const ImVec2 b(gx + static_cast<float>(c1) * cell_w + 1, gy + static_cast<float>(r1) * cell_h + 1);
    dl->AddRect(a, b, IM_COL32(0, 0, 0, 255), 0.0f, 0, 4.0f);
    dl->AddRect(a, b, o.region_color ? o.region_color : IM_COL32(255, 200, 0, 255), 0.0f, 0, 2.0f);
  }
  // A right-click asks for the heatmap's menu (export, experiments), which App::draw opens.
  if (item_hovered && ImGui::IsMouseClicked(ImGuiMouseButton_Right)) {
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
    req.row = out.row;
    req.col = out.col;
    req.window = win;
    heatmap_menu_request() = std::move(req);
  }

  if (full) {
    // Axis titles: rows run down, columns across.
    if (titles) {
      float x = p0.x;
      if (!o.rows.title.empty()) x += draw_math(f, ImVec2(x, p0.y), "↓ " + o.rows.title, dim) + F;
      if (!o.cols.title.empty()) draw_math(f, ImVec2(std::max(x, gx), p0.y), o.cols.title + " →", dim);
    }
    // Column labels: the 1-based index every few columns, as far apart as the numbers need;
    // above them the token labels, as densely as a typical character allows. Short labels go
    // first; a wider one (<bos>, a long piece, cut with "…") only where it overlaps none of them.
    auto col_x = [&](int c) { return gx + (static_cast<float>(c) + 0.5f) * cell_w; };
    const int nstep = nice_step((text_w(small, std::to_string(win.c1)) + gap) / cell_w);
    for (int c = 0; c < C; c += nstep) {
      const std::string n = std::to_string(win.c0 + c + 1);
      dl->AddText(small, Fs, ImVec2(col_x(c) - text_w(small, n) * 0.5f, p0.y + title_h + (col_chars ? F : 0.0f)), dim,
                  n.c_str());
    }
    if (col_chars) {
      const float typical = text_w(big, "m");
      const int lstep = nice_step((typical + gap * 0.5f) / cell_w);
      std::vector<std::pair<float, float>> drawn;  // extents of the labels drawn
      for (int pass = 0; pass < 2; ++pass)
        for (int c = 0; c < C; c += lstep) {
          const std::string l = fit_text(big, o.cols.labels[static_cast<size_t>(win.c0 + c)], max_col_label);
          const float w = text_w(big, l), x0 = col_x(c) - w * 0.5f, x1 = x0 + w;
          if ((w > typical) != (pass == 1)) continue;
          const bool overlaps = std::any_of(drawn.begin(), drawn.end(), [&](const auto& d) {
            return x0 < d.second + gap * 0.5f && d.first < x1 + gap * 0.5f;
          });
          if (overlaps) continue;
          dl->AddText(big, F, ImVec2(x0, p0.y + title_h), text_col, l.c_str());
          drawn.emplace_back(x0, x1);
        }
    }
    // Row labels: the 1-based index, then the token label.
    const int rstep = nice_step((row_chars ? F * 0.85f : Fs) / cell_h);
    for (int r = 0; r < R; r += rstep) {
      const float cy = gy + (static_cast<float>(r) + 0.5f) * cell_h;
      const std::string n = std::to_string(win.r0 + r + 1);
      dl->AddText(small, Fs, ImVec2(p0.x + row_idx_w - text_w(small, n), cy - Fs * 0.5f), dim, n.c_str());
      if (row_chars) {
        const std::string l = fit_text(big, o.rows.labels[static_cast<size_t>(win.r0 + r)], row_chr_w);
        dl->AddText(big, F, ImVec2(p0.x + row_idx_w + gap + (row_chr_w - text_w(big, l)) * 0.5f, cy - F * 0.5f),
                    text_col, l.c_str());
      }
    }
    // Legend (0 is written on the bar of a diverging scale).
    const float ly = gy + gh + std::round(F * 0.4f), by = ly + (F - bh) * 0.5f;
    float x = gx;
    dl->AddText(big, F, ImVec2(x, ly), text_col, lo.c_str());
    x += lo_w + gap;
    constexpr int kSegments = 32;
    for (int i = 0; i < kSegments; ++i) {
      const float t0 = static_cast<float>(i) / kSegments, t1 = static_cast<float>(i + 1) / kSegments;
      const ImU32 a = sc.color_at(t0), b = sc.color_at(t1);
      dl->AddRectFilledMultiColor(ImVec2(x + bar_w * t0, by), ImVec2(x + bar_w * t1, by + bh), a, b, b, a);
    }
    if (sc.diverging && sc.lo < 0 && sc.hi > 0) {
      const float zx = x + bar_w * (-sc.lo / (sc.hi - sc.lo));
      dl->AddText(small, Fs, ImVec2(zx - text_w(small, "0") * 0.5f, by + (bh - Fs) * 0.5f), IM_COL32(0, 0, 0, 255),
                  "0");
    }
    x += bar_w + gap;
    dl->AddText(big, F, ImVec2(x, ly), text_col, hi.c_str());
    x += hi_w + F;
    float sy = ly;
    if (wrap_swatches) {
      x = p0.x;
      sy += std::round(F * 1.3f);
    }
    for (const auto& [hatched, what] : swatches) {
      const ImVec2 a(x, sy + (F - bh) * 0.5f), b(x + bh, sy + (F + bh) * 0.5f);
      if (hatched)
        hatch(dl, a, b);
      else
        dl->AddRectFilled(a, b, kNanColor);
      dl->AddText(big, F, ImVec2(b.x + gap, sy), text_col, what.c_str());
      x = b.x + gap + text_w(big, what) + F;
    }
    // What was reduced or zoomed, under the legend.
    if (has_caption) dl->AddText(small, Fs, ImVec2(p0.x, sy + std::round(F * 1.3f)), dim, caption.c_str());
  }

  if (out.hovered) {
    ImGui::BeginTooltip();
    std::string name = o.value_name.empty() ? "value" : o.value_name;
    if (name.find(' ') != std::string::npos) name = "(" + name + ")";
    char at[48];
    if (C_all == 1)
      std::snprintf(at, sizeof at, "[%d] = ", out.row + 1);
    else
      std::snprintf(at, sizeof at, "[%d, %d] = ", out.row + 1, out.col + 1);
    math_text(f, name + at);
    ImGui::SameLine(0, 0);
    ImGui::PushFont(f.mono);
    ImGui::TextUnformatted(value_text(m(out.row, out.col)).c_str());
    ImGui::PopFont();
    axis_line(f, o.rows, true, out.row);
    if (C_all > 1) axis_line(f, o.cols, false, out.col);
    if (tex && (tex->red_rows.factor > 1 || tex->red_cols.factor > 1))
      ImGui::TextDisabled("(this pixel: the largest |value| of %d × %d entries; zoom in to see each)",
                          tex->red_rows.factor, tex->red_cols.factor);
    ImGui::EndTooltip();
  }
  if (clicked && out.hovered && o.on_click) o.on_click(out.row, out.col);
  return out;
}

namespace {

// The labels of ids 1 … n (GPT-2: 50257 of them), made once per tokenizer.
const std::vector<std::string>& vocab_labels(const Tokenizer& tok, int n) {
  static const Tokenizer* for_tok = nullptr;
  static std::string for_desc;
  static std::vector<std::string> labels;
  if (for_tok != &tok || static_cast<int>(labels.size()) != n || for_desc != tok.describe()) {
    labels.clear();
    for (int id = 1; id <= n; ++id) labels.push_back(token_label(tok, id));
    for_tok = &tok;
    for_desc = tok.describe();
  }
  return labels;
}

}  // namespace

std::optional<HeatmapMenuRequest>& heatmap_menu_request() {
  static std::optional<HeatmapMenuRequest> r;
  return r;
}

HeatmapOptions heatmap_options(const App& app, size_t k, const Value& v) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  HeatmapOptions o;
  o.value_name = v.name;
  o.value = &v;
  o.event = k;
  if (k >= t.size()) return o;
  o.caption = value_caption(app, k, v);
  // The cells of this value that the view the pointer is on was computed from (dependencies).
  if (app.ui.sources_event == k)
    if (auto it = app.ui.sources.find(v.name); it != app.ui.sources.end()) o.regions = it->second;
  const int alg = t.events[k].alg;
  const bool attention = alg == 3 || alg == 4 || alg == 5;
  // The tokens behind a token axis of length n: the sequence the trace names at k, else
  // (Algorithm 14's P of a later generation step) the x of the latest forward call before k
  // with that length.
  auto tokens = [&](Axis a, Eigen::Index n) -> const Tokens* {
    const Tokens& at = s.tokens_at(k, a);
    if (static_cast<Eigen::Index>(at.size()) == n) return &at;
    for (size_t j = k + 1; j-- > 0;) {
      const Event& e = t.events[j];
      if (e.kind == EventKind::Enter)
        for (const auto& x : e.values)
          if (x.kind == ValueKind::Tokens && x.name == "x" && static_cast<Eigen::Index>(x.tokens.size()) == n)
            return &x.tokens;
    }
    return nullptr;
  };
  auto axis = [&](Axis a, Eigen::Index n) {
    HeatmapAxis ax;
    switch (a) {
      case Axis::TokenX:
      case Axis::TokenZ: {
        const bool z = a == Axis::TokenZ;
        ax = attention ? HeatmapAxis{z ? "t_z (keys)" : "t_x (queries)", z ? "t_z" : "t_x", {}}
                       : HeatmapAxis{"t (tokens)", "t", {}};
        if (const Tokens* toks = tokens(a, n))
          for (int id : *toks) ax.labels.push_back(token_label(s.tokenizer(), id));
        break;
      }
      case Axis::Vocab:
        ax = HeatmapAxis{"token id", "token id", vocab_labels(s.tokenizer(), static_cast<int>(n))};
        break;
      case Axis::Head:
        ax = HeatmapAxis{"h (heads)", "h", {}};
        break;
      case Axis::Feature:
        break;
    }
    return ax;
  };
  o.rows = axis(v.rows, v.m.rows());
  o.cols = axis(v.cols, v.m.cols());
  if (v.kind == ValueKind::Mask) {
    o.scale = ColorScale::Sequential;
    o.lo = 0;
    o.hi = 1;
    o.cell_values = true;
  }
  return o;
}

std::string value_caption(const App& app, size_t k, const Value& v) {
  const Session& s = app.session;
  if (k >= s.trace().size()) return v.name;
  const Event& e = s.trace().events[k];
  std::string c = v.name;
  if (e.idx.l) c += ", layer " + std::to_string(e.idx.l);
  if (e.idx.h) c += ", head " + std::to_string(e.idx.h);
  if (e.idx.t) c += ", t = " + std::to_string(e.idx.t);
  if (e.idx.i) c += ", step " + std::to_string(e.idx.i);
  c += ", Algorithm " + std::to_string(e.alg) + (e.line ? " line " + std::to_string(e.line) : " (inputs)");
  if (s.arch().has_context() && !s.context().empty()) c += ", context '" + s.context() + "'";
  c += ", prompt '" + s.prompt() + "'";
  return c;
}

}  // namespace sf
