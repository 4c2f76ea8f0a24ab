#include "app/monkey.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>
#include <malloc.h>
#include <unistd.h>

#include <cmath>
#include <csignal>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <functional>
#include <utility>

#include "app/panels/all_panels.hpp"
#include "backends/imgui_impl_glfw.h"
#include "imgui_internal.h"

namespace sf {

namespace {

volatile std::sig_atomic_t g_stop = 0;
volatile std::sig_atomic_t g_settle = 0;  // SIGUSR1: settle before the next action
// The action being applied, for the crash handler (written before each action, read by write(2)).
char g_current[512] = "";

void on_stop(int) { g_stop = 1; }
void on_settle(int) { g_settle = 1; }

void on_crash(int sig) {
  const char head[] = "\nmonkey: crashed while applying ";
  [[maybe_unused]] ssize_t w = ::write(2, head, sizeof head - 1);
  w = ::write(2, g_current, std::strlen(g_current));
  w = ::write(2, "\n", 1);
  std::signal(sig, SIG_DFL);
  std::raise(sig);
}

int64_t status_kib(const char* field) {
  std::ifstream f("/proc/self/status");
  std::string line;
  const size_t n = std::strlen(field);
  while (std::getline(f, line))
    if (line.compare(0, n, field) == 0) return std::atoll(line.c_str() + n + 1);
  return 0;
}

}  // namespace

int64_t rss_kib() { return status_kib("VmRSS"); }
int64_t peak_rss_kib() { return status_kib("VmHWM"); }

Monkey::Monkey(App& app, MonkeyOptions opt)
    : app_(app), opt_(opt), rng_(opt.seed), echo_(std::getenv("STEPFORMER_MONKEY_ECHO") != nullptr) {
  if (const char* f = std::getenv("STEPFORMER_MONKEY_SETTLE")) settle_file_ = f;
  std::signal(SIGINT, on_stop);
  std::signal(SIGTERM, on_stop);
  if (!settle_file_.empty()) std::signal(SIGUSR1, on_settle);
  for (int sig : {SIGSEGV, SIGABRT, SIGFPE, SIGBUS, SIGILL}) std::signal(sig, on_crash);
}

bool Monkey::done() const { return g_stop || (opt_.actions > 0 && applied_ >= opt_.actions); }

std::string Monkey::random_text(size_t max_len) {
  // The sort model's letters and '=', then characters no shipped model knows.
  static const std::vector<std::string> pieces{
      "a", "b", "c", "d", "e", "h", "l", "o", "z", "=", "=", " ", "1", "2", "-", "[MASK]", "<bos>",
      "Z", "!", "\t", "é", "ß", "η", "漢", "😀", "\xff", ",", "\\"};
  const size_t len = std::uniform_int_distribution<size_t>(0, max_len)(rng_);
  std::string s;
  for (size_t i = 0; i < len; ++i) s += pieces[std::uniform_int_distribution<size_t>(0, pieces.size() - 1)(rng_)];
  return s;
}

std::string Monkey::next_action() {
  auto pick = [&](std::initializer_list<const char*> xs) { return std::string(xs.begin()[std::uniform_int_distribution<size_t>(0, xs.size() - 1)(rng_)]); };
  auto num = [&](int lo, int hi) { return std::to_string(std::uniform_int_distribution<int>(lo, hi)(rng_)); };
  auto real = [&](double lo, double hi) { return std::to_string(std::uniform_real_distribution<double>(lo, hi)(rng_)); };
  auto text = [&]() {  // mostly short prompts, sometimes far over any model's context ℓ_max
    return random_text(std::bernoulli_distribution(0.05)(rng_) ? 600 : 14);
  };
  const std::string asset = STEPFORMER_ASSETS "/";
  const std::vector<std::string>& panels = PanelVisibility::names();
  // (weight, action): the weights favour stepping and prompt edits, as a class would.
  const std::vector<std::pair<double, std::function<std::string()>>> actions{
      {8, [] { return "step-into"; }},
      {6, [] { return "step-over"; }},
      {4, [] { return "step-out"; }},
      {4, [] { return "step-back"; }},
      {2, [] { return "step-back-over"; }},
      {2, [] { return "continue"; }},
      {2, [] { return "restart"; }},
      {2, [&] { return "jump:" + num(-5, 3000); }},
      {1, [&] { return "goto:" + num(0, 16) + ":" + num(0, 14) + ":" + num(0, 2) + ":" + num(0, 4) + ":" + num(0, 9); }},
      {1, [&] { return "goto-adjoint:" + num(0, 14) + ":" + num(0, 12) + ":" + num(0, 2) + ":" + num(0, 4); }},
      {0.5, [&] { return "tensor-view:" + pick({"value", "gradient", "product", "sum"}); }},
      {1, [&] { return "breakpoint:" + num(1, 15) + ":" + num(1, 12); }},
      {1, [&] { return "frame:" + num(-1, 4); }},
      {8, [&] { return "prompt:" + text(); }},
      {1, [&] { return "context:" + text(); }},
      {2, [&] { return "mask:" + num(0, 12); }},
      {1, [] { return "fill-trace"; }},
      {1, [&] { return pick({"translate-one", "translate-all"}); }},
      {0.5, [&] { return "translate-tau:" + real(-1, 3); }},
      {0.5, [&] { return "translate-reuse:" + pick({"on", "off"}); }},
      {1, [&] { return "kv-cache:" + pick({"on", "off"}); }},
      {2, [] { return "generate-one"; }},
      {1, [] { return "generate-all"; }},
      {2, [&] { return "tau:" + pick({"0", "0.5", "1", "2.5", "-1", "nan", "x"}); }},
      {1, [&] { return "gen:" + num(-2, 24); }},
      {1, [&] { return "seed:" + num(0, 1000); }},
      {0.5, [&] { return "flash-blocks:" + num(-1, 9) + ":" + num(-1, 9); }},  // Algorithm 4-F's B_r, B_c (< 1 refused)
      // Top-k / top-p (0 and 1 turn them off; a k over N_V is cut to N_V, a p outside (0, 1] refused).
      {0.5, [&] { return pick({"top-k:", "translate-top-k:"}) + pick({"0", "1", "3", "40", "100000", "-1", "x"}); }},
      {0.5, [&] { return pick({"top-p:", "translate-top-p:"}) + pick({"1", "0.9", "0.5", "0.01", "0", "1.5", "nan", "x"}); }},
      {0.5, [&] { return "kv-paged:" + pick({"on", "off", "x"}); }},
      {0.3, [&] { return "kv-block:" + pick({"0", "1", "2", "4", "16", "64", "65", "1000000000", "-3", "x"}); }},
      // Speculative decoding: a draft by file name, another model (refused with its reason), K proposals.
      {0.3, [&] { return "draft:" + pick({"draft.safetensors", "default.safetensors", "bert.safetensors",
                                          "vit-digits.safetensors", "no-such-draft.safetensors", ""}); }},
      {0.5, [&] { return "speculate:" + pick({"1", "2", "4", "64", "0", "-1", "1000", "x"}); }},
      {0.3, [&] { return "spec-tau:" + pick({"0", "0.5", "1", "2.5", "-1", "1e9", "nan", "x"}); }},
      {0.3, [&] { return "spec-seed:" + pick({"0", "7", "1000", "-5", "x"}); }},
      {0.3, [&] { return "spec-gen:" + pick({"0", "1", "8", "24", "5000", "-2", "x"}); }},
      {5, [&] { return "open:" + panels[std::uniform_int_distribution<size_t>(0, panels.size() - 1)(rng_)]; }},
      {3, [&] { return "close:" + (std::bernoulli_distribution(0.1)(rng_) ? std::string("nosuchpanel")
                                                                            : panels[std::uniform_int_distribution<size_t>(0, panels.size() - 1)(rng_)]); }},
      {2, [&] { return "select:" + pick({"x", "X", "e", "W_e", "W_p", "Z", "P", "Y", "mask", "q", "??"}); }},
      {0.3, [&] { return "attention-views:" + pick({"both", "forward", "gradient", "x"}); }},
      {0.3, [&] { return "gradient-flow:" + pick({"compute", "wait", "x"}); }},
      // The Model map's box ids (app/logic/model_map.cpp): GPT's, BERT's, the encoder-decoder's, and none.
      {0.5, [&] { return "map-click:" + pick({"emb", "l1", "l1.attn", "l1.attn.h1", "l2.attn.h4", "l1.norm1", "l2.mlp",
                                              "final_norm", "unemb", "enc.emb", "enc.l1.attn.h2", "dec.l1.self",
                                              "dec.l1.cross.h1", "enc.Z", "l99.attn", "nosuchbox", ""}); }},
      {0.5, [&] { return "head-view:" + num(0, 4) + pick({"", ":1", ":2", ":1+2", ":1+2+3+4", ":0", ":9", ":x"}); }},
      // ALG:LINE of the lines that call MHAttention (vocabulary.hpp): GPT's 10:6, BERT's 9:5, ED's 8:5, 8:14, 8:16.
      {0.3, [&] { return "head-view-group:" + pick({"10:6", "9:5", "8:5", "8:14", "8:16", "10:7", "0:0", "x"}); }},
      {0.1, [&] { return "head-view-export:" + pick({"png", "svg", "pdf"}) + ":monkey-headview.out"; }},
      {0.5, [&] { return "lens-position:" + pick({"1", "2", "3", "5", "9", "0", "-1", "600", "x"}); }},
      // The Vision tab (a vit's image; refused with a message for a text model): test digits 1 … 360, pixels 1 … 8.
      {0.5, [&] { return "vision-digit:" + pick({"1", "2", "180", "360", "0", "361", "-1", "x"}); }},
      {0.5, [&] { return "vision-pixel:" + num(0, 9) + ":" + num(0, 9) + ":" + num(-1, 17); }},
      {0.2, [] { return "vision-clear"; }},
      {0.3, [&] { return "vision-layer:" + pick({"1", "2", "0", "3", "x"}); }},
      {0.3, [&] { return "vision-head:" + pick({"mean", "1", "4", "0", "5", "x"}); }},
      {1, [&] { return "theme:" + pick({"dark", "light", "pink"}); }},
      {0.3, [&] { return "font:" + num(8, 50); }},
      {1, [&] { return "notation:" + pick({"paper", "carpenter", "dyz", "latin"}); }},
      {0.5, [&] { return "contrast:" + pick({"on", "off"}); }},
      {0.5, [&] { return "palette:" + pick({"colorblind", "standard"}); }},
      {1, [&] { return "presentation:" + pick({"on", "off"}); }},
      {1, [&] { return "load:" + asset + pick({"default.safetensors", "bert.safetensors", "ed.safetensors",
                                                "draft.safetensors", "vit-digits.safetensors",
                                                "lessons/prefix-lm.safetensors", "lessons/flash-default.safetensors",
                                                "lessons/pre-ln-init.safetensors", "lessons/post-ln-init.safetensors",
                                                "no-such-model.safetensors",
                                                "default-config.json", ""}); }},
      {1, [&] { return "example:" + num(0, 4); }},
      {1, [&] { return "lesson-open:" + asset + "lessons/" +
                       pick({"01-tokens-embeddings-positions.stepformer", "02-one-attention-head.stepformer",
                             "03-masks.stepformer", "04-layer-norm.stepformer", "05-mlp-residual.stepformer",
                             "06-sampling-temperature.stepformer", "07-one-training-step.stepformer",
                             "08-bert-masked-lm.stepformer", "09-translation-cross-attention.stepformer",
                             "10-why-pre-ln-trains-more-stably.stepformer",
                             "11-backpropagation-through-one-attention-head.stepformer",
                             "12-attention-without-the-l-by-l-matrix.stepformer", "13-images-are-tokens-too.stepformer",
                             "no-such-lesson.stepformer"}); }},
      {2, [] { return "lesson-next"; }},
      {1, [] { return "lesson-prev"; }},
      {0.5, [&] { return "lesson-go:" + num(0, 12); }},
      {0.3, [] { return "lesson-stop"; }},
      {0.3, [&] { return "lesson-add-stop:" + text(); }},
      {0.2, [&] { return "lesson-move:" + num(0, 14) + ":" + num(0, 14); }},
      {0.2, [&] { return "lesson-delete:" + num(0, 14); }},
      {0.1, [] { return "lesson-save:monkey-lesson.out"; }},
      {1, [&] { return "train-task:" + pick({"sort", "reverse", "copy", "add", "words", "no-such-task"}); }},
      {1, [&] { return "train-mode:" + pick({"paper", "practical"}); }},
      {2, [&] { return "train-step:" + num(0, 4); }},
      {1, [] { return "train-trace"; }},
      {0.5, [] { return "train-use"; }},
      {0.5, [] { return "train-play"; }},
      {0.5, [] { return "train-pause"; }},
      {1, [&] { return "eta:" + std::to_string(std::pow(10.0, std::uniform_real_distribution<double>(-5, 0)(rng_))); }},
      {0.5, [&] { return "tokenizer:" + text(); }},
      {0.3, [&] { return "bpe-vocab:" + num(0, 80); }},
      {0.3, [&] { return "bpe-step:" + num(0, 5); }},
      {0.2, [] { return "bpe-run"; }},
      {0.3, [] { return "builder:open"; }},
      {0.3, [&] { return "builder:set:" + pick({"arch", "L", "H", "d_e", "d_mlp", "seed", "norm", "activation", "mask"}) +
                         "=" + pick({"gpt", "bert", "ed", "1", "2", "0", "-3", "64", "relu", "gelu", "x"}); }},
      {0.2, [] { return "builder:create"; }},
      {0.3, [&] { return "errata:show:" + pick({"paper-layer-norm-eps", "paper-tau-zero", "carpenter-pop-reversed",
                                                 "dyz-variance-formula", "no-such-erratum"}); }},
      {1, [&] { return "exp-ablate:" + num(0, 3) + ":" + num(0, 5); }},
      {0.5, [&] { return "exp-mask:" + num(0, 3) + ":" + num(0, 5) + ":" + num(0, 8) + ":" + num(0, 8); }},
      {0.5, [&] { return "exp-edit:" + pick({"X", "e", "Z", "q"}) + ":" + num(0, 8) + ":" + num(0, 8) + ":" + real(-3, 3); }},
      {0.3, [&] { return "exp-compare-prompt:" + text(); }},
      {0.3, [&] { return "exp-weight:" + pick({"W_q", "W_e", "W_u", "b_q", "??"}) + ":" + num(0, 8) + ":" + num(0, 8) + ":" + real(-3, 3); }},
      {0.3, [&] { return "exp-patch:" + text() + ":" + pick({"X", "Vt", "Q"}) + ":" + num(0, 3) + ":" + num(0, 8); }},
      {0.1, [&] { return "exp-compare-model:" + asset + pick({"default.safetensors", "draft.safetensors", "bert.safetensors",
                                                               "no-such-model.safetensors"}); }},
      {0.5, [] { return "exp-undo"; }},
      {0.3, [] { return "exp-reset"; }},
      {0.5, [&] { return "study:" + pick({"on", "off"}); }},
      {0.5, [&] { return "guess:" + num(0, 10); }},
      {0.3, [] { return "guess-skip"; }},
      {0.2, [&] { return "export:" + pick({"csv", "npy", "png", "svg"}) + ":monkey-export.out"; }},
      {0.1, [] { return "export-trace:monkey-trace.json"; }},
      {0.1, [] { return "export-trace-values:monkey-trace-values.out"; }},
      {0.1, [&] { return "export-value:" + pick({"X", "Q", "S", "P", "??"}) + ":" + pick({"csv", "npy", "png", "svg", "x"}) +
                         ":monkey-value.out"; }},
      {0.1, [&] { return "export-window:monkey-window.out"; }},
      {0.1, [&] { return "export-panel:" + pick({"Pseudocode", "Attention", "No such window"}) + ":monkey-panel.out"; }},
      {0.1, [&] { return "export-dialog:" + pick({"csv", "png", "x"}); }},  // an ImGui modal: Escape or a click closes it
      {0.2, [] { return "session-save:monkey.stepformer"; }},
      {0.2, [] { return "session-open:monkey.stepformer"; }},
      {0.1, [&] { return pick({"session-cancel", "session-open-anyway"}); }},
      {0.1, [&] { return "session-locate:" + asset + pick({"default.safetensors", "bert.safetensors", "no-such-model.safetensors"}); }},
      {0.2, [] { return "focus:prompt"; }},
      {0.3, [&] { return "breakpoint-adjoint:" + num(1, 15) + ":" + num(1, 12); }},
      {4, [&] { return "key:" + pick({"F5", "F10", "F11", "S-F11", "F6", "PageDown", "PageUp", "Left", "Right", "Home",
                                       "End", "Space", "Escape", "G", "R", "B", "C-=", "C--", "C-0"}); }},
      {1, [&] { return "mouse:" + num(0, 1279) + ":" + num(0, 799); }},
      {1, [&] { return "wheel:" + num(-3, 3); }},
      {4, [&] { return "click:" + num(0, 1279) + ":" + num(30, 770); }},  // below the menu bar, above the status bar
      {0.3, [&] { return "right-click:" + num(0, 1279) + ":" + num(30, 770); }},
      {0.3, [&] { return "drag:" + num(0, 1279) + ":" + num(30, 770) + ":" + num(0, 1279) + ":" + num(30, 770); }},
      {0.4, [&] { return "click-item:" + pick({"View/Presentation", "View/Notation", "View/Callstack", "Help/Welcome",
                                              "Help/About Stepformer", "Into ▶", "Start lesson 1", "Show at start",
                                              "Copy caption", "File/No such item"}); }},
      {0.5, [&] { return "welcome:" + pick({"show", "hide", "lesson", "attention", "train"}); }},
      {0.5, [&] { return "stop-at-eos:" + pick({"on", "off"}); }},
      {0.5, [&] { return "caption:" + pick({"collapse", "expand"}); }},
      {0.5, [] { return "wait"; }},
      {0.5, [] { return "wait-trace"; }},
      {0.3, [&] { return "files:" + pick({STEPFORMER_ASSETS, STEPFORMER_ASSETS "/lessons", "/no/such/folder"}); }},
      {0.2, [] { return "files-open-folder"; }},
      {0.3, [&] { return "attention:" + pick({"cpu", "gpu"}); }},
  };
  std::vector<double> weights;
  for (const auto& a : actions) weights.push_back(a.first);
  return actions[std::discrete_distribution<size_t>(weights.begin(), weights.end())(rng_)].second();
}

bool Monkey::step_gesture() {
  if (!gesture_) return false;
  try {
    gesture_->step(++gesture_frame_);
  } catch (const std::exception& e) {
    exceptions_.push_back(std::string(g_current) + ": " + e.what());
    gesture_.reset();
    return true;
  }
  if (gesture_->busy()) return true;
  if (!gesture_->errors().empty()) {  // e.g. click-item of a label not drawn: a message, not a crash
    ++failed_;
    const std::string& a = gesture_->errors().front();
    ++failed_by_verb_[a.substr(7, a.find(':') - 7)];  // "action VERB:…"
  }
  gesture_.reset();
  return true;
}

void Monkey::click() {
  ImGui_ImplGlfw_MouseButtonCallback(app_.window, GLFW_MOUSE_BUTTON_LEFT, GLFW_PRESS, 0);
  mouse_down_ = true;
}

void Monkey::apply(const std::string& action) {
  std::snprintf(g_current, sizeof g_current, "action %lld of seed %llu: %.400s", static_cast<long long>(applied_ + 1),
                static_cast<unsigned long long>(opt_.seed), action.c_str());
  if (echo_) std::printf("monkey: %s\n", g_current), std::fflush(stdout);
  const std::string verb = action.substr(0, action.find(':'));
  bool ok = true;
  try {
    if (verb == "click") {  // the pointer's left button at X:Y, released on the next frame
      auto runner = std::make_unique<ScriptRunner>(app_, std::vector<std::string>{"mouse" + action.substr(5)});
      runner->step(1);
      click();
    } else if (verb == "right-click" || verb == "drag" || verb == "click-item") {  // stepped in step()
      gesture_ = std::make_unique<ScriptRunner>(app_, std::vector<std::string>{action});
      gesture_frame_ = 1;
      gesture_->step(gesture_frame_);
    } else {
      auto runner = std::make_unique<ScriptRunner>(app_, std::vector<std::string>{action});
      runner->step(1);
      ok = runner->errors().empty();
      held_.push_back(std::move(runner));  // a key:KEY action's key is released on the next frame
    }
  } catch (const std::exception& e) {
    exceptions_.push_back(std::string(g_current) + ": " + e.what());
    ok = false;
  }
  ++applied_;
  if (!ok) {
    ++failed_;
    ++failed_by_verb_[verb];
  }
}

void Monkey::settle() {
  // The start state has no training run (the tab configures one on its first use); the session file
  // below does not hold one either, so the run, whatever the monkey trained, is let go here.
  app_.panels->training.release();
  for (const std::string& a : {std::string("lesson-stop"), std::string("presentation:off"),
                               std::string("study:off"), std::string("exp-reset"), "session-open:" + settle_file_,
                               std::string("session-open-anyway"), std::string("wait-trace")})
    try {
      ScriptRunner(app_, {a}).step(1);  // one that has nothing to do fails with a message: fine
    } catch (const std::exception& e) {
      exceptions_.push_back("settling, " + a + ": " + e.what());
    }
}

void Monkey::step() {
  if (frames_++ == 0) {
    start_ = std::chrono::steady_clock::now();
    if (!settle_file_.empty()) ScriptRunner(app_, {"session-save:" + settle_file_}).step(1);
  }
  for (auto& runner : held_) runner->step(2);  // an even frame: releases its keys, applies nothing
  held_.clear();
  if (mouse_down_) ImGui_ImplGlfw_MouseButtonCallback(app_.window, GLFW_MOUSE_BUTTON_LEFT, GLFW_RELEASE, 0);
  mouse_down_ = false;
  if (g_settle && settle_wait_ < 0) {
    g_settle = 0;
    settle();
    settle_wait_ = kSettleFrames;
  }
  if (settle_wait_ > 0) {
    if (--settle_wait_ == 1) ImGui::GetCurrentContext()->GcCompactAll = true;  // done in the next NewFrame
    return;
  }
  if (settle_wait_ == 0) {
    settle_wait_ = -1;
    malloc_trim(0);
    // Bytes malloc has handed out and not had back, in its arenas (uordblks) and as blocks with their
    // own mapping (hblkhd, 2 MiB and more: app/main.cpp): growth here is memory kept (a leak, a
    // cache), growth of RSS alone is the allocator's fragmentation.
    const struct mallinfo2 heap = mallinfo2();
    std::printf("monkey: settled after %lld actions: VmRSS %lld KiB, heap in use %lld KiB\n",
                static_cast<long long>(applied_), static_cast<long long>(rss_kib()),
                static_cast<long long>((heap.uordblks + heap.hblkhd) / 1024));
    std::fflush(stdout);
    // For a heap profiler's snapshot of exactly the settled state (docs/soak.md): stop here, to be killed.
    if (std::getenv("STEPFORMER_MONKEY_STOP_SETTLED")) std::raise(SIGSTOP);
  }
  if (rss_at_1000_ == 0 && applied_ >= 1000) rss_at_1000_ = rss_kib();  // after the 1,000th action's frame
  if (step_gesture()) return;
  for (int k = 0; k < opt_.per_frame && !done() && !gesture_; ++k) apply(next_action());
}

bool Monkey::report() const {
  const double s = std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  std::printf("monkey: seed %llu, %lld actions applied (%d a frame) in %lld frames, %.1f s (%.1f actions/s), "
              "%lld failed with a message\n",
              static_cast<unsigned long long>(opt_.seed), static_cast<long long>(applied_), opt_.per_frame,
              static_cast<long long>(frames_), s, s > 0 ? applied_ / s : 0.0, static_cast<long long>(failed_));
  std::printf("monkey: failed by verb:");
  for (const auto& [verb, n] : failed_by_verb_) std::printf(" %s %lld,", verb.c_str(), static_cast<long long>(n));
  std::printf("\nmonkey: RSS %lld KiB after the first 1000 actions, %lld KiB at the end, peak %lld KiB\n",
              static_cast<long long>(rss_at_1000_), static_cast<long long>(rss_kib()),
              static_cast<long long>(peak_rss_kib()));
  for (const auto& e : exceptions_) std::printf("monkey: exception escaped %s\n", e.c_str());
  std::fflush(stdout);
  return exceptions_.empty();
}

}  // namespace sf
