#include "app/panel_registry.hpp"

#include <string>

#include "app/feature.hpp"
#include "app/panels/all_panels.hpp"

namespace sf {

namespace {

// The Inspector tab of the classroom feature that owns the panel (Feature::tab_panel).
void draw_feature_tab(App& app, const PanelDecl& d) {
  for (const auto& f : app.features)
    if (const char* p = f->tab_panel(); p && std::string(p) == d.name) f->draw_tab(app);
}

// A panel of App::Panels: its draw(App&).
template <auto member>
void draw_panel(App& app, const PanelDecl&) {
  (app.panels.get()->*member).draw(app);
}

using P = App::Panels;
using V = PanelVisibility;
constexpr std::optional<OutputKind> any = std::nullopt;

}  // namespace

const std::vector<PanelDecl>& panel_registry() {
  // name, title, dock, in View, output, presentation default, focus replaces, flag, draw
  static const std::vector<PanelDecl> r{
      {"pseudocode", "Pseudocode", Dock::Tile, true, any, true, false, &V::pseudocode, draw_panel<&P::pseudocode>},
      {"callstack", "Call stack", Dock::Tile, true, any, false, false, &V::callstack, draw_panel<&P::callstack>},
      {"variables", "Variables", Dock::Tile, true, any, false, false, &V::variables, draw_panel<&P::variables>},
      {"tensor", "Tensor", Dock::Inspector, true, any, true, true, &V::tensor, draw_panel<&P::tensor>},
      {"attention", "Attention", Dock::Inspector, true, any, false, true, &V::attention, draw_panel<&P::attention>},
      {"layernorm", "LayerNorm", Dock::Inspector, true, any, false, true, &V::layernorm, draw_panel<&P::layernorm>},
      {"sampling", "Sampling", Dock::Inspector, true, OutputKind::Continuation, false, false, &V::sampling,
       draw_panel<&P::sampling>},
      {"fillin", "Fill-in", Dock::Inspector, true, OutputKind::FillIn, false, false, &V::fillin, draw_panel<&P::fillin>},
      {"translation", "Translation", Dock::Inspector, true, OutputKind::Translation, false, false, &V::translation,
       draw_panel<&P::translation>},
      {"tokenizer", "Tokenizer", Dock::Inspector, true, any, false, false, &V::tokenizer, draw_panel<&P::tokenizer>},
      {"notation", "Notations", Dock::Inspector, true, any, false, false, &V::notation, draw_panel<&P::notation>},
      {"training", "Training", Dock::Inspector, true, any, false, false, &V::training, draw_panel<&P::training>},
      {"gpu", "GPU", Dock::Inspector, true, any, false, false, &V::gpu, draw_panel<&P::gpu>},
      {"experiments", "Experiments", Dock::Inspector, true, any, false, false, &V::experiments, draw_feature_tab},
      {"study", "Study", Dock::Inspector, true, any, false, false, &V::study, draw_feature_tab},
      {"gradflow", "Gradient flow", Dock::Inspector, true, any, false, false, &V::gradflow, draw_feature_tab},
      {"modelmap", "Model map", Dock::Inspector, true, any, false, false, &V::modelmap, draw_feature_tab},
      {"headview", "Head view", Dock::Inspector, true, any, false, false, &V::headview, draw_feature_tab},
      {"vision", "Vision", Dock::Inspector, true, OutputKind::Classification, false, false, &V::vision, draw_feature_tab},
      {"lens", "Logit lens", Dock::Inspector, true, any, false, false, &V::lens, draw_feature_tab},
      {"files", "Open a checkpoint or a model folder", Dock::Floating, false, any, false, false, &V::files, draw_panel<&P::files>},
      {"about", "About Stepformer", Dock::Floating, false, any, false, false, &V::about, draw_panel<&P::about>},
      {"builder", "New model", Dock::Floating, false, any, false, false, &V::builder, draw_panel<&P::builder>},
      {"errata", "Errata of the seeds", Dock::Floating, false, any, false, false, &V::errata, draw_panel<&P::errata>},
      {"lesson", "Lesson stops", Dock::Feature, false, any, false, false, &V::lesson, nullptr},
  };
  return r;
}

const PanelDecl* find_panel(const std::string& name) {
  for (const PanelDecl& d : panel_registry())
    if (name == d.name) return &d;
  return nullptr;
}

}  // namespace sf
