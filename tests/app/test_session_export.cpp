// Exported figures, headless: the PNG decodes to the laid-out size with each cell in the colour
// of its value on the heatmap's scale (the current palette), the legend's gradient and the
// caption drawn; the SVG is well-formed XML (Python's xml.etree) with one rect per cell in the
// same colours and the caption; big matrices are reduced and say so; file names from captions.
#include <gtest/gtest.h>
#include <stb/stb_image.h>

#include <cmath>
#include <cstdio>
#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>

#include "app/logic/figure_export.hpp"
#include "app/logic/figure_png.hpp"
#include "app/logic/figure_svg.hpp"
#include "app/session.hpp"
#include "core/io/fileio.hpp"
#include "core/model/error.hpp"

namespace test_session_export {

using namespace sf;
namespace fs = std::filesystem;

namespace {

std::string temp_path(const std::string& name) {
  const fs::path dir = fs::temp_directory_path() / ("stepformer-figures-" + std::to_string(::getpid()));
  fs::create_directories(dir);
  return (dir / name).string();
}

// A signed 4×6 matrix with a −∞ (diverging scale, a −∞ swatch in the legend).
MatF signed_matrix() {
  MatF m(4, 6);
  for (int i = 0; i < 4; ++i)
    for (int j = 0; j < 6; ++j) m(i, j) = static_cast<float>(i * 6 + j) * 0.25f - 2.5f;
  m(2, 1) = -INFINITY;
  return m;
}

FigureSpec spec_for(const std::string& caption) {
  FigureSpec s;
  s.value_name = "S";
  s.caption = caption;
  s.rows = {"t_z (keys)", {"<bos>", "h", "e", "l"}};
  s.cols = {"t_x (queries)", {"<bos>", "h", "e", "l", "l", "o"}};
  return s;
}

struct Decoded {
  int w = 0, h = 0;
  std::vector<unsigned char> px;
  Rgb8 at(float x, float y) const {
    const size_t i = (static_cast<size_t>(y) * w + static_cast<size_t>(x)) * 4;
    return {px[i], px[i + 1], px[i + 2]};
  }
};

Decoded decode(const std::string& path) {
  Decoded d;
  int comp = 0;
  unsigned char* data = stbi_load(path.c_str(), &d.w, &d.h, &comp, 4);
  if (data) d.px.assign(data, data + static_cast<size_t>(d.w) * d.h * 4), stbi_image_free(data);
  return d;
}

bool is_background(Rgb8 c) { return c == kFigureBackground; }

// Python with xml.etree, or nothing (the SVG checks then skip).
bool have_python() { return fs::exists("/usr/bin/python3"); }
std::string python(const std::string& script) {
  const std::string file = temp_path("check.py");
  write_file_atomic(file, script);
  std::string out;
  FILE* p = popen(("/usr/bin/python3 " + file + " 2>&1").c_str(), "r");
  char buf[4096];
  while (p && fgets(buf, sizeof buf, p)) out += buf;
  EXPECT_EQ(p ? pclose(p) : -1, 0) << out;
  return out;
}

// The SVG at `path` read by Python's ElementTree: `body` sees `root` and the namespace prefix `ns`
// and prints one JSON object, which this returns.
nlohmann::json read_svg(const std::string& path, const std::string& body) {
  return nlohmann::json::parse(python(
      "import json, xml.etree.ElementTree as ET\n"
      "ns = '{http://www.w3.org/2000/svg}'\n"
      "root = ET.parse('" + path + "').getroot()\n" + body));
}

}  // namespace

TEST(SessionExport, PngFigureCellsLegendAndCaption) {
  const MatF m = signed_matrix();
  const FigureSpec spec = spec_for("S, layer 1, head 2, Algorithm 4 line 5, prompt 'hello'");
  const Figure fig = layout_figure(m, spec);
  const std::string path = temp_path("S.png");
  write_png_figure(path, m, spec);
  const Decoded d = decode(path);
  ASSERT_EQ(d.w, fig.w);
  ASSERT_EQ(d.h, fig.h);
  // The scale: diverging ±max|x| = ±3.25 with −∞ counted apart, as on screen.
  EXPECT_TRUE(fig.scale.diverging);
  EXPECT_FLOAT_EQ(fig.scale.hi, 3.25f);
  EXPECT_FLOAT_EQ(fig.scale.lo, -3.25f);
  EXPECT_EQ(fig.scale.neg_inf, 1);
  ASSERT_EQ(fig.rows, 4);
  ASSERT_EQ(fig.cols, 6);
  ASSERT_EQ(fig.cells.size(), 24u);
  for (const FigCell& c : fig.cells) {
    const Rgb8 got = d.at(c.r.x + c.r.w * 0.5f, c.r.y + c.r.h * 0.5f);
    if (std::isinf(c.value)) continue;  // hatched
    const float t = (m(c.row, c.col) + 3.25f) / 6.5f;
    EXPECT_EQ(got, colormap(t, true, Palette::Standard)) << c.row << "," << c.col;
  }
  // The −∞ cell is the infinity colour or its hatching, never a colour of the scale.
  const FigCell& inf = fig.cells[2 * 6 + 1];
  const Rgb8 ic = d.at(inf.r.x + 1, inf.r.y + 1);
  EXPECT_TRUE(ic == infinity_color() || ic == hatch_color());
  // The legend: the gradient's end colours at its ends, and a −∞ swatch.
  const FigRect& b = fig.legend_bar;
  EXPECT_EQ(d.at(b.x, b.y + b.h * 0.5f), colormap(0, true, Palette::Standard));
  EXPECT_EQ(d.at(b.x + b.w - 1, b.y + b.h * 0.5f), colormap(1, true, Palette::Standard));
  const int mid = static_cast<int>(b.w) / 2;  // pixel column i of the bar is t = i / (w − 1)
  EXPECT_EQ(d.at(b.x + mid, b.y + b.h * 0.5f), colormap(mid / (b.w - 1), true, Palette::Standard));
  ASSERT_EQ(fig.swatches.size(), 1u);
  // Text: ink in the caption band, the axis titles and the token labels.
  long ink = 0;
  const FigRect& cap = fig.caption_band;
  for (int y = static_cast<int>(cap.y); y < static_cast<int>(cap.y + cap.h); ++y)
    for (int x = static_cast<int>(cap.x); x < static_cast<int>(cap.x + cap.w); ++x) ink += !is_background(d.at(x, y));
  EXPECT_GT(ink, 200) << "the caption is drawn";
  long above = 0;  // the column title and labels over the cells
  for (int y = 0; y < static_cast<int>(fig.grid.y); ++y)
    for (int x = static_cast<int>(fig.grid.x); x < static_cast<int>(fig.grid.x + fig.grid.w); ++x)
      above += !is_background(d.at(x, y));
  EXPECT_GT(above, 100);
  bool caption_text = false, token_label = false;
  for (const FigText& t : fig.texts) {
    caption_text |= t.s.find("Algorithm 4 line 5") != std::string::npos;
    token_label |= t.s == "<bos>";
  }
  EXPECT_TRUE(caption_text);
  EXPECT_TRUE(token_label);
}

TEST(SessionExport, SequentialScaleAndTheColourBlindPalette) {
  MatF p(3, 3);
  p << 0.1f, 0.5f, 1.0f, 0.2f, 0.25f, 0.0f, 0.7f, 0.25f, 0.0f;
  FigureSpec spec = spec_for("softmax(S/√d_attn)");
  spec.rows.labels.clear();
  spec.cols.labels.clear();
  spec.palette = Palette::ColorBlind;
  const Figure fig = layout_figure(p, spec);
  EXPECT_FALSE(fig.scale.diverging);
  EXPECT_EQ(fig.scale.lo, 0.0f);
  EXPECT_EQ(fig.scale.hi, 1.0f);
  const RgbaImage img = render_png_figure(fig);
  for (const FigCell& c : fig.cells)
    EXPECT_EQ(img.at(static_cast<int>(c.r.x + c.r.w / 2), static_cast<int>(c.r.y + c.r.h / 2)),
              colormap(p(c.row, c.col), false, Palette::ColorBlind));
  // A mask's fixed range [0, 1] is kept whatever its entries.
  MatF mask = MatF::Ones(2, 2);
  FigureSpec ms = spec;
  ms.scale = FigureScaleKind::Sequential;
  ms.lo = 0, ms.hi = 1;
  const Figure mf = layout_figure(mask, ms);
  EXPECT_EQ(mf.cells[0].fill, colormap(1, false, Palette::ColorBlind));
}

TEST(SessionExport, BigMatricesAreReducedAndSaySo) {
  MatF big = MatF::Zero(50, 3000);
  big(17, 2500) = 9.0f;  // one peak survives the reduction (each cell the largest |value|)
  const Figure fig = layout_figure(big, spec_for("W_e"));
  EXPECT_TRUE(fig.reduced);
  EXPECT_LE(fig.cols, 960);
  EXPECT_EQ(fig.rows, 50);
  bool said = false;
  for (const FigText& t : fig.texts) said |= t.s.find("Reduced: 3000 columns shown as") != std::string::npos;
  EXPECT_TRUE(said);
  int peaks = 0;
  for (const FigCell& c : fig.cells) peaks += c.value == 9.0f;
  EXPECT_EQ(peaks, 1);
  // The SVG stops at 200 cells a side.
  const std::string path = temp_path("big.svg");
  write_svg_figure(path, big, spec_for("W_e"));
  const std::string svg = read_file(path, 1 << 26);
  size_t cells = 0;
  for (size_t p = 0; (p = svg.find("class=\"cell\"", p)) != std::string::npos; ++p) ++cells;
  EXPECT_EQ(cells, 50u * 200u);
}

TEST(SessionExport, SvgIsWellFormedWithTheCellColoursAndCaption) {
  const MatF m = signed_matrix();
  const FigureSpec spec = spec_for("S, layer 1, head 2, Algorithm 4 line 5, prompt 'a<b & \"c\"'");
  const std::string path = temp_path("S.svg");
  write_svg_figure(path, m, spec);
  const Figure fig = layout_figure(m, spec);
  if (!have_python()) GTEST_SKIP() << "no /usr/bin/python3";
  const auto j = read_svg(path,
      "cells = [r for r in root.iter(ns + 'rect') if r.get('class') == 'cell']\n"
      "print(json.dumps({'cells': [[int(c.get('data-row')), int(c.get('data-col')), c.get('fill'),\n"
      "    c.get('data-value')] for c in cells],\n"
      "  'captions': [t.text for t in root.iter(ns + 'text') if t.get('class') == 'caption'],\n"
      "  'labels': [t.text for t in root.iter(ns + 'text') if t.get('class') == 'label'],\n"
      "  'gradient': len(list(root.iter(ns + 'linearGradient')))}))\n");
  ASSERT_EQ(j["cells"].size(), 24u);
  for (const auto& c : j["cells"]) {
    const int r = c[0].get<int>() - 1, col = c[1].get<int>() - 1;
    const float x = m(r, col);
    const Rgb8 want = fig.scale.color(x);
    char hex[8];
    std::snprintf(hex, sizeof hex, "#%02x%02x%02x", want.r, want.g, want.b);
    EXPECT_EQ(c[2], hex) << r << "," << col;
    EXPECT_EQ(std::strtof(c[3].get<std::string>().c_str(), nullptr), x);
  }
  std::string caption;
  for (const auto& t : j["captions"]) caption += t.get<std::string>() + " ";
  EXPECT_NE(caption.find("prompt 'a<b & \"c\"'"), std::string::npos) << caption;
  EXPECT_NE(caption.find("Algorithm 4 line 5"), std::string::npos);
  EXPECT_EQ(j["gradient"], 1);
  EXPECT_FALSE(j["labels"].empty());
}

TEST(SessionExport, AValueOfTheSessionAsEveryFormat) {
  Session s;
  s.set_prompt("hello");
  ASSERT_TRUE(s.jump_to(4, 6, 1, 1));
  const Value* a = nullptr;
  for (const Value* v : s.scope_for_view(s.cursor()))
    if (v->name == "softmax(S/√d_attn)") a = v;
  ASSERT_NE(a, nullptr);
  ExportMatrix what;
  what.name = a->name;
  what.figure = spec_for("softmax(S/√d_attn), layer 1, head 1, Algorithm 4 line 6, prompt 'hello'");
  what.figure.rows.labels.assign(static_cast<size_t>(a->m.rows()), "x");
  what.figure.cols.labels.assign(static_cast<size_t>(a->m.cols()), "y");
  what.rows = {"t_z", {}};
  what.cols = {"t_x", {}};
  for (ExportFormat f : {ExportFormat::Csv, ExportFormat::Npy, ExportFormat::Png, ExportFormat::Svg}) {
    const std::string path = temp_path(std::string("A.") + extension(f));
    export_matrix(f, path, a->m, what);
    EXPECT_GT(fs::file_size(path), 100u) << extension(f);
  }
  const auto csv = parse_csv(read_file(temp_path("A.csv"), 1 << 20));
  ASSERT_EQ(csv.size(), static_cast<size_t>(a->m.rows()) + 1);
  EXPECT_EQ(csv[0][0], "softmax(S/√d_attn)");
  EXPECT_EQ(csv[0][1], "t_x=1");
  for (Eigen::Index r = 0; r < a->m.rows(); ++r)
    for (Eigen::Index c = 0; c < a->m.cols(); ++c)
      EXPECT_EQ(std::strtof(csv[r + 1][c + 1].c_str(), nullptr), a->m(r, c));
  const MatF back = read_npy(temp_path("A.npy"));
  EXPECT_TRUE(back == MatF(a->m));
  // A folder that does not exist: an error, nothing written.
  EXPECT_THROW(export_matrix(ExportFormat::Png, "/nonexistent-dir/A.png", a->m, what), Error);
}

TEST(SessionExport, FileNamesFromCaptions) {
  EXPECT_EQ(file_stem("softmax(S/√d_attn), layer 2, head 3, Algorithm 4 line 6, prompt 'hello='"),
            "softmax_S_sqrt_d_attn_l2_h3");
  EXPECT_EQ(file_stem("X̃, layer 1, t = 3, Algorithm 6 line 4, prompt 'a'"), "X_tilde_l1_t3");
  EXPECT_EQ(file_stem("P, Algorithm 10 line 10, prompt 'hi'"), "P");
  EXPECT_EQ(file_stem("∅"), "value");
  EXPECT_EQ(parse_export_format("svg"), ExportFormat::Svg);
  EXPECT_FALSE(parse_export_format("gif").has_value());
}

// Token images on the axes (a vision transformer's patches, HeatmapAxis::images) are exported as
// images: the PNG has each image pixel's grey in its square, the SVG one rect per image pixel in a
// "label-image" group; an index without an image (the class token) keeps its text label.
TEST(SessionExport, TokenImagesAreDrawnInPlaceOfTheirLabels) {
  MatF m(3, 3);
  m << 0.1f, 0.2f, 0.3f, 0.4f, 0.5f, 0.6f, 0.7f, 0.8f, 0.9f;
  TokenImage a, b;
  a.w = a.h = b.w = b.h = 2;
  a.grey = {0, 255, 128, 64};
  b.grey = {10, 20, 30, 40};
  FigureSpec spec;
  spec.value_name = "A";
  spec.caption = "A";
  spec.rows = {"t_z", {"CLS", "P1", "P2"}, {TokenImage{}, a, b}};
  spec.cols = spec.rows;
  const Figure fig = layout_figure(m, spec);
  ASSERT_EQ(fig.label_pixels.size(), 2u * 2 * 4);  // two images of 4 pixels on each axis
  ASSERT_EQ(fig.label_frames.size(), 4u);
  for (const FigRect& f : fig.label_frames) EXPECT_EQ(f.w, fig.label_pixels[0].r.w * 2 + 2);  // 1 pixel each side
  int cls = 0, patch_text = 0;
  for (const FigText& t : fig.texts) cls += t.s == "CLS", patch_text += t.s == "P1" || t.s == "P2";
  EXPECT_EQ(cls, 2);
  EXPECT_EQ(patch_text, 0);
  const std::string path = temp_path("A-images.png");
  write_png_figure(path, m, spec);
  const Decoded d = decode(path);
  ASSERT_EQ(d.w, fig.w);
  for (const FigCell& p : fig.label_pixels) {
    const unsigned char g = p.fill.r;
    EXPECT_EQ(p.fill, (Rgb8{g, g, g}));
    // The square's centre is its grey (no text or cell drawn over it).
    EXPECT_EQ(d.at(p.r.x + p.r.w * 0.5f, p.r.y + p.r.h * 0.5f), p.fill) << p.r.x << ", " << p.r.y;
  }
  // The greys are the images', pixel by pixel: the first image pixel drawn is a's (0, 0).
  EXPECT_EQ(fig.label_pixels[0].fill, (Rgb8{0, 0, 0}));
  EXPECT_EQ(fig.label_pixels[1].fill, (Rgb8{255, 255, 255}));
  const std::string svg = temp_path("A-images.svg");
  write_svg_figure(svg, m, spec);
  if (!have_python()) GTEST_SKIP() << "no /usr/bin/python3";
  const auto j = read_svg(svg,
      "g = [e for e in root.iter(ns + 'g') if e.get('class') == 'label-image']\n"
      "px = [r.get('fill') for r in g[0].iter(ns + 'rect') if r.get('class') != 'frame'] if g else []\n"
      "print(json.dumps({'groups': len(g), 'fills': px}))\n");
  EXPECT_EQ(j["groups"], 1);
  ASSERT_EQ(j["fills"].size(), 16u);
  EXPECT_EQ(j["fills"][0], "#000000");
  EXPECT_EQ(j["fills"][1], "#ffffff");
  EXPECT_EQ(j["fills"][2], "#808080");
}

}  // namespace test_session_export
