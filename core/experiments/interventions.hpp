// Experiments (issue 12): "what if" runs of the forward algorithm (10, 9 or 8).
//
// An experiment is a list of interventions, each one change:
//   - Edit:   cells of an activation ← numbers, at a patch point (patch_point.hpp): Algorithm 4's
//             Q, K, V, S (line 4, before masking; line 5, masked), softmax(S/√d_attn), Ṽ of head
//             (l, h); the residual stream X (Z) after each line of the layer loop; a layer norm's
//             output (X̃, or X after a post-LN norm line); the final norm.
//   - Ablate: head (l, h) of one MHAttention: its Ṽ ← 0 (Algorithm 4 line 6, i.e. Y^h of
//             Algorithm 5 before W_o).
//   - Mask:   Mask[t_z, t_x] of head (l, h) toggled (Algorithm 4 line 5 reads the changed mask).
//   - Patch:  activation patching: columns of a value taken from a run on another prompt B.
//   - Weight: a cell of a parameter tensor of θ, in a copy of the model (the original is untouched).
// run_experiment re-runs the forward algorithm: everything downstream of a change is recomputed,
// nothing upstream changes, and the run is traced like any run.
#pragma once
#include <atomic>
#include <memory>
#include <string>
#include <vector>

#include "core/arch/architecture.hpp"
#include "core/experiments/patch_point.hpp"

namespace sf {

struct Intervention {
  enum class Kind { Edit, Ablate, Mask, Patch, Weight };
  Kind kind = Kind::Edit;
  PatchPoint at;         // every kind but Weight
  int row = 0, col = 0;  // 0-based: the block's top-left cell (Edit, Patch), the mask cell
                         // [t_z, t_x] (Mask), the weight's cell (Weight)
  MatF block;            // Edit, Patch: the new values of rows row…, columns col…
  std::string tensor;    // Weight: the parameter table's entry, e.g. "layer1.attn.W_q",
  int k = 0;             //         and its head (0-based) for per-head tensors
  float value = 0;       // Weight: the new value
  std::string label;     // for people, e.g. "ablate head 2 of layer 1: Ṽ ← 0 (Alg. 4 line 6)"
};

// A point's place in the paper, e.g. "Ṽ, Alg. 4 line 6, layer 1, head 2 (called from Alg. 10 line 6)".
std::string describe(const PatchPoint& at);

// The interventions, 1-based cells as the UI shows them.
Intervention edit_cell(const PatchPoint& at, int row, int col, float value);
Intervention edit_value(const PatchPoint& at, MatF value);  // the whole value
Intervention ablate_head(LineRef call, int l, int h);
Intervention toggle_mask(LineRef call, int l, int h, int t_z, int t_x);
// Column t (1-based; 0: every column) of `value`, the value at `at` in prompt B's run.
Intervention patch_from(const PatchPoint& at, const TraceMat& value, int t, const std::string& prompt_b);
// `tensor` as the parameter table names it; k the 0-based head (0 otherwise).
Intervention edit_weight(const std::string& tensor, int k, int row, int col, float value, const std::string& symbol);

// The activation interventions of a list, applied at the patch points (apply_patches). Counts which
// interventions were applied, so that a run can say which never met their point.
class Patches {
 public:
  explicit Patches(const std::vector<Intervention>& list);
  template <class M>
  void apply(const PatchPoint& at, M& value) const;
  // The interventions (indices into the list) that no patch point met in the runs so far.
  std::vector<size_t> unmet() const;

 private:
  std::vector<const Intervention*> list_;
  std::vector<size_t> index_;                  // list_[i] is the list's index_[i]
  std::unique_ptr<std::atomic<int>[]> hits_;  // per list_ entry (patch points may run on threads)
};

// θ with the Weight interventions applied, a copy of m (null when there are none). Throws sf::Error
// naming the tensor or cell that does not exist.
std::shared_ptr<const Model> edited_model(const Model& m, const std::vector<Intervention>& list);

// Runs m's forward algorithm on (z, x) under the interventions, traced into tr (may be null).
// Returns P. Throws sf::Error when an intervention does not fit (a cell outside its value) or meets
// no patch point of this run (naming it).
MatF run_experiment(const Model& m, const Tokens& z, const Tokens& x, const std::vector<Intervention>& list,
                    Tracer* tr = nullptr);

// --- patch points in a trace ---
// The patch point of the value `name` in scope at event k of a forward run's trace (where it was
// computed). Throws sf::Error saying why when the value is not an activation a patch point changes
// (a parameter of θ, an input bound elsewhere, a value no patch point knows).
PatchPoint point_of(const Trace& t, size_t k, const std::string& name);
// The first event binding the value at `at` (a Line or SubStep), or t.size() when there is none.
size_t find_point(const Trace& t, const PatchPoint& at);
// The value at `at`, or nullptr.
const Value* value_at(const Trace& t, const PatchPoint& at);
// The calling line of head (l, h)'s Algorithm 4 in the trace: `prefer` when the trace has a call
// from it, else the first; none when the trace has none.
LineRef attention_call(const Trace& t, int l, int h, LineRef prefer = {});

}  // namespace sf
