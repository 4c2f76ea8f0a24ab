#include "app/panels/logit_lens_feature.hpp"

#include <nlohmann/json.hpp>
#include <string>

#include "app/app.hpp"
#include "app/panels/logit_lens_view.hpp"
#include "app/panels/panel.hpp"

namespace sf {

namespace {

const char* kind_name(DlaPart::Kind k) {
  switch (k) {
    case DlaPart::Kind::Embedding: return "embedding";
    case DlaPart::Kind::Head: return "head";
    case DlaPart::Kind::AttentionBias: return "b_o";
    case DlaPart::Kind::Mlp: return "mlp";
    case DlaPart::Kind::NormOffset: return "beta";
    case DlaPart::Kind::UnembeddingBias: return "b_u";
  }
  return "";
}

// The grid as drawn: per layer l = 0 … L and position, the top token and the finally predicted token's p.
nlohmann::ordered_json grid_json(const App& app, const LensView& v) {
  nlohmann::ordered_json rows = nlohmann::ordered_json::array();
  const LogitLens& lens = v.run->lens;
  for (int l = 0; l <= lens.layers(); ++l) {
    nlohmann::ordered_json row = nlohmann::ordered_json::array();
    for (int t = 0; t < static_cast<int>(lens.x.size()); ++t) {
      const int top = top_token(lens.P[l], t);
      row.push_back({{"top_id", top}, {"top", token_label(app.session.tokenizer(), top)},
                     {"p_top", lens.P[l](top - 1, t)}, {"p_final", v.p_final(l, t)}});
    }
    rows.push_back(std::move(row));
  }
  return rows;
}

nlohmann::ordered_json dla_json(const App& app, const LensView& v) {
  if (!v.dla) return {{"error", v.dla_error}};
  const LogitAttribution& a = *v.dla;
  nlohmann::ordered_json bars = nlohmann::ordered_json::array();
  for (const DlaPart& p : a.parts)
    bars.push_back({{"label", p.label}, {"kind", kind_name(p.kind)}, {"l", p.l}, {"h", p.h}, {"value", p.value}});
  return {{"t", a.t}, {"y", a.y}, {"y_label", token_label(app.session.tokenizer(), a.y)}, {"logit", a.logit},
          {"sum", a.sum()}, {"bars", bars}};
}

class LogitLensFeature : public Feature {
 public:
  const char* tab_panel() const override { return "lens"; }
  void overlay(App& app) override { view_.release_if_stale(app); }
  void draw_tab(App& app) override {
    view_.refresh(app);
    draw_logit_lens(app, view_);
  }
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override {
    if (verb != "lens-position") return ActionResult::NotMine;
    view_.refresh(app);
    if (!view_.run) return error = "lens-position: " + view_.error, ActionResult::Failed;
    int t = 0;
    try {
      size_t used = 0;
      t = std::stoi(arg, &used);
      if (used != arg.size()) t = 0;
    } catch (...) {
      t = 0;
    }
    if (!view_.set_position(t))
      return error = "lens-position needs a position from 1 to " + std::to_string(view_.x.size()) + " (1-based), got \"" +
                     arg + "\"",
             ActionResult::Failed;
    return ActionResult::Done;
  }
  // Only once the tab has been shown or scripted: the lens traces a forward pass of its own, which a big
  // model's --dump-state should not pay for unasked.
  void dump(const App& app, nlohmann::ordered_json& j) const override {
    if (!view_.asked) return;
    view_.refresh(app);
    nlohmann::ordered_json o;
    if (!view_.run) {
      o["error"] = view_.error;
    } else {
      o["alg"] = view_.run->lens.alg;
      o["layers"] = view_.run->lens.layers();
      o["x"] = view_.x;
      o["masked"] = view_.masked;
      o["predicted"] = view_.predicted;
      o["position"] = view_.pos;
      o["grid"] = grid_json(app, view_);
      o["dla"] = dla_json(app, view_);
    }
    j["logit_lens"] = o;
  }

 private:
  mutable LensView view_;  // a cache of core's results for the current model and input
};

}  // namespace

void LensView::refresh(const App& app) {
  const Session& s = app.session;
  const Tokens zs = s.arch().has_context() ? s.tokens_z() : Tokens{};
  asked = true;
  if (model == s.model_ptr() && x == s.tokens() && z == zs) return;
  model = s.model_ptr(), x = s.tokens(), z = zs;
  run.reset(), dla.reset(), predicted.clear(), masked.clear(), error.clear();
  if (s.reads_image()) {  // not yet: the lens's positions and labels are a text's tokens
    error = "the logit lens reads a text model's tokens, and a vision transformer reads an image. Its prediction "
            "is the class token's column P[:, 1], on the Vision tab.";
    return;
  }
  try {
    run = std::make_unique<LensRun>(logit_lens(*model, z, x));
  } catch (const std::exception& e) {
    error = e.what();
    return;
  }
  for (int t = 0; t < static_cast<int>(x.size()); ++t) predicted.push_back(top_token(run->lens.P_model, t));
  const int mask = model->config.mask_token();
  for (int t = 0; t < static_cast<int>(x.size()); ++t)
    if (s.arch().output() == OutputKind::FillIn && mask > 0 && x[t] == mask) masked.push_back(t + 1);
  set_position(pos >= 1 && pos <= static_cast<int>(x.size()) ? pos : masked.empty() ? static_cast<int>(x.size()) : masked.front());
}

void LensView::release_if_stale(const App& app) {
  if (!model || model == app.session.model_ptr()) return;
  model.reset(), run.reset(), dla.reset(), predicted.clear(), masked.clear(), x.clear(), z.clear();
}

bool LensView::set_position(int t) {
  if (!run || t < 1 || t > static_cast<int>(x.size())) return false;
  pos = t;
  dla.reset(), dla_error.clear();
  try {
    dla = direct_logit_attribution(*model, run->trace, t, predicted[t - 1]);
  } catch (const std::exception& e) {
    dla_error = e.what();
  }
  return true;
}

std::unique_ptr<Feature> make_logit_lens_feature() { return std::make_unique<LogitLensFeature>(); }

}  // namespace sf
