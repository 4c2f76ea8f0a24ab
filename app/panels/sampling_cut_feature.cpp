#include "app/panels/sampling_cut_feature.hpp"

#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/panels/all_panels.hpp"
#include "app/panels/panel.hpp"
#include "core/algorithms/sampling.hpp"

namespace sf {

namespace {

// A whole number in [lo, hi]; false when arg is not one.
bool whole_in(const std::string& arg, int lo, int hi, int& out) {
  try {
    size_t used = 0;
    const int v = std::stoi(arg, &used);
    if (used != arg.size() || v < lo || v > hi) return false;
    out = v;
    return true;
  } catch (...) {
    return false;
  }
}

// A top-p in (0, 1]; false otherwise.
bool top_p_of(const std::string& arg, double& out) {
  try {
    size_t used = 0;
    const double v = std::stod(arg, &used);
    if (used != arg.size() || !(v > 0.0 && v <= 1.0)) return false;
    out = v;
    return true;
  } catch (...) {
    return false;
  }
}

// The steps' kept sets as the tabs draw them: token labels of the first `kept` by decreasing p
// (only when something was cut), the mass kept, the block table when paged.
nlohmann::ordered_json steps_json(const App& app, const std::vector<InferenceStep>& steps) {
  nlohmann::ordered_json out = nlohmann::ordered_json::array();
  for (const InferenceStep& s : steps) {
    nlohmann::ordered_json e;
    e["y"] = token_label(app.session.tokenizer(), s.y);
    e["kept"] = s.kept;
    e["kept_mass"] = s.kept_mass;
    if (s.kept < s.p.size()) {
      const std::vector<int> order = order_by_decreasing(s.p);
      nlohmann::ordered_json kept = nlohmann::ordered_json::array();
      for (int r = 0; r < s.kept; ++r) kept.push_back(token_label(app.session.tokenizer(), order[r] + 1));
      e["kept_tokens"] = kept;
      e["q_sum"] = s.q.sum();
    }
    if (s.block_table.block_size > 0) {
      std::vector<int> physical;
      for (const int j : s.block_table.blocks) physical.push_back(j + 1);
      e["block_table"] = {{"block_size", s.block_table.block_size}, {"tokens", s.block_table.tokens},
                          {"blocks", physical}};
    }
    out.push_back(std::move(e));
  }
  return out;
}

class SamplingCutFeature : public Feature {
 public:
  ActionResult action(App& app, const std::string& verb, const std::string& arg, std::string& error) override {
    SamplingSettings& gen = app.session.generation().settings;
    TranslationSettings& ed = app.session.translation().settings;
    const int N_V = app.session.model().config.N_V();
    auto fail = [&](const std::string& m) { return error = m, ActionResult::Failed; };
    if (verb == "top-k" || verb == "translate-top-k") {
      int k = 0;
      if (!whole_in(arg, 0, 1000000000, k)) return fail(verb + " needs a whole number ≥ 1 (0 turns the cut off)");
      (verb == "top-k" ? gen.cut : ed.cut).k = std::min(k, N_V);
    } else if (verb == "top-p" || verb == "translate-top-p") {
      double p = 1.0;
      if (!top_p_of(arg, p)) return fail(verb + " needs a number in (0, 1] (1 turns the cut off)");
      (verb == "top-p" ? gen.cut : ed.cut).p = p;
    } else if (verb == "kv-paged") {  // both tabs' caches, as kv-cache:on|off turns on both
      if (arg != "on" && arg != "off") return fail("kv-paged needs on or off");
      gen.paged = ed.paged = arg == "on";
    } else if (verb == "kv-block") {
      if (!whole_in(arg, 1, 64, gen.kv_block_size)) return fail("kv-block needs a whole number of tokens from 1 to 64");
      ed.kv_block_size = gen.kv_block_size;
    } else {
      return ActionResult::NotMine;
    }
    return ActionResult::Done;
  }

  void dump(const App& app, nlohmann::ordered_json& j) const override {
    const Session& s = app.session;
    const SamplingSettings& gen = s.generation().settings;
    const TranslationSettings& ed = s.translation().settings;
    nlohmann::ordered_json c;
    c["top_k"] = gen.cut.k;
    c["top_p"] = gen.cut.p;
    c["translate_top_k"] = ed.cut.k;
    c["translate_top_p"] = ed.cut.p;
    c["kv_paged"] = gen.paged;
    c["kv_block_size"] = gen.kv_block_size;
    c["sampling_cut_label"] = app.panels->sampling.cut_label();
    c["translation_cut_label"] = app.panels->translation.cut_label();
    c["generation_steps"] = steps_json(app, s.generation().result().steps);
    c["translation_steps"] = steps_json(app, s.translation().result().steps);
    j["sampling_cut"] = c;
  }
};

}  // namespace

std::unique_ptr<Feature> make_sampling_cut_feature() { return std::make_unique<SamplingCutFeature>(); }

}  // namespace sf
