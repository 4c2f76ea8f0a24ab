// The Session: the model, its two inputs (the prompt x and the context z), the current trace and
// its cursor, and the runs beside the forward pass (generation, translation, fill-in: each its own
// object). Panels only read it and send it commands; it owns no window and no GL, so tests can
// drive it headless.
#pragma once
#include <functional>
#include <limits>
#include <map>
#include <memory>
#include <optional>
#include <utility>
#include <string>
#include <vector>

#include "app/logic/session_input.hpp"
#include "app/logic/vision_input.hpp"
#include "app/session_fill.hpp"
#include "app/session_generation.hpp"
#include "app/session_speculation.hpp"
#include "app/session_translation.hpp"
#include "core/algorithms/algorithms.hpp"
#include "core/arch/architecture.hpp"
#include "core/io/model_files.hpp"
#include "core/tokenizers/tokenizer.hpp"

namespace sf {

// Which run is traced: Algorithm 10 on the prompt, Algorithm 14 generating from it, or a trace
// made elsewhere and shown as it is (Training: one update of Algorithm 13, see show_trace).
// Translate: Algorithm 15 writing x̂ for the context z (models whose output is a Translation).
enum class RunKind { Forward, Generate, Training, Translate, Speculate };

// One compute dispatch of a traced MHAttention call on another backend (the GPU): what
// gpu::DispatchTime says of it.
struct AttentionDispatch {
  std::string what;                   // the dispatch, e.g. "Alg. 4 L4: S ← Kᵀ Q (8 heads)"
  int algorithm = 4;                  // 4 (a head's lines, all heads at once) or 5 (line 4, W_o)
  int line_first = 0, line_last = 0;  // the pseudocode lines it computes (4 … 6 for a fused one)
  std::string heads;                  // "1–8", "1–2 (key/value)" under H_kv < H, "" for Algorithm 5
  double gpu_ms = std::numeric_limits<double>::quiet_NaN();  // GPU clock (NaN: not measured)
  double cpu_ms = std::numeric_limits<double>::quiet_NaN();  // CPU clock around it
};

// One MHAttention call of the traced Forward run computed by the hook: the forward algorithm's
// line that called it (av.patch.call, av.patch.l = l), what kind of attention it
// is, how far its Ṽ is from core's, and its dispatches.
struct AttentionCall {
  int alg = 0, line = 0;  // e.g. Algorithm 8 line 16 (cross-attention)
  int layer = 0;          // l, 1-based
  std::string kind;       // the hook's words: "cross-attention · bidirectional mask", …
  // max |Ṽ_hook − Ṽ_cpu|: the session's check, or the hook's own (the GPU's guard: the GPU's Ṽ and heads' Ṽ^h,
  // also when the guard traced core's values instead)
  double max_diff = std::numeric_limits<double>::quiet_NaN();
  size_t enter = 0;       // its Algorithm 5 Enter event in the trace
  std::vector<AttentionDispatch> dispatches;
};

// The call the hook could not compute (it threw there): the whole run was traced on the CPU.
struct AttentionFailure {
  int alg = 0, line = 0, layer = 0;  // 0: the failure was outside any call
  std::string kind;
  std::string why;  // the hook's message
};
// "Algorithm 9 line 5, l = 2 (self-attention · bidirectional mask · ALiBi): <why>".
std::string to_text(const AttentionFailure& f);

// Computes a forward algorithm's MHAttention (with its variant `av`) elsewhere and emits, into
// `tr` (may be null), the same trace events as core's mh_attention. Fills call.kind (first, so
// that a refusal can name it) and appends its dispatches to call.dispatches; throws to refuse.
using AttentionHook = std::function<MatF(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                                         const Mask& mask, const AttentionOptions& av, Tracer* tr,
                                         AttentionCall& call)>;

// Where the open model came from (File › Open): its layout, the files read, and for an
// ecosystem checkpoint where each paper tensor came from (OpenedModel's fields).
struct ModelOrigin {
  Layout layout = Layout::Stepformer;
  std::string path;                // what was opened (a file or a folder); empty: made in the app
  std::vector<std::string> files;  // every file read, checkpoint first
  std::map<std::string, std::string> provenance;  // paper tensor name → its source (empty: Stepformer's own)
  std::vector<std::string> notes;  // what the import ignored, defaulted or padded (OpenedModel::notes)
};
// "Hugging Face GPT-2 layout", "nanoGPT/minGPT layout", "Hugging Face BERT layout", "Stepformer checkpoint".
std::string layout_title(Layout l);

// How far a trace running off the UI thread has got.
struct TraceProgress {
  int done = 0, total = 0;  // layers traced so far of the forward pass (total 0: not counted)
  double seconds = 0;       // since it started
  std::string what;         // e.g. "Algorithm 10 on 32 tokens"
};

// What a Session starts from: a model already open, its tokenizer (null: made from the model's
// configuration), its label and origin. Sessions share it: the model and tokenizer are const, and a
// Session that opens another model replaces its own pointers only.
struct SessionStart {
  std::shared_ptr<const Model> model;
  std::shared_ptr<const Tokenizer> tokenizer;
  std::string label;
  ModelOrigin origin;
};
// Opens `path` as Session::load_model does (open_model; the label it shows); throws sf::Error.
SessionStart open_start(const std::string& path);
// The built-in default: assets/default.safetensors, or an untrained model (seed 1) when it is
// missing or unreadable.
SessionStart default_start();

class Session {
 public:
  Session();  // the built-in default model and prompt: Session(default_start())
  // The same state as Session() for default_start(), without opening the file again (several
  // Sessions from one opened model: the fuzz target of --actions makes one per input). Throws
  // sf::Error, as set_model does, when the tokenizer is null and none can be made.
  explicit Session(const SessionStart& start);
  ~Session();
  Session(const Session&) = delete;
  Session& operator=(const Session&) = delete;

