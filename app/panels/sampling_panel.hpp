// Inspector tab "Sampling" (Algorithm 14, DInference): τ, ℓ_gen, the seed and context
// trimming; buttons that trace a generation; the text so far; and, for each token generated
// in the traced run, the model's p and the sampled-from q ∝ p^{1/τ} over the vocabulary.
#pragma once
#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "app/app.hpp"
#include "app/panels/speculative_panel.hpp"

namespace sf {

// How many tokens step i (1-based) of the traced Algorithm 14 run `tr` fed DTransformer: the prompt
// and the i − 1 tokens drawn before it, less those trimmed away. Read from the trace's input and the
// step, so it holds with the KV cache too (whose steps trace no DTransformer call).
int tokens_fed(const Trace& tr, const InferenceStep& step, int i);
// "Step i = 2 of 5: P ← DTransformer(x) on 7 tokens, p = P[:, 7]", and with the KV cache which
// columns were computed.
std::string step_heading(const InferenceStep& step, int i, int n_steps, int fed, bool kv_cache);

struct SamplingPanel {
  void draw(App& app);
  // The heading of the step last shown ("" before a generation is shown), for --dump-state.
  const std::string& heading() const { return heading_; }
  const SpeculativePanel& speculative() const { return speculative_; }
  // The selected step's top-k / top-p cut as the bars label it ("" when it drew without a cut), for --dump-state.
  const std::string& cut_label() const { return cut_label_; }

 private:
  enum class ChipKind { Prompt = 0, Earlier = 1, ThisRun = 2 };  // the values are part of the chips' ImGui IDs
  struct PqColors {
    ImU32 p, q;
  };
  // What the learner sees, top to bottom.
  void draw_controls(App& app);
  void draw_commands(App& app);
  int selected_step(const App& app);
  void draw_generated_text(const App& app, int sel);
  void draw_token_chip(const App& app, int id, ChipKind kind, size_t k, int sel, bool& first);
  bool draw_run_status(const App& app) const;
  void draw_step_details(App& app, int sel, int y_rank);
  void jump_button(App& app, const char* label, size_t to);
  void draw_p_and_q_bars(const App& app, const InferenceStep& step, const std::vector<int>& order, int y_rank);
  void draw_p_and_q_legend(const App& app, int N, int shown_rows, const PqColors& colors);
  void draw_p_and_q_row(const App& app, const InferenceStep& step, int v, int rank, float scale, const PqColors& colors) const;

  int step_ = -1;                     // selected step of the traced run (0-based); -1: the last
  size_t generated_seen_ = SIZE_MAX;  // generated().size() when the selection was last reset
  size_t followed_ = SIZE_MAX;        // the shown event the selection last followed
  bool all_ = false;                  // every token of the vocabulary, not only the top 20 by p
  std::string heading_;
  SpeculativePanel speculative_;  // Algorithm 14-S's section (not in the paper)
  std::string cut_label_;
};

}  // namespace sf
