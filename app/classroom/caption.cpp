#include "app/classroom/caption.hpp"

#include <algorithm>
#include <cmath>

#include "app/app.hpp"
#include "app/logic/markdown.hpp"
#include "app/mathtext.hpp"
#include "app/panels/panel.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

struct Ink {
  ImU32 text, strong, code_bg;
};

// A piece of a word in one style; a word is the pieces between two spaces, wrapped as a whole.
struct Frag {
  std::string text;
  MdSpan style;
};
using Word = std::vector<Frag>;

// The words of a block, in order (spaces only separate them).
std::vector<Word> words_of(const MdBlock& b) {
  std::vector<Word> words;
  bool space = true;  // the next piece starts a new word
  for (const MdSpan& s : b.spans) {
    size_t i = 0;
    while (i < s.text.size()) {
      if (s.text[i] == ' ') {
        space = true;
        ++i;
        continue;
      }
      const size_t end = std::min(s.text.find(' ', i), s.text.size());
      if (space || words.empty()) words.emplace_back();
      words.back().push_back({s.text.substr(i, end - i), s});
      space = false;
      i = end;
    }
  }
  return words;
}

// Draws (dl non-null) or measures a fragment at pos, text of height `px`; returns its width.
float frag(const Fonts& f, ImDrawList* dl, ImVec2 pos, const Frag& fr, float px, const Ink& ink) {
  const float scale = px / f.text->FontSize;
  if (fr.style.code) {
    const float w = f.mono->CalcTextSizeA(px, FLT_MAX, 0, fr.text.c_str()).x;
    if (dl) {
      dl->AddRectFilled(ImVec2(pos.x - 2, pos.y), ImVec2(pos.x + w + 2, pos.y + px * 1.1f), ink.code_bg, 3.0f);
      dl->AddText(f.mono, px, pos, ink.text, fr.text.c_str());
    }
    return w;
  }
  const ImU32 col = fr.style.bold ? ink.strong : ink.text;
  float x = pos.x;
  for (const MathRun& r : parse_math(fr.text)) {
    ImFont* font = r.level == 0 ? f.text : f.small;
    const float size = font->FontSize * scale;
    const float dy = r.level > 0 ? -0.12f * px : r.level < 0 ? 0.42f * px : 0.0f;
    const float w = font->CalcTextSizeA(size, FLT_MAX, 0, r.text.c_str()).x;
    if (dl) {
      const int first = dl->VtxBuffer.Size;
      dl->AddText(font, size, ImVec2(x, pos.y + dy), col, r.text.c_str());
      if (fr.style.bold) dl->AddText(font, size, ImVec2(x + std::max(1.0f, px / 22), pos.y + dy), col, r.text.c_str());
      if (fr.style.italic)  // slant what was just drawn about the baseline
        for (int v = first; v < dl->VtxBuffer.Size; ++v)
          dl->VtxBuffer[v].pos.x += (pos.y + px - dl->VtxBuffer[v].pos.y) * 0.2f;
    }
    x += w + (fr.style.bold ? std::max(1.0f, px / 22) : 0.0f);
  }
  return x - pos.x;
}

// Lays the blocks out in `width` from `o` (and draws them when dl is non-null); returns the height.
float flow(const Fonts& f, ImDrawList* dl, ImVec2 o, float width, float px, const std::vector<MdBlock>& blocks,
           const Ink& ink) {
  const float line_h = px * 1.32f, space = f.text->CalcTextSizeA(px, FLT_MAX, 0, " ").x;
  const float indent = px * 1.3f;
  float y = o.y;
  for (size_t b = 0; b < blocks.size(); ++b) {
    if (b > 0) y += blocks[b].item && blocks[b - 1].item ? px * 0.15f : px * 0.55f;
    const float x0 = o.x + (blocks[b].item ? indent : 0.0f);
    if (dl && blocks[b].item) dl->AddText(f.text, px, ImVec2(o.x + px * 0.35f, y), ink.strong, "•");
    float x = x0;
    for (const Word& w : words_of(blocks[b])) {
      float ww = 0;
      for (const Frag& fr : w) ww += frag(f, nullptr, {}, fr, px, ink);
      if (x > x0 && x + ww > o.x + width) {
        x = x0;
        y += line_h;
      }
      for (const Frag& fr : w) x += frag(f, dl, ImVec2(x, y), fr, px, ink);
      x += space;
    }
    y += line_h;
  }
  return y - o.y;
}

}  // namespace