  // --- model ---
  // Opens a checkpoint file or a folder (open_model: a Stepformer checkpoint, or an ecosystem
  // one with its config.json and tokenizer files); on failure keeps the current model and
  // returns false with the loader's message in `error`.
  bool load_model(const std::string& path, std::string& error);
  // Shows `m`, its forward pass traced (on a worker thread for a big model, but waited for: the
  // panels read the new configuration). `tok` null: the tokenizer made from m's configuration (the current one when m
  // has the same file tokenizer, GPT-2's or WordPiece, which its configuration cannot make).
  // Throws sf::Error, keeping the current model, when no tokenizer can be made.
  void set_model(Model m, std::string label, std::shared_ptr<const Tokenizer> tok = nullptr, ModelOrigin origin = {});
  const Model& model() const { return *model_; }
  std::shared_ptr<const Model> model_ptr() const { return model_; }  // for work that may outlive the model shown
  const Tokenizer& tokenizer() const { return *tok_; }
  const Architecture& arch() const { return *arch_; }
  // E.g. "default.safetensors", "gpt2 (Hugging Face GPT-2 layout)".
  const std::string& model_label() const { return model_label_; }
  const ModelOrigin& origin() const { return origin_; }

  // --- tracing off the UI thread ---
  // Models with more parameters than this trace on a worker thread: trace() stays the last
  // finished trace (and cursor() its cursor) until poll() finds the new one done. A newer
  // request supersedes a running one (cancelled at its next layer; a run that cannot be cut
  // finishes unseen). The GPU attention hook always runs on the calling thread.
  size_t async_min_params = 5'000'000;
  bool tracing() const { return static_cast<bool>(job_); }
  TraceProgress trace_progress() const;
  // Shows the running trace if it has finished (the UI calls it every frame). True when it did.
  bool poll();
  // Blocks until the running trace (if any) has finished, and shows it.
  void wait_for_trace();

  // --- the inputs: the prompt x and the context z ---
  // The prompt is tokenized as [bos_token, characters…] ([…, eos_token] for a model that fills
  // in [MASK]: BERT reads whole sequences as it was trained on them). Re-traces and keeps the
  // cursor at the same algorithm, line and indices where they still exist. Unknown characters
  // or a prompt longer than ℓ_max keep the last good trace (prompt_input().error, .unknown, .stale).
  void set_prompt(const std::string& text);
  const TokenInput& prompt_input() const { return prompt_; }
  const std::string& prompt() const { return prompt_.text; }
  const Tokens& tokens() const { return prompt_.tokens; }
  // The context z (architectures with a context: Algorithm 8's encoder input), tokenized as
  // [bos_token, characters…, eos_token], as training pairs are; re-traces keeping the cursor.
  // Errors as for the prompt (context_input()).
  void set_context(const std::string& text);
  const TokenInput& context_input() const { return context_; }
  const std::string& context() const { return context_.text; }
  const Tokens& tokens_z() const { return context_.tokens; }
  // True while the prompt or the context as typed cannot be encoded (unknown characters, longer
  // than ℓ_max): the trace shown is of the last input that could be, not of what is typed.
  bool trace_stale() const { return prompt_.stale || context_.stale; }

