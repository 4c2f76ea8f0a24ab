#include "app/panels/head_view_panel.hpp"

#include <algorithm>
#include <optional>
#include <nlohmann/json.hpp>
#include <sstream>

#include "app/app.hpp"
#include "app/attention_calls.hpp"
#include "app/export/export_targets.hpp"
#include "app/logic/figure_export.hpp"
#include "app/logic/head_view_figure.hpp"
#include "app/panels/panel.hpp"
#include "app/session.hpp"
#include "app/widgets/heatmap.hpp"
#include "core/arch/vit.hpp"
#include "imgui.h"
#include "imgui_internal.h"

namespace sf {

namespace {

ImU32 im(Rgb8 c, float a) { return IM_COL32(c.r, c.g, c.b, static_cast<int>(std::lround(std::clamp(a, 0.0f, 1.0f) * 255))); }

class HeadViewFeature : public Feature {
 public:
  const char* tab_panel() const override { return "headview"; }
  void draw_tab(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

 private:
  void refresh(const App& app);
  void follow_cursor(const Session& s);
  void controls(const App& app);
  void draw_view(App& app);
  void export_to(App& app, const std::string& format, const std::string& path);
  int layers_of(int group) const;
  std::string caption(const App& app) const;

  size_t trace_serial_ = SIZE_MAX, cursor_ = SIZE_MAX;  // the trace (Session::trace_serial) calls_ are of
  std::vector<HeadCall> calls_;
  std::vector<AttentionGroup> groups_;
  int group_ = 0, layer_ = 1, step_ = 0;
  std::vector<int> heads_;  // empty: all
  HeadView view_;
  // What view_ was built from: it is rebuilt only when one of these changes, not every frame (a
  // GPT-2 trace's layer holds H·ℓ² weights).
  struct ViewKey {
    size_t serial;
    int group, layer, step;
    std::vector<int> heads;
    bool operator==(const ViewKey&) const = default;
  };
  std::optional<ViewKey> view_key_;
  HeadViewHover hover_;
  struct TokenRect {
    HeadViewSide side;
    int t;
    float x, y, w, h;
  };
  std::vector<TokenRect> token_rects_;
  float row_ = 0;  // the token rows' spacing, in pixels
  ImGuiWindow* child_ = nullptr;
  size_t drawn_frame_ = SIZE_MAX;
};

int HeadViewFeature::layers_of(int group) const {
  int L = 0;
  if (group < static_cast<int>(groups_.size()))
    for (const HeadCall& c : calls_)
      if (c.caller_alg == groups_[group].alg && c.caller_line == groups_[group].line) L = std::max(L, c.idx.l);
  return L;
}

// While the cursor is inside an attention line, the view shows that line's layer (and the
// generation step i in force).
void HeadViewFeature::follow_cursor(const Session& s) {
  if (s.cursor() == cursor_) return;
  cursor_ = s.cursor();
  const Trace& t = s.trace();
  if (cursor_ >= t.size()) return;
  const Event& e = t.events[cursor_];
  for (size_t k : t.call_stack(cursor_))
    for (size_t g = 0; g < groups_.size(); ++g)
      if (t.events[k].alg == groups_[g].alg && t.events[k].line == groups_[g].line && e.idx.l > 0) {
        group_ = static_cast<int>(g), layer_ = e.idx.l, step_ = e.idx.i;
        return;
      }
}

void HeadViewFeature::refresh(const App& app) {
  const Session& s = app.session;
  const Trace& t = s.trace();
  if (s.trace_serial() != trace_serial_) {
    trace_serial_ = s.trace_serial();
    calls_ = head_calls(t);
    groups_ = attention_groups(calls_, s.model().config);
    group_ = std::min(group_, std::max(0, static_cast<int>(groups_.size()) - 1));
    cursor_ = SIZE_MAX;
  }
  follow_cursor(s);
  if (groups_.empty()) {
    view_ = {};
    view_.missing = "This trace has no attention calls yet: step into the forward pass (Run › Step into).";
    view_key_.reset();
    return;
  }
  layer_ = std::clamp(layer_, 1, std::max(1, layers_of(group_)));
  ViewKey key{trace_serial_, group_, layer_, step_, heads_};
  if (view_key_ == key) return;
  view_key_ = std::move(key);
  const Tokenizer& tok = s.tokenizer();
  view_ = head_view(t, calls_, groups_[group_], layer_, heads_, s.model().config.H, step_,
                    [&tok](int id) { return token_label(tok, id); });
  if (s.reads_image() && !view_.heads.empty()) {  // a vit (not in the paper): the class token and the patches
    HeatmapAxis tokens;  // the labels every token axis gives them
    label_token_axis(app, nullptr, vit_tokens(s.model().config.patch), tokens);
    view_.keys = view_.queries = tokens.labels;
  }
}

std::string HeadViewFeature::caption(const App& app) const {
  std::string heads = "all heads";
  if (!heads_.empty()) {
    heads = heads_.size() == 1 ? "head" : "heads";
    for (size_t i = 0; i < heads_.size(); ++i) heads += (i ? ", " : " ") + std::to_string(heads_[i]);
  }
  return "softmax(S/√d_attn), " + view_.title + ", " + heads + ", Algorithm 4 line 6, prompt '" + app.session.prompt() + "'";
}

void HeadViewFeature::controls(const App& app) {
  const int H = app.session.model().config.H;
  if (groups_.size() > 1) {
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 18);
    if (ImGui::BeginCombo("##group", groups_[group_].title.c_str())) {
      for (size_t g = 0; g < groups_.size(); ++g)
        if (ImGui::Selectable(groups_[g].title.c_str(), static_cast<int>(g) == group_)) group_ = static_cast<int>(g);
      ImGui::EndCombo();
    }
  } else {
    ImGui::TextUnformatted(groups_[group_].title.c_str());
  }
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 8);
  ImGui::SliderInt("layer l", &layer_, 1, std::max(1, layers_of(group_)));
  ImGui::SameLine();
  bool all = heads_.empty();
  if (ImGui::Checkbox("all heads", &all)) heads_.clear();
  if (!all || H <= 16)
    for (int h = 1; h <= H; ++h) {
      const bool on = heads_.empty() || std::find(heads_.begin(), heads_.end(), h) != heads_.end();
      if (ImGui::GetContentRegionAvail().x > ImGui::GetFontSize() * 3.5f) ImGui::SameLine();
      const ImU32 bg = im(head_color(h), on ? 1.0f : 0.3f);  // the head's colour, faded when it is off
      ImGui::PushStyleColor(ImGuiCol_Button, bg);
      ImGui::PushStyleColor(ImGuiCol_Text, on ? ink_for(bg) : ImGui::GetColorU32(ImGuiCol_TextDisabled));
      if (ImGui::SmallButton(("h" + std::to_string(h)).c_str())) {  // toggles head h (from "all": only h)
        if (heads_.empty()) heads_ = {h};
        else if (on) heads_.erase(std::find(heads_.begin(), heads_.end(), h));
        else heads_.push_back(h), std::sort(heads_.begin(), heads_.end());
        if (static_cast<int>(heads_.size()) == H) heads_.clear();
      }
      ImGui::PopStyleColor(2);
    }
  ImGui::PushTextWrapPos(0.0f);
  ImGui::TextDisabled("%s. Lines: opacity = the weight; a masked pair (weight 0) has none. Hover a token: only its lines.",
                      groups_[group_].mask_text.c_str());
  ImGui::PopTextWrapPos();
}

void HeadViewFeature::draw_view(App& app) {
  ImGui::BeginChild("##head_view", ImVec2(0, 0), true, ImGuiWindowFlags_HorizontalScrollbar);
  child_ = ImGui::GetCurrentWindow();
  const float F = ImGui::GetFontSize();
  const ImVec2 o = ImGui::GetCursorScreenPos();
  // The token rows fill the panel's height below the columns' titles, the first at the top and the
  // last at the bottom (a short prompt spreads out, so that the lines' slopes are told apart), at
  // least 1.5 F apart: a long prompt scrolls. (1 px less, so that rounding never adds a scrollbar.)
  const size_t n = std::max(view_.keys.size(), view_.queries.size());
  const float fill = ImGui::GetContentRegionAvail().y - F * 1.8f - F - 1.0f;
  const float row = n > 1 ? std::max(F * 1.5f, fill / static_cast<float>(n - 1)) : F * 1.5f;
  float left_w = ImGui::CalcTextSize(view_.cross ? "keys: z" : "keys: x").x, right_w = ImGui::CalcTextSize("queries: x").x;
  for (const std::string& s : view_.keys) left_w = std::max(left_w, ImGui::CalcTextSize(s.c_str()).x);
  for (const std::string& s : view_.queries) right_w = std::max(right_w, ImGui::CalcTextSize(s.c_str()).x);
  // As wide as the panel allows, up to 16 F: wider, the lines flatten and their crossings blur together.
  const float gap = std::clamp(ImGui::GetContentRegionAvail().x - left_w - right_w - F * 3, F * 8, F * 16);
  const float lx = o.x + F * 0.5f + left_w, rx = lx + gap;
  ImDrawList* dl = ImGui::GetWindowDrawList();
  const ImU32 ink = ImGui::GetColorU32(ImGuiCol_Text), dim = ImGui::GetColorU32(ImGuiCol_TextDisabled);
  dl->AddText(ImVec2(lx - ImGui::CalcTextSize(view_.cross ? "keys: z" : "keys: x").x, o.y), dim, view_.cross ? "keys: z" : "keys: x");
  dl->AddText(ImVec2(rx, o.y), dim, "queries: x");
  const float top = o.y + F * 1.8f;
  row_ = row;
  // The hovered token (the real pointer, this frame), then the lines it leaves.
  token_rects_.clear();
  const ImVec2 mouse = ImGui::GetIO().MousePos;
  hover_ = {};
  auto column = [&](const std::vector<std::string>& labels, HeadViewSide side) {
    for (size_t i = 0; i < labels.size(); ++i) {
      const float w = ImGui::CalcTextSize(labels[i].c_str()).x;
      const ImVec2 p(side == HeadViewSide::Key ? lx - w : rx, top + i * row);
      token_rects_.push_back({side, static_cast<int>(i) + 1, p.x, p.y, w, F});  // the label's own height, at the row's top
      if (ImGui::IsWindowHovered() && mouse.x >= p.x - F * 0.3f && mouse.x <= p.x + w + F * 0.3f && mouse.y >= p.y &&
          mouse.y < p.y + row)
        hover_ = {side, static_cast<int>(i) + 1};
    }
  };
  column(view_.keys, HeadViewSide::Key);
  column(view_.queries, HeadViewSide::Query);
  for (const TokenRect& r : token_rects_) {
    const std::vector<std::string>& labels = r.side == HeadViewSide::Key ? view_.keys : view_.queries;
    const bool on = hover_.side == HeadViewSide::None || (hover_.side == r.side && hover_.t == r.t);
    dl->AddText(ImVec2(r.x, r.y), on ? ink : dim, labels[r.t - 1].c_str());
  }
  for (const HeadViewLine& l : visible_lines(view_, hover_))
    dl->AddLine(ImVec2(lx + F * 0.4f, top + (l.t_z - 1) * row + F * 0.55f), ImVec2(rx - F * 0.4f, top + (l.t_x - 1) * row + F * 0.55f),
                im(head_color(l.head), static_cast<float>(l.weight)), 2.0f);
  ImGui::Dummy(ImVec2(rx - o.x + right_w + F, top - o.y + (n > 0 ? (n - 1) * row : 0) + F));
  if (ImGui::BeginPopupContextWindow("##head_view_menu")) {
    for (const char* f : {"png", "svg"})
      if (ImGui::MenuItem((std::string("Export as ") + (f[0] == 'p' ? "PNG" : "SVG") + " figure").c_str()))
        export_to(app, f, file_stem(caption(app)) + "_head_view." + f);
    ImGui::EndPopup();
  }
  ImGui::EndChild();
}

void HeadViewFeature::export_to(App& app, const std::string& format, const std::string& path) {
  std::string error = check_export_path(path);
  if (error.empty()) try {
      export_head_view(format, path, view_, caption(app));
    } catch (const std::exception& e) {
      error = e.what();
    }
  if (error.empty()) app.notify("Exported " + path);
  else app.notify("Export failed: " + error, true);
}

void HeadViewFeature::draw_tab(App& app) {
  drawn_frame_ = app.ui.frame_index;
  refresh(app);
  if (groups_.empty()) {
    ImGui::TextWrapped("%s", view_.missing.c_str());
    return;
  }
  controls(app);
  if (!view_.missing.empty()) {
    ImGui::TextWrapped("%s", view_.missing.c_str());
    return;
  }
  draw_view(app);
}

ActionResult HeadViewFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb != "head-view" && verb != "head-view-group" && verb != "head-view-export") return ActionResult::NotMine;
  app.ui.show.headview = true;
  refresh(app);
  if (verb == "head-view") {  // LAYER[:H+H…]
    const size_t c = arg.find(':');
    std::vector<int> heads;
    std::istringstream hs(c == std::string::npos ? "" : arg.substr(c + 1));
    for (std::string h; std::getline(hs, h, '+');) heads.push_back(std::atoi(h.c_str()));  // '+': a comma ends the action
    const int l = std::atoi(arg.substr(0, c).c_str()), H = app.session.model().config.H;
    if (l < 1 || l > layers_of(group_) || std::any_of(heads.begin(), heads.end(), [H](int h) { return h < 1 || h > H; }))
      return error = "head-view needs LAYER[:H+H…] with a traced layer (1 … " + std::to_string(layers_of(group_)) +
                     ") and heads in 1 … " + std::to_string(H),
             ActionResult::Failed;
    layer_ = l, heads_ = heads;
    return ActionResult::Done;
  }
  if (verb == "head-view-group") {  // ALG:LINE of the transformer line that calls MHAttention
    for (size_t g = 0; g < groups_.size(); ++g)
      if (arg == std::to_string(groups_[g].alg) + ":" + std::to_string(groups_[g].line)) {
        group_ = static_cast<int>(g);
        return ActionResult::Done;
      }
    return error = "head-view-group needs ALG:LINE of a traced attention line (e.g. 8:16, the cross-attention)", ActionResult::Failed;
  }
  const size_t c = arg.find(':');  // head-view-export:png|svg:FILE
  const std::string format = arg.substr(0, c), path = c == std::string::npos ? "" : arg.substr(c + 1);
  if ((format != "png" && format != "svg") || path.empty())
    return error = "head-view-export needs png|svg:FILE", ActionResult::Failed;
  if (!view_.missing.empty()) return error = view_.missing, ActionResult::Failed;
  export_to(app, format, path);
  return ActionResult::Done;
}

void HeadViewFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  nlohmann::ordered_json v;
  v["drawn"] = drawn_frame_ == app.ui.frame_index;
  v["title"] = view_.title;
  v["missing"] = view_.missing;
  v["alg"] = view_.alg, v["line"] = view_.line, v["layer"] = view_.layer, v["cross"] = view_.cross;
  v["heads"] = view_.heads;
  v["keys"] = view_.keys;
  v["queries"] = view_.queries;
  v["hover"] = {{"side", hover_.side == HeadViewSide::Key ? "key" : hover_.side == HeadViewSide::Query ? "query" : "none"},
                {"t", hover_.t}};
  nlohmann::ordered_json lines = nlohmann::ordered_json::array();
  for (const HeadViewLine& l : visible_lines(view_, hover_)) lines.push_back({l.head, l.t_z, l.t_x, l.weight});
  v["lines_shown"] = lines;  // [h, t_z, t_x, weight]
  nlohmann::ordered_json tokens = nlohmann::ordered_json::array();
  for (const TokenRect& r : token_rects_)
    tokens.push_back({{"side", r.side == HeadViewSide::Key ? "key" : "query"}, {"t", r.t}, {"rect", {r.x, r.y, r.w, r.h}}});
  v["tokens"] = tokens;
  v["row_px"] = row_;
  // The child the view draws in: its visible content rectangle (the token rows span most of its height).
  const ImRect view = drawn_frame_ == app.ui.frame_index && child_ ? child_->InnerClipRect : ImRect();
  v["view"] = {view.Min.x, view.Min.y, view.GetWidth(), view.GetHeight()};
  j["head_view"] = v;
}

}  // namespace

std::unique_ptr<Feature> make_head_view_feature() { return std::make_unique<HeadViewFeature>(); }

}  // namespace sf
