#include "app/ui_probe.hpp"

#include <algorithm>
#include <cfloat>
#include <cstring>

namespace sf::ui_probe {

namespace {

bool enabled = false;
std::vector<ClippedText> clipped;
std::vector<LabelledItem> items;

// ImFont::RenderText floors a text's start to whole pixels, so its ink can end up to 1 px left of
// the rectangle CalcTextSize gives; a text is cut only when it runs more than that past its clip.
constexpr float kPixelSlack = 1.0f;

ImRect clip_of(const ImDrawList* dl, const ImVec4* fine_clip) {
  ImRect c(dl->_CmdHeader.ClipRect);
  if (fine_clip) c.ClipWithFull(ImRect(*fine_clip));
  return c;
}

std::string window_name(const ImDrawList* dl) { return dl->_OwnerName ? dl->_OwnerName : ""; }

// A text that has rows on screen but runs past its clip rectangle's left or right side has lost
// pixels. A text wholly above or below it is scrolled away, not cut: the user scrolls to it.
void check_text(const ImDrawList* dl, const ImFont* font, float size, const ImVec2& pos, const char* begin,
                const char* end, float wrap_width, const ImVec4* fine_clip) {
  if (!font) font = dl->_Data->Font;
  if (size <= 0) size = dl->_Data->FontSize;
  if (!end) end = begin + std::strlen(begin);
  if (begin == end || !font) return;
  const ImVec2 sz = font->CalcTextSizeA(size, FLT_MAX, wrap_width, begin, end);
  const ImRect r(pos, ImVec2(pos.x + sz.x, pos.y + sz.y));
  const ImRect c = clip_of(dl, fine_clip);
  const bool has_rows_shown = r.Max.y > c.Min.y && r.Min.y < c.Max.y;
  const bool cut = r.Min.x < c.Min.x - kPixelSlack || r.Max.x > c.Max.x + kPixelSlack;
  if (has_rows_shown && cut) clipped.push_back({window_name(dl), std::string(begin, end), r, c, false});
}

// The label a widget is drawing belongs to the item ImGui added last (ItemAdd runs before a
// widget renders its label), when the label is drawn inside that item's rectangle.
void note_label(const ImVec2& pos, const char* text, const char* end, const ImRect& clip) {
  const ImGuiContext& g = *GImGui;
  const ImGuiLastItemData& item = g.LastItemData;
  if (!g.CurrentWindow || item.ID == 0) return;
  const char* shown_end = ImGui::FindRenderedTextEnd(text, end);
  if (shown_end == text) return;
  ImRect grown = item.Rect;
  grown.Expand(kPixelSlack);
  if (!grown.Contains(pos)) return;
  ImRect visible = item.Rect;
  visible.ClipWithFull(clip);
  items.push_back({g.CurrentWindow->ID, std::string(text, shown_end), item.Rect, visible});
}

ImRect current_clip() {
  const ImGuiWindow* w = GImGui->CurrentWindow;
  return w ? ImRect(w->DrawList->_CmdHeader.ClipRect) : ImRect();
}

}  // namespace

void set_enabled(bool on) { enabled = on; }
bool is_enabled() { return enabled; }

void begin_frame() {
  clipped.clear();
  items.clear();
}

const std::vector<ClippedText>& clipped_texts() { return clipped; }
const std::vector<LabelledItem>& labelled_items() { return items; }

bool fully_visible(const ImGuiWindow* window, const ImRect& r) {
  const ImGuiContext& g = *GImGui;
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const ImRect screen(vp->Pos, ImVec2(vp->Pos.x + vp->Size.x, vp->Pos.y + vp->Size.y));
  ImRect inner = window->InnerClipRect;
  inner.Expand(kPixelSlack);
  if (!inner.Contains(r) || !screen.Contains(r)) return false;
  // g.Windows is in display order, back to front: a window after `window`'s root is in front.
  const ImGuiWindow* root = window->RootWindow;
  bool in_front = false;
  for (const ImGuiWindow* w : g.Windows) {
    if (w == root) {
      in_front = true;
      continue;
    }
    if (!in_front || !w->Active || w->Hidden || w->RootWindow != w || (w->Flags & ImGuiWindowFlags_Tooltip)) continue;
    ImRect overlap = w->Rect();
    overlap.ClipWithFull(r);
    // Windows that share an edge touch; they overlap only when the common part is wider and
    // taller than the slack.
    if (overlap.GetWidth() > kPixelSlack && overlap.GetHeight() > kPixelSlack) return false;
  }
  return true;
}

}  // namespace sf::ui_probe

// The wrapped functions (see ui_probe.hpp). Each __real_ symbol is the library's function; each
// __wrap_ one is called in its place by the app and by ImGui's other objects. Names are ImGui
// 1.86's mangled C++ names: a different ImGui fails the link rather than skipping the probe.

