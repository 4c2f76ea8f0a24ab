// Inspector tab "LayerNorm": the layer_norm calls of the trace (Algorithm 6), grouped by the
// DTransformer line that makes them (Algorithm 10 lines 5, 7 and 10): each column's m and v,
// one column t before (e) and after (ê) normalisation, and the parameters γ and β.
#pragma once
#include <cstddef>
#include <cstdint>
#include <vector>

#include "app/app.hpp"

namespace sf {

struct LnCall;   // one layer_norm call of the trace (layernorm_panel.cpp)
struct LnGroup;  // the calls one DTransformer line makes

struct LayerNormPanel {
  void draw(App& app);

 private:
  // The selected group of calls, by what survives a re-trace: the generation step i
  // (0 outside Algorithm 14), the layer l (0 for the final layer norm) and the caller line.
  struct Key {
    int i = 0, l = 1, line = 5;
    bool operator==(const Key&) const = default;
  };
  void follow_cursor(const App& app, const std::vector<LnGroup>& groups);
  const LnGroup& selected_group(const std::vector<LnGroup>& groups) const;
  // What the learner sees, top to bottom: the call picker (with the caller's line and ε), the
  // per-column statistics m and v, the selected column before and after, and γ and β. The two
  // chart parts return the feature hovered (0-based) or -1.
  void draw_call_picker(const App& app, const std::vector<LnGroup>& groups, const LnGroup& g);
  void draw_statistics(App& app, const LnGroup& g, const LnCall& sel);
  void select_column(App& app, const LnCall& c);
  int draw_column_before_after(const App& app, const LnGroup& g, const LnCall& sel);
  int draw_gamma_beta(const App& app, const LnGroup& g, const LnCall& sel) const;

  Key key_;
  int t_ = 1;                     // the selected column (1-based)
  size_t followed_ = SIZE_MAX;    // the shown event the selection last followed
  bool histogram_ = false;       // e and ê as a histogram of their values, not bars by feature
  int hovered_i_ = -1;            // feature hovered in one chart, highlighted in all (0-based)
};

}  // namespace sf
