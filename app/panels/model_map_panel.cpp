#include "app/panels/model_map_panel.hpp"

#include <algorithm>
#include <nlohmann/json.hpp>

#include "app/app.hpp"
#include "app/logic/model_map.hpp"
#include "app/panels/panel.hpp"
#include "app/session.hpp"
#include "app/ui_probe.hpp"
#include "core/arch/architecture.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

ImU32 kind_fill(MapKind k, bool dark) {
  switch (k) {
    case MapKind::Attention: return dark ? IM_COL32(40, 70, 110, 255) : IM_COL32(205, 225, 250, 255);
    case MapKind::Head: return dark ? IM_COL32(70, 110, 160, 255) : IM_COL32(160, 195, 240, 255);
    case MapKind::Mlp: return dark ? IM_COL32(45, 95, 60, 255) : IM_COL32(205, 240, 210, 255);
    case MapKind::Norm:
    case MapKind::FinalNorm: return dark ? IM_COL32(85, 85, 85, 255) : IM_COL32(228, 228, 228, 255);
    case MapKind::Layer: return dark ? IM_COL32(55, 55, 70, 255) : IM_COL32(238, 238, 246, 255);
    default: return dark ? IM_COL32(95, 70, 40, 255) : IM_COL32(250, 232, 205, 255);
  }
}

// The lit box: the accent in a forward step; in a backward step (the adjoint listings) a red, so
// that the learner sees the gradient travel back up the stream.
ImU32 lit_fill(Pass p, bool dark) {
  if (p == Pass::Backward) return dark ? IM_COL32(200, 70, 60, 255) : IM_COL32(245, 150, 140, 255);
  return dark ? IM_COL32(200, 150, 30, 255) : IM_COL32(255, 205, 90, 255);
}

void arrow(ImDrawList* dl, ImVec2 a, ImVec2 b, ImU32 col, float F) {
  dl->AddLine(a, b, col, 1.5f);
  const ImVec2 d(b.x - a.x, b.y - a.y);
  const float n = std::sqrt(d.x * d.x + d.y * d.y);
  if (n < 1) return;
  const ImVec2 u(d.x / n, d.y / n), p(-u.y, u.x);
  const float s = F * 0.3f;
  dl->AddTriangleFilled(b, ImVec2(b.x - u.x * s + p.x * s * 0.6f, b.y - u.y * s + p.y * s * 0.6f),
                        ImVec2(b.x - u.x * s - p.x * s * 0.6f, b.y - u.y * s - p.y * s * 0.6f), col);
}

