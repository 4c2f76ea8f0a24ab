#include "app/logic/figure_layout.hpp"

#include <algorithm>
#include <cstdio>
#include <tuple>

#include "app/logic/figure_font.hpp"
#include "core/model/error.hpp"

namespace sf {

Rgb8 FigureScale::color(float x) const {
  if (std::isnan(x)) return nan_color();
  if (std::isinf(x)) return infinity_color();
  return color_at(hi > lo ? (x - lo) / (hi - lo) : 0.5f);
}

FigureScale figure_scale(const MatView& m, const FigureSpec& spec) {
  FigureScale s;
  s.palette = spec.palette;
  float mn = INFINITY, mx = -INFINITY;
  for (Eigen::Index j = 0; j < m.cols(); ++j)
    for (Eigen::Index i = 0; i < m.rows(); ++i) {
      const float x = m(i, j);
      if (std::isnan(x)) ++s.nan;
      else if (std::isinf(x)) ++(x < 0 ? s.neg_inf : s.pos_inf);
      else mn = std::min(mn, x), mx = std::max(mx, x);
    }
  const bool any = mn <= mx;
  s.diverging = spec.scale == FigureScaleKind::Diverging ||
                (spec.scale == FigureScaleKind::Auto && !(any && mn >= 0 && mx > 0));
  if (s.diverging) {
    const float a = any ? std::max(std::abs(mn), std::abs(mx)) : 0.0f;
    s.lo = a > 0 ? -a : -1.0f;
    s.hi = a > 0 ? a : 1.0f;
  } else {
    s.lo = 0;
    s.hi = any && mx > 0 ? mx : 1.0f;
  }
  if (!std::isnan(spec.lo)) s.lo = spec.lo;
  if (!std::isnan(spec.hi)) s.hi = spec.hi;
  return s;
}

namespace {

// Text sizes (pixels) and spacing.
constexpr float kLabel = 15, kIndex = 11, kCaption = 16, kMargin = 20, kGap = 6;
// Cells are at most this large, and the grid at most this wide and tall.
constexpr float kMaxCell = 40, kGridW = 960, kGridH = 720;

// The smallest of 1, 2, 5, 10, 20, … that is ≥ n.
int nice_step(float n) {
  for (int decade = 1;; decade *= 10)
    for (int m : {1, 2, 5})
      if (static_cast<float>(m * decade) >= n) return m * decade;
}

// `text` broken into lines of at most max_w pixels (at spaces; a longer word is cut).
std::vector<std::string> wrap(const FigureFont& f, const std::string& text, float px, float max_w) {
  std::vector<std::string> lines;
  std::string line;
  size_t i = 0;
  while (i <= text.size()) {
    const size_t sp = std::min(text.find(' ', i), text.size());
    const std::string word = text.substr(i, sp - i);
    const std::string cand = line.empty() ? word : line + " " + word;
    if (!line.empty() && f.width(cand, px) > max_w) {
      lines.push_back(line);
      line = word;
    } else {
      line = cand;
    }
    i = sp + 1;
  }
  if (!line.empty()) lines.push_back(line);
  for (auto& l : lines) l = f.fit(l, px, max_w);
  return lines;
}

std::string legend_number(float x) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%.4g", static_cast<double>(x));
  return buf;
}

// The image standing for index i of an axis in place of its label, or nullptr.
const TokenImage* image_of(const FigureAxis& ax, int i) {
  const bool has = ax.images.size() == ax.labels.size() && !ax.images[static_cast<size_t>(i)].empty();
  return has ? &ax.images[static_cast<size_t>(i)] : nullptr;
}

}  // namespace

