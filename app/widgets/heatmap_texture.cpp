#include <algorithm>
#include <vector>

#include "app/widgets/heatmap_parts.hpp"

namespace sf::heatmap_detail {

namespace {

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
    if (it->last_frame < frame - kHeatmapTextureLifeFrames) {
      glDeleteTextures(1, &it->tex);
      it = cache.erase(it);
    } else {
      ++it;
    }
  }
}

}  // namespace

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

int max_texture_side() {
  static GLint side = 0;
  if (!side) {
    glGetIntegerv(GL_MAX_TEXTURE_SIZE, &side);
    if (side <= 0) side = 4096;
  }
  return side;
}

}  // namespace sf::heatmap_detail