extern "C" {

// ImDrawList::AddText(const ImFont*, float, const ImVec2&, ImU32, const char*, const char*, float, const ImVec4*)
void __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(ImDrawList*, const ImFont*, float,
                                                                          const ImVec2&, ImU32, const char*,
                                                                          const char*, float, const ImVec4*);
void __wrap__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(ImDrawList* dl, const ImFont* font,
                                                                          float size, const ImVec2& pos, ImU32 col,
                                                                          const char* begin, const char* end,
                                                                          float wrap, const ImVec4* fine_clip) {
  if (sf::ui_probe::enabled) sf::ui_probe::check_text(dl, font, size, pos, begin, end, wrap, fine_clip);
  __real__ZN10ImDrawList7AddTextEPK6ImFontfRK6ImVec2jPKcS7_fPK6ImVec4(dl, font, size, pos, col, begin, end, wrap,
                                                                      fine_clip);
}

// ImDrawList::AddText(const ImVec2&, ImU32, const char*, const char*): the draw list's font.
void __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList*, const ImVec2&, ImU32, const char*, const char*);
void __wrap__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(ImDrawList* dl, const ImVec2& pos, ImU32 col, const char* begin,
                                                     const char* end) {
  if (sf::ui_probe::enabled) sf::ui_probe::check_text(dl, nullptr, 0, pos, begin, end, 0, nullptr);
  __real__ZN10ImDrawList7AddTextERK6ImVec2jPKcS4_(dl, pos, col, begin, end);
}

// ImGui::RenderText(ImVec2, const char*, const char*, bool): labels of checkboxes, menu shortcuts.
void __real__ZN5ImGui10RenderTextE6ImVec2PKcS2_b(ImVec2, const char*, const char*, bool);
void __wrap__ZN5ImGui10RenderTextE6ImVec2PKcS2_b(ImVec2 pos, const char* text, const char* end, bool hide_after_hash) {
  if (sf::ui_probe::enabled && hide_after_hash)  // false: a plain text (ImGui::Text), no widget's label
    sf::ui_probe::note_label(pos, text, end, sf::ui_probe::current_clip());
  __real__ZN5ImGui10RenderTextE6ImVec2PKcS2_b(pos, text, end, hide_after_hash);
}

// ImGui::RenderTextClipped(...): labels of buttons, selectables, menu items, menus, tree nodes.
void __real__ZN5ImGui17RenderTextClippedERK6ImVec2S2_PKcS4_PS1_S2_PK6ImRect(const ImVec2&, const ImVec2&,
                                                                               const char*, const char*,
                                                                               const ImVec2*, const ImVec2&,
                                                                               const ImRect*);
void __wrap__ZN5ImGui17RenderTextClippedERK6ImVec2S2_PKcS4_PS1_S2_PK6ImRect(const ImVec2& pos_min,
                                                                               const ImVec2& pos_max,
                                                                               const char* text, const char* end,
                                                                               const ImVec2* size,
                                                                               const ImVec2& align,
                                                                               const ImRect* clip) {
  if (sf::ui_probe::enabled) {
    ImRect c = sf::ui_probe::current_clip();
    if (clip) c.ClipWithFull(*clip);
    sf::ui_probe::note_label(pos_min, text, end, c);
  }
  __real__ZN5ImGui17RenderTextClippedERK6ImVec2S2_PKcS4_PS1_S2_PK6ImRect(pos_min, pos_max, text, end, size, align,
                                                                           clip);
}

// ImGui::RenderTextEllipsis(...): tab labels and table headers, shortened with "…" when too wide.
void __real__ZN5ImGui18RenderTextEllipsisEP10ImDrawListRK6ImVec2S4_ffPKcS6_PS3_(ImDrawList*, const ImVec2&,
                                                                                  const ImVec2&, float, float,
                                                                                  const char*, const char*,
                                                                                  const ImVec2*);
void __wrap__ZN5ImGui18RenderTextEllipsisEP10ImDrawListRK6ImVec2S4_ffPKcS6_PS3_(ImDrawList* dl, const ImVec2& pos_min,
                                                                                  const ImVec2& pos_max,
                                                                                  float clip_max_x,
                                                                                  float ellipsis_max_x,
                                                                                  const char* text, const char* end,
                                                                                  const ImVec2* size) {
  if (sf::ui_probe::enabled) {
    const char* shown_end = ImGui::FindRenderedTextEnd(text, end);
    const ImVec2 sz = size ? *size : ImGui::CalcTextSize(text, shown_end, false);
    ImRect c = sf::ui_probe::clip_of(dl, nullptr);
    c.Max.x = std::min(c.Max.x, clip_max_x);
    sf::ui_probe::note_label(pos_min, text, end, c);
    // ImGui's own test for shortening (RenderTextEllipsis in imgui.cpp 1.86).
    if (sz.x > pos_max.x - pos_min.x)
      sf::ui_probe::clipped.push_back({sf::ui_probe::window_name(dl), std::string(text, shown_end),
                                       ImRect(pos_min, ImVec2(pos_min.x + sz.x, pos_min.y + sz.y)), c, true});
  }
  __real__ZN5ImGui18RenderTextEllipsisEP10ImDrawListRK6ImVec2S4_ffPKcS6_PS3_(dl, pos_min, pos_max, clip_max_x,
                                                                               ellipsis_max_x, text, end, size);
}

}  // extern "C"
