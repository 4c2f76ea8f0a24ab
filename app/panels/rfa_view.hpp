// The random-feature attention comparison (issue 25 item 3; Algorithm 4-R, NOT IN THE PAPER), shown
// in the Attention tab when the trace's heads ran Algorithm 4-R instead of Algorithm 4: for the call
// at (or last before) the cursor, Algorithm 4's softmax(S/√d_attn) beside the implied weights Â
// (computed for the view only: 4-R never builds them), the heatmap of |Â − softmax|, and a chart of
// the error against D (8 … 256, several seeds each: mean and spread), all computed by core on the
// head's own Q, K, V from the trace.
#pragma once
#include <cstddef>
#include <optional>
#include <vector>

#include "app/app.hpp"
#include "core/algorithms/random_features.hpp"
#include "core/trace/trace.hpp"

namespace sf {

// What the view shows for one traced call of Algorithm 4-R (headless: --dump-state and tests).
struct RfaComparison {
  size_t enter = 0;  // the call's Enter event
  Indices idx;       // its layer l and head h
  int D = 0;
  bool orthogonal = false;
  MatF A_exact, A_rf, error;  // (ℓ_z, ℓ_x) softmax(S/√d_attn), Â, |Â − softmax|
  double max_v = 0, max_weights = 0;  // from the call's last line
  int guarded = 0;
  std::vector<RfaErrorPoint> curve;  // the error against D (empty for ℓ_z·ℓ_x > kRfaChartMaxCells)
};

// The D and the seeds of the chart: D = 8, 16, 32, 64, 128, 256, kRfaChartSeeds seeds each (rf_seed,
// rf_seed + 1, …: the model's own ω is the first).
inline constexpr int kRfaChartSeeds = 6;
inline constexpr int kRfaChartMaxCells = 256 * 256;  // the chart is computed for ℓ_z·ℓ_x up to this
std::vector<int> rfa_chart_features();

// The comparison for the Algorithm 4-R call at or last before event `cursor` (the first call when the
// cursor is before them all); nullopt when the trace has none.
std::optional<RfaComparison> rfa_comparison(const Trace& t, size_t cursor, const ModelConfig& c);

class RfaView {
 public:
  // Draws the view when the trace has Algorithm 4-R calls; false (nothing drawn) when it has none.
  bool draw(App& app);
  // What the view showed in the last frame (--dump-state); nullopt when it showed nothing.
  const std::optional<RfaComparison>& shown() const { return shown_; }

 private:
  void draw_chart(App& app, const RfaComparison& r);
  bool rfa_comparison_enter_changed(const Trace& t, size_t cursor) const;
  std::optional<RfaComparison> shown_;
  const Trace* trace_ = nullptr;  // the trace and call shown_ was computed for (the chart is not free)
  size_t trace_size_ = 0;
};

}  // namespace sf