Figure layout_figure(const MatView& m, const FigureSpec& spec) {
  if (m.rows() == 0 || m.cols() == 0) throw Error("the matrix " + spec.value_name + " is empty: nothing to draw");
  const FigureFont& font = FigureFont::sans();
  Figure fig;
  fig.value_name = spec.value_name;
  fig.scale = figure_scale(m, spec);
  const int R_all = static_cast<int>(m.rows()), C_all = static_cast<int>(m.cols());
  const Downsampled d = downsample(m, whole(R_all, C_all), std::min<int>(spec.max_rows, static_cast<int>(kGridH)),
                                   std::min<int>(spec.max_cols, static_cast<int>(kGridW)));
  const int R = static_cast<int>(d.m.rows()), C = static_cast<int>(d.m.cols());
  fig.rows = R, fig.cols = C, fig.reduced = d.reduced();
  // Cells: square where they are a few pixels or more, else as many pixels as fit.
  float cw = std::clamp(std::floor(kGridW / static_cast<float>(C)), 1.0f, kMaxCell);
  float ch = std::clamp(std::floor(kGridH / static_cast<float>(R)), 1.0f, kMaxCell);
  if (cw >= 3 && ch >= 3) cw = ch = std::min(cw, ch);

  // Which labels are drawn: token labels where a cell is a line high (rows) or a character wide.
  const bool row_tokens = !d.reduced() && spec.rows.labels.size() == static_cast<size_t>(R_all) && ch >= kLabel * 0.9f;
  const bool col_tokens = !d.reduced() && spec.cols.labels.size() == static_cast<size_t>(C_all) && cw >= kLabel * 0.9f;
  const float row_idx_w = font.width(std::to_string(R_all), kIndex);
  const float col_idx_w = font.width(std::to_string(C_all), kIndex);
  // Token images in place of labels: each image pixel q × q figure pixels, the image about a label high.
  int side = 0;
  for (const FigureAxis* ax : {&spec.rows, &spec.cols})
    for (const TokenImage& im : ax->images) side = std::max({side, im.w, im.h});
  const float q = side > 0 ? std::max(1.0f, std::floor(kLabel * 1.2f / static_cast<float>(side))) : 0.0f;
  float row_tok_w = 0;
  if (row_tokens)
    for (int i = 0; i < R_all; ++i) {
      const TokenImage* im = image_of(spec.rows, i);
      const std::string& l = spec.rows.labels[static_cast<size_t>(i)];
      row_tok_w = std::max(row_tok_w, im ? static_cast<float>(im->w) * q : std::min(font.width(l, kLabel), kLabel * 8));
    }
  const std::string row_title = spec.rows.title.empty() ? "rows" : spec.rows.title;
  const std::string col_title = spec.cols.title.empty() ? "columns" : spec.cols.title;

  // Horizontal: the row axis title (vertical), the row indices, the row token labels, the cells.
  const float title_x = kMargin;
  const float idx_x = title_x + kLabel * 1.5f;
  const float tok_x = idx_x + row_idx_w + kGap;
  const float gx = std::round(tok_x + (row_tokens ? row_tok_w + kGap : 0));
  // Vertical: the column axis title, the column token labels, the column indices, the cells.
  const float col_title_y = kMargin;
  const float col_tok_y = col_title_y + kLabel * 1.5f;
  const float col_idx_y = col_tok_y + (col_tokens ? kLabel * 1.3f : 0);
  const float gy = std::round(col_idx_y + kIndex * 1.4f);
  const float gw = cw * static_cast<float>(C), gh = ch * static_cast<float>(R);
  fig.grid = {gx, gy, gw, gh};

  auto text = [&](std::string s, float x, float y, float px, Rgb8 c, const char* role, bool vertical = false) {
    fig.texts.push_back(FigText{std::move(s), x, y, px, c, vertical, role});
  };
  auto image = [&](const TokenImage& im, float x, float y) {  // top-left at (x, y), whole pixels
    x = std::round(x), y = std::round(y);
    fig.label_frames.push_back({x - 1, y - 1, q * static_cast<float>(im.w) + 2, q * static_cast<float>(im.h) + 2});
    for (int r = 0; r < im.h; ++r)
      for (int c = 0; c < im.w; ++c) {
        const uint8_t g = im.at(r, c);
        fig.label_pixels.push_back(FigCell{{x + q * static_cast<float>(c), y + q * static_cast<float>(r), q, q},
                                           Rgb8{g, g, g}, false, r, c, static_cast<float>(g)});
      }
  };
  // Cells.
  fig.cells.reserve(static_cast<size_t>(R) * C);
  for (int r = 0; r < R; ++r)
    for (int c = 0; c < C; ++c) {
      const float x = d.m(r, c);
      fig.cells.push_back(FigCell{{gx + cw * static_cast<float>(c), gy + ch * static_cast<float>(r), cw, ch},
                                  fig.scale.color(x), std::isinf(x), r, c, x});
    }
  // Axis titles: the column title centred over the cells, the row title read upwards beside them.
  text(col_title, gx + std::max(0.0f, (gw - font.width(col_title, kLabel)) * 0.5f), col_title_y, kLabel, kFigureInk,
       "title");
  text(row_title, title_x, gy + std::min(gh, (gh + font.width(row_title, kLabel)) * 0.5f), kLabel, kFigureInk, "title",
       true);
  // Index labels (1-based; for a reduced side, the first index each cell covers) and token labels.
  const int rstep = nice_step((row_tokens ? kLabel : kIndex * 1.1f) / ch);
  for (int r = 0; r < R; r += rstep) {
    const int first = r * d.rows.factor;
    const std::string n = std::to_string(first + 1);
    const float cy = gy + ch * (static_cast<float>(r) + 0.5f);
    text(n, idx_x + row_idx_w - font.width(n, kIndex), cy - kIndex * 0.6f, kIndex, kFigureDim, "index");
    if (const TokenImage* im = row_tokens ? image_of(spec.rows, first) : nullptr)
      image(*im, tok_x, cy - static_cast<float>(im->h) * q * 0.5f);
    else if (row_tokens)
      text(font.fit(spec.rows.labels[static_cast<size_t>(first)], kLabel, row_tok_w), tok_x, cy - kLabel * 0.6f,
           kLabel, kFigureInk, "label");
  }
  const int cstep = nice_step((col_idx_w + kGap) / cw);
  for (int c = 0; c < C; c += cstep) {
    const int first = c * d.cols.factor;
    const std::string n = std::to_string(first + 1);
    const float cx = gx + cw * (static_cast<float>(c) + 0.5f);
    text(n, cx - font.width(n, kIndex) * 0.5f, col_idx_y, kIndex, kFigureDim, "index");
  }
  if (col_tokens)
    for (int c = 0; c < C; ++c) {
      if (const TokenImage* im = image_of(spec.cols, c)) {  // centred over its column, ending above the indices
        image(*im, gx + cw * (static_cast<float>(c) + 0.5f) - static_cast<float>(im->w) * q * 0.5f,
              col_idx_y - static_cast<float>(im->h) * q - kGap * 0.5f);
        continue;
      }
      const std::string l = font.fit(spec.cols.labels[static_cast<size_t>(c)], kLabel, cw);
      text(l, gx + cw * (static_cast<float>(c) + 0.5f) - font.width(l, kLabel) * 0.5f, col_tok_y, kLabel, kFigureInk,
           "label");
    }

  // Legend: lo, the colour bar, hi, then the swatches of the cells the scale cannot colour.
  const float ly = std::round(gy + gh + kLabel);
  const std::string lo = legend_number(fig.scale.lo), hi = legend_number(fig.scale.hi);
  float x = gx;
  text(lo, x, ly, kLabel, kFigureInk, "legend");
  x = std::round(x + font.width(lo, kLabel) + kGap);
  const float bar_w = std::round(std::clamp(gw * 0.5f, 160.0f, 320.0f));
  fig.legend_bar = {x, ly + kLabel * 0.1f, bar_w, kLabel * 0.9f};
  x += bar_w + kGap;
  text(hi, x, ly, kLabel, kFigureInk, "legend");
  x += font.width(hi, kLabel) + kLabel;
  const FigureScale& s = fig.scale;
  for (const auto& [count, what, fill, hatched] :
       {std::tuple{s.neg_inf, "−∞ (masked)", infinity_color(), true}, {s.pos_inf, "+∞", infinity_color(), true},
        {s.nan, "NaN", nan_color(), false}}) {
    if (count == 0) continue;
    fig.swatches.push_back(FigCell{{x, ly + kLabel * 0.1f, kLabel * 0.9f, kLabel * 0.9f}, fill, hatched});
    x += kLabel * 0.9f + kGap;
    text(what, x, ly, kLabel, kFigureInk, "legend");
    x += font.width(what, kLabel) + kLabel;
  }
  const float legend_right = x;

  // The caption (wrapped), then what was reduced.
  const float right = std::max({gx + gw, legend_right, 480.0f});
  const float cap_w = right - kMargin;
  float cy = ly + kLabel * 2.0f;
  const float cap_top = cy;
  std::string caption = spec.caption.empty() ? spec.value_name : spec.caption;
  for (const auto& line : wrap(font, caption, kCaption, cap_w)) {
    text(line, kMargin, cy, kCaption, kFigureInk, "caption");
    cy += kCaption * 1.35f;
  }
  if (d.reduced())
    for (const auto& line : wrap(font, "Reduced: " + downsample_caption(d.rows, d.cols) + ".", kIndex + 1, cap_w)) {
      text(line, kMargin, cy, kIndex + 1, kFigureDim, "caption");
      cy += (kIndex + 1) * 1.35f;
    }
  fig.caption_band = {kMargin, cap_top, cap_w, cy - cap_top};
  fig.w = static_cast<int>(std::ceil(right + kMargin));
  fig.h = static_cast<int>(std::ceil(cy + kMargin * 0.5f));
  return fig;
}

}  // namespace sf