float draw_caption(App& app, const Caption& c, bool& collapsed) {
  const ImGuiViewport* vp = ImGui::GetMainViewport();
  const Fonts& f = app.fonts;
  const float fs = ImGui::GetFontSize();
  // The note's type: large in the normal layout; presentation mode's fonts are already large
  // (22 px at its 28), and its views need the height.
  const bool pres = app.ui.presentation;
  const float px = std::round(fs * (pres ? 0.8f : 1.4f));
  const float margin = fs * (pres ? 0.4f : 0.8f), pad = fs * (pres ? 0.6f : 0.9f);
  const float status_h = app.status_bar_height();  // above a long notice too, never over it
  const float w = vp->WorkSize.x - 2 * margin;
  float inner = w - 2 * pad;
  const Ink ink{ImGui::GetColorU32(ImGuiCol_Text), accent_color(app.settings.dark), ImGui::GetColorU32(ImGuiCol_FrameBg)};
  const std::vector<MdBlock> blocks = parse_markdown(c.note);
  const std::vector<MdBlock> heading{{false, {{c.heading, true, false, false}}}};
  // The heading's line also holds the keys and the button that hides or shows the note.
  const char* keys = "PageUp ◂ ▸ PageDown";
  const bool show_note = !collapsed;  // as measured (the button may change `collapsed` below)
  const char* button = !show_note ? "▸ Show the note (F7)" : "▾ Hide the note (F7)";
  const float button_w = ImGui::CalcTextSize(button).x + 2 * ImGui::GetStyle().FramePadding.x;
  float head_w = 0, head_h = 0, note_h = 0, content_h = 0;
  auto measure = [&] {
    head_w = inner - ImGui::CalcTextSize(keys).x - button_w - 2 * fs;
    head_h = std::max(flow(f, nullptr, {}, head_w, px, heading, ink), ImGui::GetFrameHeight());
    note_h = !show_note ? 0.0f : px * 0.35f + flow(f, nullptr, {}, inner, px, blocks, ink);
    const float err_h = c.error.empty() || !show_note ? 0.0f : fs * 2.6f;
    content_h = head_h + note_h + err_h;
  };
  measure();
  // A note taller than a third of the screen scrolls: its scrollbar takes width from the text,
  // which is then laid out again in what is left (else its lines would run under the scrollbar).
  if (std::ceil(content_h + 2 * pad) + 1.0f > vp->Size.y / 3.0f) {
    inner -= ImGui::GetStyle().ScrollbarSize;
    measure();
  }
  // The height the text needs, up to a third of the screen (a longer note scrolls).
  // (A pixel more than the text: ImGui rounds the window's size, and a scrollbar must not appear
  // for want of a rounding.)
  const float h = std::min(std::ceil(content_h + 2 * pad) + 1.0f, vp->Size.y / 3.0f);
  ImGui::SetNextWindowPos(ImVec2(vp->WorkPos.x + margin, vp->WorkPos.y + vp->WorkSize.y - status_h - margin - h));
  ImGui::SetNextWindowSize(ImVec2(w, h));
  ImGui::SetNextWindowBgAlpha(0.92f);
  ImGui::PushStyleVar(ImGuiStyleVar_WindowPadding, ImVec2(pad, pad));
  ImGui::PushStyleVar(ImGuiStyleVar_WindowBorderSize, 2.0f);
  ImGui::PushStyleColor(ImGuiCol_Border, ink.strong);
  ImGui::Begin("##lesson-caption", nullptr,
               ImGuiWindowFlags_NoTitleBar | ImGuiWindowFlags_NoResize | ImGuiWindowFlags_NoMove |
                   ImGuiWindowFlags_NoSavedSettings | ImGuiWindowFlags_NoFocusOnAppearing | ImGuiWindowFlags_NoNav |
                   ImGuiWindowFlags_NoCollapse);
  ImGui::BringWindowToDisplayFront(ImGui::GetCurrentWindow());  // over the layout's windows
  ImDrawList* dl = ImGui::GetWindowDrawList();
  ImVec2 o = ImGui::GetCursorScreenPos();
  flow(f, dl, o, head_w, px, heading, ink);
  // At the right edge of the content (left of the scrollbar when a long note has one).
  const float right = ImGui::GetWindowPos().x + ImGui::GetWindowContentRegionMax().x;
  const ImVec2 ks = ImGui::CalcTextSize(keys);
  dl->AddText(ImVec2(right - button_w - fs - ks.x, o.y), ImGui::GetColorU32(ImGuiCol_TextDisabled), keys);
  ImGui::SetCursorScreenPos(ImVec2(right - button_w, o.y));
  if (ImGui::Button(button)) collapsed = !collapsed;
  ImGui::SetCursorScreenPos(o);
  ImGui::Dummy(ImVec2(inner, head_h + note_h));
  if (show_note) {
    flow(f, dl, ImVec2(o.x, o.y + head_h + px * 0.35f), inner, px, blocks, ink);
    if (!c.error.empty()) {
      ImGui::PushStyleColor(ImGuiCol_Text, ImVec4(1.0f, 0.42f, 0.36f, 1.0f));
      ImGui::TextWrapped("%s", c.error.c_str());
      ImGui::PopStyleColor();
    }
  }
  ImGui::End();
  ImGui::PopStyleColor();
  ImGui::PopStyleVar(2);
  return h + margin;
}

}  // namespace sf
