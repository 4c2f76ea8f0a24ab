// The Experiments tab's logic, without a window (issue 12, part 5): the interventions in force on
// the session's Forward run, the model's own run kept as "before", the patched re-run shown by the
// stepper (Session::show_trace), and the comparison with a second prompt or checkpoint.
//
// Every change re-runs the forward algorithm with all interventions in force (core/experiments/):
// the stepper then shows the patched trace, the cursor on the same step. Undo pops the last one;
// with none left the session re-traces the model's own run (bit for bit the original).
#pragma once
#include <memory>
#include <string>
#include <vector>

#include "app/session.hpp"
#include "core/experiments/compare.hpp"
#include "core/experiments/interventions.hpp"

namespace sf {

// A second run to compare with (compare mode): prompt B on this model, or this prompt on
// checkpoint B of the same shape.
struct CompareRun {
  std::string what;  // "prompt 'world='" or "checkpoint B.safetensors"
  std::shared_ptr<const Model> model;  // checkpoint B (null: the session's model)
  std::weak_ptr<const Model> session_model;  // the session's model A it was made for
  Trace trace;
  TraceComparison comparison;  // the shown run (A) against B
};

class ExperimentSession {
 public:
  // The label of the patched trace in the stepper.
  static constexpr const char* kLabel = "EXPERIMENT: values differ from the model's own run";

  // Each adds one intervention and re-runs; false with `error` (nothing changes) when it cannot be
  // made. Cells and positions are 1-based, layers and heads as the trace shows them; `k` is the
  // event shown (its value NAME, its layer, head and calling line).
  bool edit(Session& s, size_t k, const std::string& name, int row, int col, float value, std::string& error);
  // A cell of a parameter tensor: NAME as the trace binds it at event k ("W_q": the layer and head
  // of k) or as the parameter table names it ("layer1.attn.W_q", head = k's h).
  bool edit_weight(Session& s, size_t k, const std::string& name, int row, int col, float value, std::string& error);
  // Head h of layer l (of the MHAttention event k is in, else the first with that head).
  bool ablate(Session& s, size_t k, int l, int h, std::string& error);
  bool toggle_mask(Session& s, size_t k, int l, int h, int t_z, int t_x, std::string& error);
  // Activation patching from prompt B: WHAT is "X" (layer l's input: the residual stream before
  // layer l, 1 ≤ l ≤ L) or "Vt" (Ṽ of head h = … of layer l: every head's Ṽ of layer l) at position
  // t (0: every position).
  bool patch(Session& s, size_t k, const std::string& prompt_b, const std::string& what, int l, int t,
             std::string& error);
  // Activation patching of the value NAME in scope at event k (where it was computed), position t
  // (0: all) from prompt B's run.
  bool patch_value(Session& s, size_t k, const std::string& name, const std::string& prompt_b, int t,
                   std::string& error);
  // Pops the last intervention (true when there was one) and re-runs.
  bool undo(Session& s, std::string& error);
  // Removes intervention i and re-runs.
  bool remove(Session& s, size_t i, std::string& error);
  // Back to the model's own run.
  void reset(Session& s);
  // Re-runs with the interventions in force (e.g. after a failure); false with `error`.
  bool rerun(Session& s, std::string& error);
  // Call once a frame: when the session left the experiment (a new prompt, another model or
  // run), the interventions are dropped; when another model is open, so is the comparison (its run
  // B was made against the old model A, and keeping it would hold B's model and trace). True when
  // either happened.
  bool sync(const Session& s);

  const std::vector<Intervention>& list() const { return list_; }
  bool active() const { return !list_.empty(); }
  // The model's own run (valid while active()).
  const Trace& original() const { return original_; }
  // The original run against the shown patched run (valid while active()).
  const TraceComparison& changes() const { return changes_; }

  // --- compare mode ---
  bool compare_prompt(const Session& s, const std::string& text, std::string& error);
  bool compare_model(const Session& s, const std::string& path, std::string& error);
  void clear_compare() { compare_.reset(); }
  const CompareRun* compare() const { return compare_.get(); }
  // Recomputes the comparison against the shown trace (after a change of the shown run).
  void refresh_compare(const Session& s);

 private:
  // Re-runs with `next` in force and shows it; on failure nothing changes.
  bool apply(Session& s, std::vector<Intervention> next, std::string& error);
  bool start(Session& s, std::string& error);  // keeps the original run before the first change
  // Each point's column t (0: all) from prompt B's run, then re-runs.
  bool patch_points(Session& s, const std::vector<PatchPoint>& points, const std::string& prompt_b, int t,
                    std::string& error);
  Tokens encode(const Session& s, const std::string& text) const;

  std::vector<Intervention> list_;
  Trace original_;
  TraceComparison changes_;
  std::unique_ptr<CompareRun> compare_;
  const Model* model_ = nullptr;  // the session's model the experiment was made on
};

// The parameter table's entry for NAME at event k of t (see edit_weight): its name, or "" with
// `error` saying why.
std::string weight_entry(const Model& m, const Trace& t, size_t k, const std::string& name, std::string& error);

}  // namespace sf
