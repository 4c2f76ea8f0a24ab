#include "app/panels/vision_panel.hpp"

#include <algorithm>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <tuple>

#include "app/app.hpp"
#include "app/logic/session_actions.hpp"
#include "app/logic/vision.hpp"
#include "app/panels/panel.hpp"
#include "app/panels/vision_canvas.hpp"
#include "app/widgets/flow.hpp"
#include "app/session.hpp"
#include "app/ui_probe.hpp"
#include "core/arch/vit.hpp"

namespace sf {

namespace {

const char* const kNotInPaper =
    "Not in the paper: vision transformer (Dosovitskiy et al.). Algorithm 9 on the image's p×p patches, a class "
    "token first; line 2 reads W_patch instead of W_e (docs/vision.md).";

class VisionFeature : public Feature {
 public:
  const char* tab_panel() const override { return "vision"; }
  void draw_tab(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;
  // A vit just opened: its tab comes to the front (its input is chosen there). The last frame's model
  // is held weakly: a freed Model's address may be reused, but lock() of an expired one is null.
  void overlay(App& app) override {
    const std::shared_ptr<const Model> now = app.session.model_ptr();
    if (now != shown_model_.lock() && app.session.reads_image()) app.ui.show.vision = true;
    shown_model_ = now;
  }

 private:
  const VisionReadout& readout(const Session& s) const;
  std::string weights_of() const;
  void picker(App& app);
  void controls(const App& app);

  int layer_ = 1, head_ = 0;  // head 0: the mean over the heads
  bool overlay_ = true;
  std::string message_;       // the last picker error
  mutable std::optional<std::tuple<size_t, int, int>> key_;  // (trace serial, layer, head) of readout_
  mutable VisionReadout readout_;
  ImRect canvas_;             // the image's rectangle, last frame
  ImGuiWindow* window_ = nullptr;
  std::weak_ptr<const Model> shown_model_;  // the model of the last frame
  size_t drawn_frame_ = SIZE_MAX;
};

const VisionReadout& VisionFeature::readout(const Session& s) const {
  const std::tuple<size_t, int, int> key{s.trace_serial(), layer_, head_};
  if (key_ != key) {
    readout_ = vision_readout(s.trace(), layer_, head_);
    key_ = key;
  }
  return readout_;
}

std::string VisionFeature::weights_of() const {
  return "softmax(S/√d_attn)[:, 1], Algorithm 4 line 6, layer " + std::to_string(layer_) +
         (head_ == 0 ? ", the mean over the heads" : ", head " + std::to_string(head_));
}

void VisionFeature::picker(App& app) {
  Session& s = app.session;
  const VisionInput& v = s.vision();
  const int count = v.test_count();
  std::string error;
  if (count == 0) {
    ImGui::TextWrapped("The test digits cannot be read (%s): draw a digit on the grid below.", v.data_error().c_str());
  } else {
    int n = std::max(1, v.test_index());
    if (ImGui::ArrowButton("##prev", ImGuiDir_Left) && !s.select_test_digit(std::max(1, n - 1), error)) message_ = error;
    ImGui::SameLine();
    ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
    if (ImGui::InputInt("##digit", &n, 0, 0, ImGuiInputTextFlags_EnterReturnsTrue) && !s.select_test_digit(n, error))
      message_ = error;
    ImGui::SameLine();
    if (ImGui::ArrowButton("##next", ImGuiDir_Right) && !s.select_test_digit(std::min(count, n + 1), error)) message_ = error;
    same_line_if_fits(button_width("Next misclassified"));
    if (ImGui::Button("Next misclassified")) {
      const int m = next_misclassified(s.model(), v, v.test_index());
      if (m == 0 || !s.select_test_digit(m, error)) message_ = m == 0 ? "no misclassified test digit after this one" : error;
    }
  }
  if (count > 0) same_line_if_fits(button_width("Clear"));
  if (ImGui::Button("Clear")) s.clear_image();
  item_tooltip("A blank image to draw on: left button paints a pixel (16), right button erases it (0).");
  if (v.test_index() > 0)
    ImGui::TextWrapped("Test digit %d of %d, true class %d (held out: the last 360 images of the digits file)",
                       v.test_index(), count, v.true_class());
  else
    ImGui::TextUnformatted("Drawn by hand (no true class)");
  if (!message_.empty()) ImGui::TextColored(ImVec4(1, 0.4f, 0.3f, 1), "%s", message_.c_str());
}

void VisionFeature::controls(const App& app) {
  const ModelConfig& c = app.session.model().config;
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 7);
  ImGui::SliderInt("layer l", &layer_, 1, std::max(1, c.L));
  same_line_if_fits(ImGui::GetFontSize() * 6 + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("head").x);
  ImGui::SetNextItemWidth(ImGui::GetFontSize() * 6);
  const std::string now = head_ == 0 ? "mean" : "h = " + std::to_string(head_);
  if (ImGui::BeginCombo("head", now.c_str())) {
    if (ImGui::Selectable("mean over heads", head_ == 0)) head_ = 0;
    for (int h = 1; h <= c.H; ++h)
      if (ImGui::Selectable(("h = " + std::to_string(h)).c_str(), head_ == h)) head_ = h;
    ImGui::EndCombo();
  }
  same_line_if_fits(ImGui::GetFrameHeight() + ImGui::GetStyle().ItemInnerSpacing.x + ImGui::CalcTextSize("overlay").x);
  ImGui::Checkbox("overlay", &overlay_);
}

void VisionFeature::draw_tab(App& app) {
  Session& s = app.session;
  if (!s.reads_image()) {
    ImGui::TextWrapped("The Vision tab is for a vision transformer (arch \"vit\"), e.g. assets/vit-digits.safetensors.");
    return;
  }
  window_ = ImGui::GetCurrentWindow();
  ImGui::PushStyleColor(ImGuiCol_Text, ImGui::GetColorU32(ImGuiCol_TextDisabled));
  ImGui::TextWrapped("%s", kNotInPaper);
  ImGui::PopStyleColor();
  picker(app);
  controls(app);
  const VisionReadout& r = readout(s);
  if (!r.error.empty()) {
    ImGui::TextWrapped("%s", r.error.c_str());
    return;
  }
  const float avail_w = ImGui::GetContentRegionAvail().x, avail_h = ImGui::GetContentRegionAvail().y;
  const float side = std::clamp(std::min(avail_w * 0.5f, avail_h - ImGui::GetFrameHeight()), ImGui::GetFontSize() * 8,
                                ImGui::GetFontSize() * 24);
  ImGui::BeginGroup();
  const CanvasResult cr = draw_image_canvas(app, s.vision().pixels(), s.model().config.patch, r, overlay_, weights_of(), side);
  ImGui::EndGroup();
  canvas_ = cr.rect;
  std::string error;
  if (cr.value >= 0 && !s.set_pixel(cr.row, cr.col, cr.value, error)) message_ = error;
  ImGui::SameLine();
  ImGui::BeginGroup();
  ImGui::TextWrapped("P[:, 1]: class %d (Algorithm 9 line 12, the class token's column)", r.predicted);
  draw_class_bars(app, r, s.model().config.vocab, s.vision().true_class());
  ImGui::EndGroup();
  drawn_frame_ = app.ui.frame_index;
}

ActionResult VisionFeature::action(App& app, const std::string& verb, const std::string& arg, std::string& error) {
  if (verb != "vision-layer" && verb != "vision-head") return ActionResult::NotMine;
  const ModelConfig& c = app.session.model().config;
  std::vector<int> v;
  if (verb == "vision-head" && arg == "mean") {
    head_ = 0;
  } else if (!action_ints(arg, v) || v.size() != 1 || v[0] < 1 || v[0] > (verb == "vision-layer" ? c.L : c.H)) {
    error = verb == "vision-layer" ? "vision-layer needs L, a layer 1 … " + std::to_string(c.L)
                                   : "vision-head needs H, a head 1 … " + std::to_string(c.H) + ", or mean";
    return ActionResult::Failed;
  } else {
    (verb == "vision-layer" ? layer_ : head_) = v[0];
  }
  app.ui.show.vision = true;
  return ActionResult::Done;
}

void VisionFeature::dump(const App& app, nlohmann::ordered_json& j) const {
  const Session& s = app.session;
  if (!s.reads_image()) return;
  const VisionReadout& r = readout(s);
  nlohmann::ordered_json v;
  v["image"] = s.vision().pixels();
  v["test_index"] = s.vision().test_index();
  v["true_class"] = s.vision().true_class();
  v["P"] = r.P;
  v["predicted"] = r.predicted;
  v["layer"] = layer_;
  v["head"] = head_ == 0 ? nlohmann::ordered_json("mean") : nlohmann::ordered_json(head_);
  v["weights"] = r.weights;
  v["error"] = r.error;
  const bool drawn = drawn_frame_ == app.ui.frame_index;
  v["drawn"] = drawn;
  v["canvas"] = {canvas_.Min.x, canvas_.Min.y, canvas_.Max.x, canvas_.Max.y};
  v["canvas_visible"] = drawn && window_ && ui_probe::fully_visible(window_, canvas_);
  j["vision"] = std::move(v);
}

}  // namespace

std::unique_ptr<Feature> make_vision_feature() { return std::make_unique<VisionFeature>(); }

}  // namespace sf