class ModelMapFeature : public Feature {
 public:
  const char* tab_panel() const override { return "modelmap"; }
  void draw_tab(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

 private:
  // Recomputes the map when the model or the width it must fit (in units of F) changes, the places when the trace does.
  void refresh(const Session& s, float fit_w);
  void draw_map(App& app);
  void draw_edges(ImDrawList* dl, ImVec2 o, float F, ImU32 ink) const;
  // Jumps the cursor to box b's first step; false with `error` when none of the trace's steps is in it.
  bool click(App& app, int b, std::string& error);
  ImRect screen_rect(int b) const;

  // What map_ was computed for; weak, so that a closed model (GPT-2: 500 MB) is not kept alive by the map.
  std::weak_ptr<const Model> model_;
  float fit_w_ = 0;  // the width map_ was fitted to, in units of F
  ModelMap map_;
  std::string map_error_;
  size_t trace_serial_ = SIZE_MAX;  // the trace (Session::trace_serial) places_ was computed for
  std::vector<MapPlace> places_;
  int lit_ = -1, last_lit_ = -1;
  Pass lit_pass_ = Pass::Forward;
  ImVec2 origin_{0, 0};
  float F_ = 17;
  ImGuiWindow* child_ = nullptr;
  size_t drawn_frame_ = SIZE_MAX;
  std::string notice_;
};

void ModelMapFeature::refresh(const Session& s, float fit_w) {
  if (model_.lock() != s.model_ptr() || fit_w != fit_w_) {
    model_ = s.model_ptr();
    fit_w_ = fit_w;
    map_error_.clear();
    try {
      map_ = model_map(s.model().config, fit_w);
    } catch (const std::exception& e) {
      map_ = {};
      map_error_ = e.what();
    }
    trace_serial_ = SIZE_MAX;
  }
  const Trace& t = s.trace();
  if (s.trace_serial() != trace_serial_) {
    trace_serial_ = s.trace_serial();
    places_ = map_places(t, s.arch().forward_algorithm());
  }
  lit_ = -1;
  if (s.cursor() < places_.size()) {
    lit_ = box_at(map_, places_[s.cursor()]);
    lit_pass_ = places_[s.cursor()].pass;
  }
}

bool ModelMapFeature::click(App& app, int b, std::string& error) {
  const size_t k = first_step_in(map_, places_, b);
  if (k == SIZE_MAX) {
    error = "no step of this trace is in " + map_.boxes[b].id +
            (map_.boxes[b].lines.empty() ? " (it is a junction: its value is computed by the box above it)"
                                         : " (this run does not execute it: e.g. a sampling run before its forward pass)");
    return false;
  }
  app.session.jump(k);
  return true;
}

ImRect ModelMapFeature::screen_rect(int b) const {
  const MapBox& x = map_.boxes[b];
  return ImRect(origin_.x + x.x * F_, origin_.y + x.y * F_, origin_.x + (x.x + x.w) * F_, origin_.y + (x.y + x.h) * F_);
}

void ModelMapFeature::draw_edges(ImDrawList* dl, ImVec2 o, float F, ImU32 ink) const {
  auto P = [&](float x, float y) { return ImVec2(o.x + x * F, o.y + y * F); };
  const float sx = map_.spine_x;
  for (const MapEdge& e : map_.edges) {
    const std::string text = e.name + ": " + e.shape;
    if (e.kind == EdgeKind::Sub) {
      const MapBox &a = map_.boxes[e.from], &b = map_.boxes[e.to];
      if (b.y > a.y) {  // a wrapped band: down from a, back left under it, into b's row from the left
        const float turn = a.y + a.h + 0.35f, lx = b.x - 0.7f;
        dl->AddLine(P(a.x + a.w / 2, a.y + a.h), P(a.x + a.w / 2, turn), ink, 1.5f);
        dl->AddLine(P(a.x + a.w / 2, turn), P(lx, turn), ink, 1.5f);
        dl->AddLine(P(lx, turn), P(lx, b.y + 0.8f), ink, 1.5f);
        arrow(dl, P(lx, b.y + 0.8f), P(b.x, b.y + 0.8f), ink, F);
      } else {
        arrow(dl, P(a.x + a.w, a.y + 0.8f), P(b.x, b.y + 0.8f), ink, F);
      }
    } else if (e.kind == EdgeKind::Cross) {
      // Z leaves the encoder to the bus on the right, runs down it, and enters each cross-attention from
      // above, along the gap over its band (no box lies there).
      const MapBox &a = map_.boxes[e.from], &b = map_.boxes[e.to];
      const float zy = a.y + a.h / 2, gy = b.y - 0.35f, cx = b.x + b.w / 2;
      if (&e == &*std::find_if(map_.edges.begin(), map_.edges.end(), [](const MapEdge& x) { return x.kind == EdgeKind::Cross; }))
        dl->AddText(P(map_.bus_x - ImGui::CalcTextSize(text.c_str()).x / F - 0.3f, zy - 1.3f), ink, text.c_str());
      dl->AddLine(P(a.x + a.w, zy), P(map_.bus_x, zy), ink, 1.5f);
      dl->AddLine(P(map_.bus_x, zy), P(map_.bus_x, gy), ink, 1.5f);
      dl->AddLine(P(map_.bus_x, gy), P(cx, gy), ink, 1.5f);
      arrow(dl, P(cx, gy), P(cx, b.y), ink, F);
    } else if (e.from < 0) {  // the input: tokens into the embedding
      const MapBox& b = map_.boxes[e.to];
      arrow(dl, P(sx, b.y - 1.4f), P(sx, b.y), ink, F);
      dl->AddText(P(sx + 0.4f, b.y - 1.5f), ink, text.c_str());
    } else if (e.to < 0) {  // the output P
      const MapBox& a = map_.boxes[e.from];
      arrow(dl, P(sx, a.y + a.h), P(sx, a.y + a.h + 1.4f), ink, F);
      dl->AddText(P(sx + 0.4f, a.y + a.h + 0.2f), ink, text.c_str());
    } else {  // the residual stream, on the spine
      const MapBox &a = map_.boxes[e.from], &b = map_.boxes[e.to];
      arrow(dl, P(sx, a.y + a.h), P(sx, b.y), ink, F);
      dl->AddText(P(sx + 0.4f, a.y + a.h + 0.2f), ink, text.c_str());
    }
  }
  for (const MapBox& b : map_.boxes)  // each band reads the stream: the spine through it, a branch to its first box
    if (b.kind == MapKind::Layer) {
      dl->AddLine(P(sx, b.y), P(sx, b.y + b.h), ink, 1.5f);
      dl->AddLine(P(sx, b.y + 0.8f), P(sx + 1.5f, b.y + 0.8f), ink, 1.5f);
    }
}

void ModelMapFeature::draw_map(App& app) {
  const bool dark = app.settings.dark;
  F_ = ImGui::GetFontSize();
  ImGui::BeginChild("##model_map", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  child_ = ImGui::GetCurrentWindow();
  origin_ = ImGui::GetCursorScreenPos();
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text);
  draw_edges(dl, origin_, F_, ink);
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  const bool hovered_window = ImGui::IsWindowHovered();
  int hovered = -1;
  for (int b = 0; b < static_cast<int>(map_.boxes.size()); ++b) {
    const MapBox& box = map_.boxes[b];
    const ImRect r = screen_rect(b);
    const bool lit = b == lit_ || (lit_ >= 0 && map_.boxes[lit_].parent == b);
    const ImU32 fill = b == lit_ ? lit_fill(lit_pass_, dark) : kind_fill(box.kind, dark);
    dl->AddRectFilled(r.Min, r.Max, fill, F_ * 0.2f);
    dl->AddRect(r.Min, r.Max, lit ? lit_fill(lit_pass_, dark) : ImGui::GetColorU32(ImGuiCol_Border), F_ * 0.2f, 0, lit ? 3.0f : 1.0f);
    const ImU32 text = ink_for(fill);
    if (!box.label.empty()) {
      const float tw = ImGui::CalcTextSize(box.label.c_str()).x;
      const float ty = box.kind == MapKind::Head ? r.Min.y + (r.GetHeight() - F_) / 2 : r.Min.y + F_ * 0.25f;
      dl->AddText(ImVec2(box.kind == MapKind::Head ? r.GetCenter().x - tw / 2 : r.Min.x + F_ * 0.5f, ty), text, box.label.c_str());
    }
    if (!box.mark.empty()) dl->AddText(ImVec2(r.Min.x + F_ * 0.5f, r.Min.y + F_ * 1.25f), box.mark_variant ? variant_color(dark) : text, box.mark.c_str());
    if (hovered_window && r.Contains(mouse) && (hovered < 0 || box.kind == MapKind::Head)) hovered = b;
  }
  if (hovered >= 0) {
    const size_t k = first_step_in(map_, places_, hovered);
    ImGui::BeginTooltip();
    ImGui::PushTextWrapPos(F_ * 30);
    ImGui::TextUnformatted(map_.boxes[hovered].tip.c_str());
    ImGui::TextDisabled(k == SIZE_MAX ? "No step of this trace is in it." : "Click: jump to its first step (step %zu).", k + 1);
    ImGui::PopTextWrapPos();
    ImGui::EndTooltip();
    if (ImGui::IsMouseClicked(ImGuiMouseButton_Left)) {
      std::string error;
      if (!click(app, hovered, error)) notice_ = error;
    }
  }
  // Keep the lit box in view when it changes (stepping through GPT-2's 12 layers scrolls along).
  if (lit_ != last_lit_ && lit_ >= 0) {
    const ImRect r = screen_rect(lit_);
    const ImRect clip = child_->InnerClipRect;
    if (r.Min.y < clip.Min.y || r.Max.y > clip.Max.y) ImGui::SetScrollFromPosY(r.GetCenter().y - ImGui::GetWindowPos().y, 0.5f);
    // Sideways only as far as needed, so that the spine and the layer labels stay in view where they can.
    if (r.Max.x > clip.Max.x) ImGui::SetScrollX(ImGui::GetScrollX() + (r.Max.x - clip.Max.x) + F_);
    else if (r.Min.x < clip.Min.x) ImGui::SetScrollX(ImGui::GetScrollX() - (clip.Min.x - r.Min.x) - F_);
  }
  last_lit_ = lit_;
  ImGui::Dummy(ImVec2(map_.w * F_, map_.h * F_));
  ImGui::EndChild();
}

// The width the map's child window gives its content, in units of F: the panel's, less the child's
// padding, border and a vertical scrollbar (kept in the sum so that the map does not reflow when it appears).
float fit_width() {
  const ImGuiStyle& st = ImGui::GetStyle();
  return (ImGui::GetContentRegionAvail().x - 2 * (st.WindowPadding.x + st.ChildBorderSize) - st.ScrollbarSize) / ImGui::GetFontSize();
}

void ModelMapFeature::draw_tab(App& app) {
  drawn_frame_ = app.ui.frame_index;
  const Session& s = app.session;
  refresh(s, fit_width());
  ImGui::PushTextWrapPos(0.0f);
  if (!map_error_.empty()) {
    ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "%s", map_error_.c_str());
    ImGui::PopTextWrapPos();
    return;
  }
  ImGui::TextUnformatted(map_.title.c_str());
  for (const MapBadge& b : map_.badges) {  // the variants, as chips
    ImGui::SameLine();
    if (ImGui::GetContentRegionAvail().x < ImGui::CalcTextSize(b.text.c_str()).x + ImGui::GetStyle().FramePadding.x * 2)
      ImGui::NewLine();
    ImGui::PushStyleColor(ImGuiCol_Text, b.variant ? variant_color(app.settings.dark) : ImGui::GetColorU32(ImGuiCol_Text));
    ImGui::SmallButton(b.text.c_str());
    ImGui::PopStyleColor();
    item_tooltip(b.variant ? "A variant: not the paper's choice for this architecture (docs/variants.md)."
                           : "The paper's choice for this architecture.");
  }
  if (lit_ >= 0)
    ImGui::TextDisabled("Step %zu%s is in %s. Click a box to jump to its first step.", s.cursor() + 1,
                        lit_pass_ == Pass::Backward ? " (backward: the gradient flows back up)" : "",
                        map_.boxes[lit_].id.c_str());
  else
    ImGui::TextDisabled("Step %zu is outside the model's layers (e.g. a training or sampling line). Click a box to jump to "
                        "its first step.", s.cursor() + 1);
  if (!notice_.empty()) ImGui::TextColored(ImVec4(1, 0.55f, 0.4f, 1), "%s", notice_.c_str());
  ImGui::PopTextWrapPos();
  draw_map(app);
}

