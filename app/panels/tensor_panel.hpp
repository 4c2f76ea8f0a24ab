// The Tensor view (Inspector tab "Tensor"): one value in scope at the shown event, in full.
// Its name and shape in the paper's notation, the line that bound it, a heatmap with legend,
// min / max / mean / std of its finite entries with a histogram; scalars as exact numbers,
// token sequences as pieces with their 1-based ids, masks as 0/1 matrices. A parameter of θ says
// which table entry it is and, for a checkpoint from the ecosystem, where its values came from
// ("W_q for heads 1–12 ← h.0.attn.c_attn.weight[:, 0:768]ᵀ"); a header gives the model's layout
// and files. Matrices larger than the view are drawn reduced, with zoom (heatmap.hpp).
#pragma once
#include <array>
#include <cstdint>
#include <string>
#include <utility>
#include <vector>

#include "app/app.hpp"
#include "app/logic/gradient_pairs.hpp"
#include "app/widgets/downsample.hpp"
#include "app/widgets/heatmap.hpp"

namespace sf {

// Statistics over the finite entries of a matrix, and their histogram.
struct TensorStats {
  static constexpr int kBins = 30;
  long finite = 0, neg_inf = 0, pos_inf = 0, nan = 0;
  double min = 0, max = 0, mean = 0, std = 0;
  std::array<float, kBins> bins{};
};

struct TensorPanel {
  void draw(App& app);
  // The part of the shown matrix in view (--dump-state), and the value it belongs to.
  const MatWindow& zoom() const { return zoom_; }
  const std::string& zoom_value() const { return zoom_key_; }
  // The heatmap drawn last: its caption and where its cells were (--dump-state).
  const HeatmapHover& last_heatmap() const { return last_; }
  // At a backward event, for a gradient ∇N with its forward value N: which of N, ∇N and N ⊙ ∇N
  // the view shows (tensor-view:value|gradient|product), and the name of what it showed last.
  PairView pair_view() const { return view_; }
  void set_pair_view(PairView v) { view_ = v; }
  const std::string& shown_name() const { return shown_name_; }
  // The entry of θ the shown value is, or is the gradient of ("parameter layer1.attn.W_q, head 2";
  // "" when none), as the header says it (--dump-state).
  const std::string& parameter() const { return parameter_; }

 private:
  void draw_matrix(App& app, size_t k, const Value& v);
  // The switch value / gradient / value ⊙ gradient; returns the value to show and the event it is at.
  std::pair<const Value*, size_t> draw_pair_switch(App& app, const GradientPair& p);
  PairView view_ = PairView::Gradient;
  Value product_;            // N ⊙ ∇N, made when shown
  std::string shown_name_;   // what the view showed last (--dump-state)
  std::string parameter_;    // the header's parameter entry, "" when none (--dump-state)
  MatWindow zoom_;        // the part of the shown matrix in view
  HeatmapHover last_;
  std::string zoom_key_;  // the value (name and shape) zoom_ belongs to
  // The statistics of the last matrix shown, kept while its values are the same (a GPT-2
  // matrix has 38 million entries: not recounted every frame).
  struct StatsKey {
    const float* data = nullptr;
    Eigen::Index rows = 0, cols = 0, outer = 0, inner = 0;
    uint64_t hash = 0;
    bool operator==(const StatsKey&) const = default;
  };
  StatsKey stats_key_;
  TensorStats stats_;
};

// The value the Tensor view shows at event k among `scope` (Session::scope_for_view(k)): the
// selected one (UiState::selected_value), else the first value event k bound, else the latest in
// scope; nullptr when nothing is in scope.
const Value* shown_value(const App& app, size_t k, const std::vector<const Value*>& scope);

// The app's Tensor tab (--dump-state reads its zoom).
const TensorPanel& tensor_panel(const App& app);

}  // namespace sf
