// The Session: the model, the current trace, the cursor and the settings. Panels only read
// it and send it commands; it owns no window and no GL, so tests can drive it headless.
#pragma once
#include <functional>
#include <memory>
#include <utility>
#include <string>
#include <vector>

#include "core/algorithms/algorithms.hpp"
#include "core/algorithms/fill_in.hpp"
#include "core/arch/architecture.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// Which run is traced: Algorithm 10 on the prompt, Algorithm 14 generating from it, or a trace
// made elsewhere and shown as it is (Training: one update of Algorithm 13, see show_trace).
// Translate: Algorithm 15 writing x̂ for the context z (models whose output is a Translation).
enum class RunKind { Forward, Generate, Training, Translate };

struct SamplingSettings {
  double tau = 0.8;        // τ (0 = argmax)
  int l_gen = 12;          // ℓ_gen
  uint64_t seed = 1;
  bool trim_context = true;
  bool kv_cache = false;  // not in the paper: compute only the new token's column (docs/variants.md)
};

// Filling in [MASK] (models whose output is FillIn): τ = 0 takes the argmax.
struct FillSettings {
  double tau = 0.0;
  uint64_t seed = 1;
  int top_k = 5;
};

// Algorithm 15's settings (models whose output is a Translation).
struct TranslationSettings {
  double tau = 0.0;             // τ (0 = argmax)
  uint64_t seed = 1;
  bool reuse_encoding = false;  // not in the paper: encode z once and reuse Z
  bool kv_cache = false;        // not in the paper: z encoded once, only x̂'s new column per step
};

// One compute dispatch of the last traced pass's attention on another backend (the GPU).
struct AttentionDispatch {
  int layer = 0;      // l of Algorithm 10's loop (1-based)
  std::string what;   // the dispatch, e.g. "Alg. 4 L4: S ← Kᵀ Q (8 heads)"
  double gpu_ms = 0;  // GPU clock (NaN where there is none)
  double cpu_ms = 0;  // CPU clock around it
};

// Computes Algorithm 10 line 6's MHAttention elsewhere and emits, into `tr` (may be null), the
// same trace events as core's mh_attention; appends its dispatch times to `times`.
using AttentionHook = std::function<MatF(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                                         const Mask& mask, Tracer* tr, std::vector<AttentionDispatch>& times)>;

class Session {
 public:
  Session();  // the built-in default model and prompt

  // --- model ---
  // Loads a checkpoint; on failure keeps the current model and returns false with `error`.
  bool load_model(const std::string& path, std::string& error);
  void set_model(Model m, std::string label);
  const Model& model() const { return *model_; }
  const Tokenizer& tokenizer() const { return *tok_; }
  const Architecture& arch() const { return *arch_; }
  const std::string& model_label() const { return model_label_; }

  // --- the prompt (tokenized as [bos_token, characters…]) ---
  // Re-traces and keeps the cursor at the same algorithm, line and indices where they still
  // exist. Unknown characters or a prompt longer than ℓ_max keep the last good trace and set
  // prompt_error() / unknown_chars().
  void set_prompt(const std::string& text);
  const std::string& prompt() const { return prompt_; }
  const Tokens& tokens() const { return tokens_; }
  const std::string& prompt_error() const { return prompt_error_; }
  const std::vector<UnknownChar>& unknown_chars() const { return unknown_; }

  // --- the context z (architectures with a context: Algorithm 8's encoder input) ---
  // Tokenized as [bos_token, characters…, eos_token], as training pairs are; re-traces keeping
  // the cursor. Errors as for the prompt (context_error(), unknown_context_chars()).
  void set_context(const std::string& text);
  const std::string& context() const { return context_; }
  const Tokens& tokens_z() const { return tokens_z_; }
  const std::string& context_error() const { return context_error_; }
  const std::vector<UnknownChar>& unknown_context_chars() const { return unknown_z_; }

  // --- filling in [MASK] (arch().output() == OutputKind::FillIn) ---
  // Masks (or unmasks) the prompt's token at 1-based position t (<bos> is 1): the prompt text
  // gets [MASK] there, and unmasking restores the character that was there. Re-traces keeping
  // the cursor. False with `error` at <bos>, outside the prompt, or when a [MASK] typed by hand
  // has no character to restore.
  bool toggle_mask(int t, std::string& error);
  // fill_masks on the prompt (untraced; the Forward run is its traced ETransformer pass), for
  // fill_settings; positions empty when the prompt has no [MASK] or the model does not fill in
  // (fill_error() says why).
  const FillResult& fill() const;
  const std::string& fill_error() const;
  FillSettings fill_settings;
  // The Forward run with the cursor on its last line (Algorithm 9 line 12: P's columns at the
  // masks are what the fill reads).
  void trace_fill();

  // --- Algorithm 15 (arch().output() == OutputKind::Translation) ---
  // Traces EDInference on the context z. `one`: shows one more step of x̂ than before (the first
  // after a change of z or settings), the cursor on that step's loop line (F11 enters its
  // EDTransformer call); otherwise every step until eos_token or the ℓ_max cap. The whole run
  // is traced once (the steps are drawn in order from one generator, so a run cut after k
  // steps has the same first k tokens); each "one" reveals and moves to the next step.
  void trace_translate(bool one);
  const EdInferenceResult& translation() const { return translation_; }
  // Steps of translation() shown so far (≤ translation().steps.size()).
  int translation_shown() const { return translation_shown_; }
  // x̂ as far as shown: [bos_token, y_1 … y_shown].
  Tokens translated() const;
  TranslationSettings translation_settings;