ActionResult ModelMapFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb != "map-click") return ActionResult::NotMine;
  refresh(app.session, fit_w_);
  const int b = map_.find(arg);
  if (b < 0) {
    error = "map-click needs a box id of the model map (e.g. l1.attn, l1.attn.h2, unemb; --dump-state's model_map lists them)";
    return ActionResult::Failed;
  }
  app.ui.show.modelmap = true;
  return click(app, b, error) ? ActionResult::Done : ActionResult::Failed;
}

void ModelMapFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  nlohmann::ordered_json m;
  m["drawn"] = drawn_frame_ == app.ui.frame_index;
  m["error"] = map_error_;
  m["title"] = map_.title;
  m["lit"] = lit_ >= 0 ? map_.boxes[lit_].id : "";
  m["lit_pass"] = lit_pass_ == Pass::Backward ? "backward" : "forward";
  m["font_px"] = F_;
  m["head_rows"] = map_.head_rows;
  m["wrapped"] = map_.wrapped;
  const bool drawn = drawn_frame_ == app.ui.frame_index && child_;
  // The child's visible content (the boxes must lie inside it across) and the map's whole extent, bus included.
  const ImRect view = drawn ? child_->InnerClipRect : ImRect();
  m["view"] = {view.Min.x, view.Min.y, view.GetWidth(), view.GetHeight()};
  m["extent"] = {origin_.x, origin_.y, map_.w * F_, map_.h * F_};
  nlohmann::ordered_json badges = nlohmann::ordered_json::array();
  for (const MapBadge& b : map_.badges) badges.push_back(b.text);
  m["badges"] = badges;
  nlohmann::ordered_json boxes = nlohmann::ordered_json::array();
  for (int b = 0; b < static_cast<int>(map_.boxes.size()); ++b) {
    const ImRect r = screen_rect(b);
    const MapBox& x = map_.boxes[b];
    boxes.push_back({{"id", x.id}, {"kind", to_string(x.kind)}, {"label", x.label},
                     {"rect", {r.Min.x, r.Min.y, r.GetWidth(), r.GetHeight()}},
                     {"visible", drawn && ui_probe::fully_visible(child_, r)}});
  }
  m["boxes"] = boxes;
  j["model_map"] = m;
}

}  // namespace

std::unique_ptr<Feature> make_model_map_feature() { return std::make_unique<ModelMapFeature>(); }

}  // namespace sf