  // --- the image x of a vision transformer (arch "vit", not in the paper) ---
  // True when the model's input is an image (OutputKind::Classification): the forward pass reads
  // vision().pixels() instead of the prompt's tokens (the prompt is kept, unused).
  bool reads_image() const { return arch_->output() == OutputKind::Classification; }
  // What the forward algorithm reads as x: the image's pixels for a vit, else the prompt's tokens.
  const Tokens& forward_x() const { return reads_image() ? vision_.pixels() : prompt_.tokens; }
  const VisionInput& vision() const { return vision_; }
  // Test digit n (1-based), a drawn image, one pixel (1-based row and column, 0 … 16) or a blank
  // image; each re-traces keeping the cursor (a shown training trace returns to the forward pass).
  // False with `error` (nothing changed) for an index or an image out of range.
  bool select_test_digit(int n, std::string& error);
  bool set_image(const Tokens& pixels, std::string& error);
  bool set_pixel(int r, int c, int v, std::string& error);
  void clear_image();

  // --- the traced run ---
  RunKind run_kind() const { return run_kind_; }
  // True when the trace is Algorithm 14 or 15 run with the KV cache (not in the paper).
  bool traced_with_kv_cache() const;
  // Traces the model's forward algorithm (10, 9 or 8) on the prompt (the default).
  void trace_forward();
  // Shows a trace made elsewhere (the Training tab's traced update of Algorithm 13) as the
  // current run, the cursor on its first line. A prompt edit returns to the Forward run.
  // `model`, when given, is kept alive as long as the trace is shown (a trace may hold the
  // parameters it was computed with by reference).
  void show_trace(Trace t, std::string label, std::shared_ptr<const Model> model = nullptr);
  // Traces one step of a training algorithm (the Training tab's traced update: `step` runs it into
  // the tracer, forward and backward) and shows it as show_trace does, labelled `label`, keeping
  // `model` (the copy it updates) alive. Like the forward pass: on a worker thread for a model over
  // async_min_params (trace() stays the last trace until poll() shows the new one;
  // trace_progress() says what runs), at once for a smaller one. `then` runs once it is shown. A
  // step that throws keeps the shown trace: `step` reports its own errors.
  void trace_training(std::function<void(Tracer&)> step, std::string label, std::shared_ptr<const Model> model,
                      std::function<void()> then = {});
  const std::string& trace_label() const { return trace_label_; }
  // The sequence a shown training trace steps through (x_n, or Algorithm 12's x̃_n): the first the
  // trace labels its token axes with; the prompt's tokens when it labels none.
  const Tokens& stepped_sequence() const {
    return trace_.sequences.empty() ? prompt_.tokens : trace_.sequences.front();
  }

  // --- Algorithm 14: generation (its settings, what it generated: generation()) ---
  Generation& generation() { return generation_; }
  const Generation& generation() const { return generation_; }
  // --- Algorithm 14-S: speculative decoding (not in the paper; its draft, settings, result) ---
  Speculation& speculation() { return speculation_; }
  const Speculation& speculation() const { return speculation_; }
  // Traces Algorithm 14-S from the prompt with speculation().settings and its draft; false (nothing
  // traced) when no draft is picked or the model does not continue text.
  bool trace_speculate();
  // Traces Algorithm 14 generating `n` tokens (n = generation().settings.l_gen for "all at
  // once"); `append` continues from the text generated so far (one token at a time).
  void trace_generate(int n, bool append);
  // Forgets what was generated and traces the forward pass.
  void clear_generation();