  // --- the traced run ---
  RunKind run_kind() const { return run_kind_; }
  // True when the trace is Algorithm 14 or 15 run with the KV cache (not in the paper).
  bool traced_with_kv_cache() const {
    return (run_kind_ == RunKind::Generate || run_kind_ == RunKind::Translate) && traced_kv_cache_;
  }
  // Traces the model's forward algorithm (10, 9 or 8) on the prompt (the default).
  void trace_forward();
  // Traces Algorithm 14 generating `n` tokens (n = settings.l_gen for "all at once");
  // `append` continues from the text generated so far (one token at a time).
  void trace_generate(int n, bool append);
  // Shows a trace made elsewhere (the Training tab's traced update of Algorithm 13) as the
  // current run, the cursor on its first line. A prompt edit returns to the Forward run.
  void show_trace(Trace t, std::string label);
  const std::string& trace_label() const { return trace_label_; }
  const InferenceResult& generation() const { return generation_; }
  const Tokens& generated() const { return generated_; }
  void clear_generation();
  SamplingSettings sampling;

  const Trace& trace() const { return trace_; }
  size_t cursor() const { return cursor_; }
  const Event& current() const { return trace_.events[cursor_]; }
  void jump(size_t k);
  void step_into() { jump(trace_.step_into(cursor_)); }
  void step_over() { jump(trace_.step_over(cursor_)); }
  void step_out() { jump(trace_.step_out(cursor_)); }
  void step_back() { jump(trace_.step_back(cursor_)); }
  void step_back_over() { jump(trace_.step_back_over(cursor_)); }
  void continue_run() { jump(trace_.continue_to(cursor_, breakpoints_)); }
  void restart();
  // The first Line event of `alg` at `line` whose indices match the given nonzero ones.
  bool jump_to(int alg, int line, int l = 0, int h = 0, int t = 0);

  // Breakpoints on (algorithm, line).
  bool has_breakpoint(int alg, int line) const;
  void toggle_breakpoint(int alg, int line);
  const std::vector<int>& breakpoints() const { return breakpoints_; }

  // Token labels for the TokenX (or TokenZ) axes of values at event k: the sequence the trace
  // says is in force there (each generation step has its own; Algorithm 8's encoder labels
  // both axes with z, its cross-attention keys with z).
  const Tokens& tokens_at(size_t k, Axis a = Axis::TokenX) const;
  // Whether `line` already ran in the frame of event k, before k (for "already run" marks).
  bool line_ran(size_t k, int line) const;
  // The variables in scope for viewing event k: for the cursor, its scope; for a caller
  // frame's waiting line (k after the cursor), what that frame had bound before the call.
  std::vector<const Value*> scope_for_view(size_t k) const;

  // --- the attention backend of the Forward run (Algorithm 10 line 6) ---
  // Sets (or, with an empty hook, clears) another MHAttention and re-traces, keeping the
  // cursor. When the hook throws, the session drops it, traces on the CPU and keeps the reason
  // in attention_failure() until take_attention_failure().
  void set_attention_hook(AttentionHook hook);
  bool attention_hooked() const { return static_cast<bool>(attn_hook_); }
  // The dispatches of the last traced Forward run through the hook (empty on the CPU).
  const std::vector<AttentionDispatch>& attention_dispatches() const { return attn_times_; }
  // max |P_hook − P_cpu| over the last traced Forward run through the hook (NaN otherwise).
  double attention_max_diff() const { return attn_max_diff_; }
  std::string take_attention_failure() { return std::exchange(attn_failure_, std::string()); }

  // Milliseconds the last re-trace took (prompt edit → new trace).
  double last_trace_ms() const { return last_trace_ms_; }

 private:
  void retrace_keep_cursor();
  void run_trace();
  // Encodes `text` for the prompt or the context; on failure sets `error` and returns false.
  bool encode_input(const std::string& text, bool with_eos, const char* what, std::vector<UnknownChar>& unknown,
                    std::string& error, Tokens& out) const;

  std::unique_ptr<Model> model_;
  const Architecture* arch_ = nullptr;
  std::unique_ptr<Tokenizer> tok_;
  std::string context_;
  Tokens tokens_z_;
  std::string context_error_;
  std::vector<UnknownChar> unknown_z_;
  std::string model_label_;
  std::string prompt_;
  Tokens tokens_;
  std::string prompt_error_;
  std::vector<UnknownChar> unknown_;
  RunKind run_kind_ = RunKind::Forward;
  bool traced_kv_cache_ = false;  // the KV-cache option of the traced Algorithm 14 or 15 run
  int gen_count_ = 0;
  Tokens gen_prefix_;  // text generated before the traced run (one token at a time)
  Tokens generated_;   // gen_prefix_ + what the traced run generated
  InferenceResult generation_;
  Trace trace_;
  std::string trace_label_;  // show_trace's label (empty for the session's own runs)
  size_t cursor_ = 0;
  std::vector<int> breakpoints_;
  double last_trace_ms_ = 0;
  bool keep_mask_origins_ = false;
  std::vector<std::pair<int, int>> mask_origins_;  // (t, the token that [MASK] replaced)
  mutable FillResult fill_;
  mutable std::string fill_error_;
  mutable std::vector<double> fill_key_;  // tokens and settings fill_ was computed for
  EdInferenceResult translation_;
  int translation_shown_ = 0;
  std::vector<double> translation_key_;  // z and settings translation_ was traced for
  AttentionHook attn_hook_;
  std::vector<AttentionDispatch> attn_times_;
  double attn_max_diff_ = 0;
  std::string attn_failure_;
};

// Where the built-in assets live (the default model, fonts fallback).
std::string assets_dir();

}  // namespace sf
