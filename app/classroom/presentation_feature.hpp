// Presentation mode (View › Presentation, F6; Esc leaves it): fonts at projector size, the
// high-contrast theme and the colour-blind-safe palette, only the panels of the current lesson
// stop (no lesson: the pseudocode and the tensor view) laid out large (App::layout_windows), and
// the mouse pointer ringed. Leaving it restores the user's font size, theme and palette.
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app/feature.hpp"

namespace sf {

class App;

class PresentationFeature : public Feature {
 public:
  void view_menu(App& app) override;
  void shortcuts(App& app) override;
  void overlay(App& app) override;
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override;
  void dump(const App& app, nlohmann::ordered_json& j) const override;

  void set(App& app, bool on);

 private:
  // The user's settings while presentation mode is on.
  float font_px_ = 17;
  bool high_contrast_ = false, colorblind_ = false;
};

// The panels presentation mode shows (PanelVisibility names): the current lesson stop's, or the
// panel registry's in_presentation ones (the pseudocode and the tensor view) when no stop is shown.
std::vector<std::string> presentation_panels(const App& app);

std::unique_ptr<Feature> make_presentation_feature();

}  // namespace sf