  // --- Algorithm 15: translation (arch().output() == OutputKind::Translation; translation()) ---
  Translation& translation() { return translation_; }
  const Translation& translation() const { return translation_; }
  // Traces EDInference on the context z. `one`: shows one more step of x̂ than before (the first
  // after a change of z or settings), the cursor on that step's loop line (F11 enters its
  // EDTransformer call); otherwise every step until eos_token or the ℓ_max cap. The whole run
  // is traced once (the steps are drawn in order from one generator, so a run cut after k
  // steps has the same first k tokens); each "one" reveals and moves to the next step.
  void trace_translate(bool one);

  // --- filling in [MASK] (arch().output() == OutputKind::FillIn; fill_in() has the settings) ---
  FillIn& fill_in() { return fill_; }
  const FillIn& fill_in() const { return fill_; }
  // Masks (or unmasks) the prompt's token at 1-based position t (<bos> is 1): the prompt text
  // gets [MASK] in place of that piece's text, and unmasking restores the text that was there.
  // Re-traces keeping the cursor. False with `error` at <bos>, outside the prompt, when a
  // [MASK] typed by hand has no text to restore, or when the vocabulary has no mask token.
  bool toggle_mask(int t, std::string& error);
  // fill_masks on the prompt (untraced; the Forward run is its traced ETransformer pass), for
  // fill_in().settings; positions empty when the prompt has no [MASK] or the model does not fill
  // in (fill_error() says why).
  const FillResult& fill() const { return fill_.result(prompt_.tokens, *model_, *arch_); }
  const std::string& fill_error() const { return fill_.error(prompt_.tokens, *model_, *arch_); }
  // The Forward run with the cursor on its last line (Algorithm 9 line 12: P's columns at the
  // masks are what the fill reads).
  void trace_fill();

  // --- the trace, the cursor and breakpoints ---
  const Trace& trace() const { return trace_; }
  // Changes whenever trace() is replaced: what a view computed from a trace is stale when this differs
  // (a new trace can reuse the old one's storage and length, so its address and size do not tell).
  size_t trace_serial() const { return trace_serial_; }
  size_t cursor() const { return cursor_; }
  const Event& current() const { return trace_.events[cursor_]; }
  // Moves the cursor to event k (clamped). A forward move asks jump_gate first: when it returns
  // false the cursor stays (predict-then-reveal holds the next step until the learner guesses,
  // then calls jump_ungated).
  void jump(size_t k);
  void jump_ungated(size_t k);
  std::function<bool(size_t from, size_t to)> jump_gate;
  void step_into() { jump(trace_.step_into(cursor_)); }
  void step_over() { jump(trace_.step_over(cursor_)); }
  void step_out() { jump(trace_.step_out(cursor_)); }
  void step_back() { jump(trace_.step_back(cursor_)); }
  void step_back_over() { jump(trace_.step_back_over(cursor_)); }
  void continue_run() { jump(trace_.continue_to(cursor_, breakpoints_)); }
  void restart();
  // The first Line event at `line` (a forward line, or with Pass::Backward the adjoint of one)
  // whose indices match the given nonzero ones.
  bool jump_to(LineRef line, int l = 0, int h = 0, int t = 0);
  bool jump_to(int alg, int line, int l = 0, int h = 0, int t = 0) { return jump_to(LineRef{alg, line}, l, h, t); }

  // Breakpoints on lines: forward lines, and the backward listings' adjoint lines.
  bool has_breakpoint(LineRef line) const;
  void toggle_breakpoint(LineRef line);
  bool has_breakpoint(int alg, int line) const { return has_breakpoint(LineRef{alg, line}); }
  void toggle_breakpoint(int alg, int line) { toggle_breakpoint(LineRef{alg, line}); }
  const std::vector<LineRef>& breakpoints() const { return breakpoints_; }

  // Token labels for the TokenX (or TokenZ) axes of values at event k: the sequence the trace
  // says is in force there (each generation step has its own; Algorithm 8's encoder labels
  // both axes with z, its cross-attention keys with z).
  const Tokens& tokens_at(size_t k, Axis a = Axis::TokenX) const;
  // Whether `line` already ran in the frame of event k, before k (for "already run" marks).
  bool line_ran(size_t k, int line) const;
  // The variables in scope for viewing event k: for the cursor, its scope; for a caller
  // frame's waiting line (k after the cursor), what that frame had bound before the call.
  std::vector<const Value*> scope_for_view(size_t k) const;

  // --- the attention backend of the Forward run (every MHAttention call of Algorithm 10, 9 or 8) ---
  // Sets (or, with an empty hook, clears) another MHAttention and re-traces, keeping the
  // cursor. When the hook throws, the session drops it, traces the whole run on the CPU and
  // keeps which call failed and why: attention_failed_call() until the next hook is set, and
  // its text in take_attention_failure() until taken.
  void set_attention_hook(AttentionHook hook);
  bool attention_hooked() const { return static_cast<bool>(attn_hook_); }
  // The MHAttention calls of the last traced Forward run through the hook, in trace order
  // (empty on the CPU).
  const std::vector<AttentionCall>& attention_calls() const { return attn_calls_; }
  // max |P_hook − P_cpu| over the last traced Forward run through the hook (NaN otherwise).
  double attention_max_diff() const { return attn_max_diff_; }
  const AttentionFailure* attention_failed_call() const { return attn_failed_ ? &*attn_failed_ : nullptr; }
  std::string take_attention_failure() { return std::exchange(attn_failure_, std::string()); }

  // Milliseconds the last re-trace took (prompt edit → new trace).
  double last_trace_ms() const { return last_trace_ms_; }

  struct TraceJob;  // a run of the traced algorithm (session.cpp)

 private:
  // set_model's work on a model already shared (several Sessions may hold it).
  void set_shared_model(std::shared_ptr<const Model> m, std::string label, std::shared_ptr<const Tokenizer> tok,
                        ModelOrigin origin);
  void retrace_keep_cursor();
  // Traces run_kind_'s algorithm on the current inputs, then calls `then` (cursor placement)
  // once the trace is shown: at once for a small model, after poll() for a big one.
  void run_trace(std::function<void()> then = {});
  void start(std::shared_ptr<TraceJob> job, std::function<void()> then);
  // Runs the attention hook's Forward pass on this thread (the GPU's GL context lives here).
  // False (the hook dropped, its failure kept) when the hook threw.
  bool run_hooked_trace();
  void finish(TraceJob& job);
  // Stops the running trace, if any (superseded by a newer request): it is not shown.
  void supersede();
  // Runs fn once the running trace is shown (at once when none is running).
  void after_trace(std::function<void()> fn);
  // Algorithm 15's trace: shows one more step of x̂ (or all) and puts the cursor there.
  void reveal_translation(bool one);
  // Traces the changed image (the input of a model that reads_image()).
  void image_changed();
  // set_prompt without forgetting which pieces [MASK]s replaced (toggle_mask's edit).
  void set_prompt_text(const std::string& text);

  // Shared with the trace jobs, and kept by the shown trace (trace_model_): a trace may hold
  // the parameters it was computed with by reference.
  std::shared_ptr<const Model> model_;
  std::shared_ptr<const Model> trace_model_;
  const Architecture* arch_ = nullptr;
  std::shared_ptr<const Tokenizer> tok_;
  ModelOrigin origin_;
  std::shared_ptr<TraceJob> job_;                // the running trace, if any
  std::vector<std::shared_ptr<TraceJob>> retired_;  // superseded runs still finishing
  std::function<void()> then_;                   // job_'s cursor placement
  std::string model_label_;
  TokenInput prompt_;                            // x
  bool prompt_typed_ = false;                    // set_prompt was called: set_model keeps the prompt
  TokenInput context_{"context", true};          // z: [bos_token, characters…, eos_token]
  VisionInput vision_;                           // x of a model that reads_image()
  RunKind run_kind_ = RunKind::Forward;
  Trace trace_;
  size_t trace_serial_ = 0;  // trace_serial()
  std::string trace_label_;  // show_trace's label (empty for the session's own runs)
  size_t cursor_ = 0;
  std::vector<LineRef> breakpoints_;
  double last_trace_ms_ = 0;
  Generation generation_;
  Speculation speculation_;
  Translation translation_;
  FillIn fill_;
  AttentionHook attn_hook_;
  std::vector<AttentionCall> attn_calls_;
  double attn_max_diff_ = 0;
  std::optional<AttentionFailure> attn_failed_;
  std::string attn_failure_;  // to_text(*attn_failed_) until taken
};

// Where the built-in assets live (the default model, fonts fallback).
std::string assets_dir();

}  // namespace sf
