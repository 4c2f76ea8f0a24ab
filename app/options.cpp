#include "app/options.hpp"

#include <cstdio>
#include <cstdlib>
#include <sstream>

namespace sf {

const char* app_usage() {
  return "usage: stepformer [options] [FILE.stepformer]\n"
         "  Steps through the pseudocode of \"Formal Algorithms for Transformers\" while a real model computes.\n"
         "  --model PATH               open this checkpoint: a .safetensors file, or a folder holding one with\n"
         "                             its config.json and tokenizer files (Hugging Face GPT-2 or BERT,\n"
         "                             nanoGPT/minGPT); default: assets/default.safetensors\n"
         "  --prompt TEXT              the prompt to trace (default: \"hello=\", which the default model sorts)\n"
         "  --size WxH                 window size in pixels (default 1600x1000)\n"
         "  --scale S                  content scale (HiDPI) from 1 to 4, e.g. 2: text and spacing S times\n"
         "                             larger; default: the monitor's, as GLFW reports it\n"
         "  --frames N                 run N frames, then exit (for tests and screenshots)\n"
         "  --actions A,B,...          apply scripted actions in order, one per frame:\n"
         "                               step-into, step-over, step-out, step-back, step-back-over,\n"
         "                               continue, restart, jump:K, goto:ALG:LINE[:l:h:t], prompt:TEXT,\n"
         "                               open:PANEL, close:PANEL, select:NAME, frame:DEPTH,\n"
         "                               breakpoint:ALG:LINE, key:KEY (F5 F10 F11 S-F11 C-= C-- ...),\n"
         "                               click:X:Y, right-click:X:Y, drag:X1:Y1:X2:Y2 (the pointer, in window\n"
         "                               pixels; a drag moves over four frames), click-item:LABEL (the widget\n"
         "                               drawn with that label; a menu item as a path: click-item:View/Presentation),\n"
         "                               dump-state:FILE, screenshot:FILE (written at the end of their frame),\n"
         "                               generate-one, generate-all, tau:T, gen:N, seed:S, kv-cache:on|off,\n"
         "                               stop-at-eos:on|off (the Sampling tab's \"stop at eos_token\"),\n"
         "                               top-k:K, top-p:P, translate-top-k:K, translate-top-p:P (top-k / top-p;\n"
         "                               0 and 1 turn them off), kv-paged:on|off, kv-block:B (the paged KV cache),\n"
         "                               context:TEXT (a model with a context z), example:N (File › Examples),\n"
         "                               mask:T (toggle [MASK] at prompt position T, <bos> = 1), fill-trace,\n"
         "                               translate-one, translate-all, translate-tau:T, translate-reuse:on|off,\n"
         "                               theme:dark|light, font:PX, load:PATH (a checkpoint or a model folder),\n"
         "                               focus:prompt, mouse:X:Y (move the pointer, e.g. to show a tooltip),\n"
         "                               wheel:N (turn the mouse wheel N notches at the pointer), wait,\n"
         "                               wait-trace (until a big model's trace, made off the UI thread, is shown),\n"
         "                               files:PATH (File › Open browsing folder PATH), files-open-folder\n"
         "                               (its \"Open this folder\" button), tokenizer:TEXT (the Tokenizer tab's\n"
         "                               BPE corpus), bpe-vocab:N, bpe-step:N (N merges), bpe-run\n"
         "                               train-task:NAME|FILE, train-mode:paper|practical, train-step:N,\n"
         "                               train-trace (one traced update of Algorithm 13), train-use,\n"
         "                               train-play, train-pause, eta:V (the Training tab's η),\n"
         "                               notation:paper|carpenter|dyz (the Notations tab),\n"
         "                               builder:open, builder:set:KEY=VALUE, builder:create,\n"
         "                               builder:save:FILE (File › New model…), errata:show:ID (Help › Errata),\n"
         "                               attention:cpu|gpu (the GPU tab's CPU / GPU choice),\n"
         "                               attention-views:both|forward|gradient (the Attention tab after a\n"
         "                               traced backward: S, A, ∇S and ∇A, or S and A, or ∇S and ∇A),\n"
         "                               gradient-flow:compute|wait (the Gradient flow tab's on-demand gradient)\n"
         "                               map-click:BOX_ID (the Model map: jump to a box's first step),\n"
         "                               head-view:LAYER[:H+H...], head-view-group:ALG:LINE,\n"
         "                               head-view-export:png|svg:FILE (the Head view)\n"
         "                             sessions (docs/sessions.md): session-save:FILE, session-open:FILE,\n"
         "                               session-locate:MODEL, session-open-anyway, session-cancel (the\n"
         "                               missing- or changed-model dialog), contrast:on|off (high-contrast\n"
         "                               theme), palette:colorblind|standard\n"
         "                             lessons (docs/lessons.md): lesson-open:FILE|NAME, lesson-next, lesson-prev,\n"
         "                               lesson-go:N, lesson-add-stop:NOTE, lesson-save:FILE, lesson-move:FROM:TO,\n"
         "                               lesson-delete:N, lesson-stop, presentation:on|off (also key:F6,\n"
         "                               key:PageDown, key:PageUp), caption:collapse|expand (also key:F7)\n"
         "                             the welcome (Help › Welcome): welcome:show|hide, welcome:lesson|attention|train\n"
         "                               (its three buttons)\n"
         "                             experiments (docs/experiments.md): exp-edit:NAME:ROW:COL:VALUE,\n"
         "                               exp-weight:NAME:ROW:COL:VALUE, exp-ablate:L:H, exp-mask:L:H:TZ:TX,\n"
         "                               exp-patch:PROMPT_B:X|Vt:L:T, exp-compare-prompt:TEXT,\n"
         "                               exp-compare-model:PATH, exp-undo, exp-reset\n"
         "                             predict, then reveal (docs/study.md): study:on|off, guess:N, guess-skip\n"
         "                             export (docs/export.md): export:csv|npy|png|svg:FILE (the Tensor view's\n"
         "                               value), export-value:NAME:FORMAT:FILE, export-window:FILE,\n"
         "                               export-panel:WINDOW:FILE, export-trace:FILE, export-trace-values:FILE,\n"
         "                               export-dialog:FORMAT\n"
         "                             PANEL is one of pseudocode, callstack, variables, tensor, attention,\n"
         "                             layernorm, sampling, fillin, translation, training, gpu, about, files,\n"
         "                             notation, builder, errata, tokenizer, experiments, study, lesson\n"
         "                             (a comma inside prompt:TEXT or context:TEXT is written \\,)\n"
         "  FILE.stepformer            open this session as it was saved, or play this lesson\n"
         "  --session FILE             the same (docs/sessions.md)\n"
         "  --screenshot FILE.png      save a screenshot after the last frame\n"
         "  --bench N                  time N frames with the default panels and the prompt-edit-to-screen\n"
         "                             latency (every 4th frame edits the prompt), print the medians, exit\n"
         "  --gl33                     use an OpenGL 3.3 context, as on a machine without 4.3 (no compute)\n"
         "  --no-ini                   do not read or write the settings file (and no welcome at start)\n"
         "  --dump-state FILE.json     after the last frame, write the cursor, the open windows' rectangles,\n"
         "                             the current line's rectangle and whether it shows whole, the text\n"
         "                             clipped and the labelled widgets (for tests)\n"
         "  --monkey SEED:N[:K]        apply N random actions drawn from SEED (K a frame, default 1): the\n"
         "                             actions above, clicks and η changes; print a summary (actions applied,\n"
         "                             failures by verb, frames, RSS) and exit (--frames is ignored; File ›\n"
         "                             Quit does not end it); SEED:forever[:K] runs until SIGINT or SIGTERM\n"
         "                             (scripts/soak.sh, docs/soak.md)\n"
         "  --version                  print the version, the build's options (instruction set, build type,\n"
         "                             compiler, Eigen, GPU shaders) and the data folder in use, and exit\n"
         "  --help                     this text\n";
}

bool parse_monkey(const std::string& spec, MonkeyOptions& out, std::string& error) {
  error = "--monkey needs SEED:N[:K] or SEED:forever[:K] (N actions from SEED, K a frame), not \"" + spec + "\"";
  const size_t c1 = spec.find(':');
  if (c1 == std::string::npos) return false;
  const size_t c2 = spec.find(':', c1 + 1);
  const std::string seed = spec.substr(0, c1), n = spec.substr(c1 + 1, c2 == std::string::npos ? c2 : c2 - c1 - 1);
  try {
    size_t used = 0;
    out.seed = std::stoull(seed, &used);
    if (used != seed.size()) return false;
    out.actions = n == "forever" ? -1 : std::stoll(n, &used);
    if (n != "forever" && (used != n.size() || out.actions < 1)) return false;
    out.per_frame = 1;
    if (c2 != std::string::npos) {
      const std::string k = spec.substr(c2 + 1);
      out.per_frame = std::stoi(k, &used);
      if (used != k.size() || out.per_frame < 1 || out.per_frame > 1000) return false;
    }
  } catch (...) {
    return false;
  }
  error.clear();
  return true;
}

static std::vector<std::string> split_actions(const std::string& s) {
  std::vector<std::string> out;
  std::string cur;
  for (size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 1 < s.size() && s[i + 1] == ',') {
      cur += ',';
      ++i;
    } else if (s[i] == ',') {
      out.push_back(cur);
      cur.clear();
    } else {
      cur += s[i];
    }
  }
  if (!cur.empty()) out.push_back(cur);
  return out;
}

bool parse_app_options(int argc, char** argv, AppOptions& o, std::string& error) {
  for (int i = 1; i < argc; ++i) {
    const std::string a = argv[i];
    auto value = [&](std::string& dst) {
      if (i + 1 >= argc) {
        error = a + " needs a value";
        return false;
      }
      dst = argv[++i];
      return true;
    };
    std::string v;
    if (a == "--help" || a == "-h") {
      o.help = true;
    } else if (a == "--version") {
      o.version = true;
    } else if (a == "--frames") {
      if (!value(v)) return false;
      try {
        o.frames = std::stoi(v);
      } catch (...) {
        error = "--frames needs a whole number, not \"" + v + "\"";
        return false;
      }
      if (o.frames < 1) {
        error = "--frames must be at least 1";
        return false;
      }
    } else if (a == "--actions") {
      if (!value(v)) return false;
      o.actions = split_actions(v);
    } else if (a == "--screenshot") {
      if (!value(o.screenshot)) return false;
    } else if (a == "--model") {
      if (!value(o.model)) return false;
    } else if (a == "--prompt") {
      if (!value(o.prompt)) return false;
    } else if (a == "--size") {
      if (!value(v)) return false;
      if (std::sscanf(v.c_str(), "%dx%d", &o.width, &o.height) != 2 || o.width < 320 || o.height < 240 ||
          o.width > 16384 || o.height > 16384) {
        error = "--size needs WxH, e.g. 1600x1000 (at least 320x240)";
        return false;
      }
    } else if (a == "--scale") {
      if (!value(v)) return false;
      char* end = nullptr;
      o.scale = std::strtof(v.c_str(), &end);
      if (end == v.c_str() || *end || !(o.scale >= 1.0f && o.scale <= 4.0f)) {
        error = "--scale needs a content scale from 1 to 4, e.g. --scale 2 (a HiDPI screen), not \"" + v + "\"";
        return false;
      }
    } else if (a == "--bench") {
      if (!value(v)) return false;
      try {
        o.bench = std::stoi(v);
      } catch (...) {
        o.bench = 0;
      }
      if (o.bench < 1) {
        error = "--bench needs a number of frames, e.g. --bench 200";
        return false;
      }
    } else if (a == "--monkey") {
      if (!value(v) || !parse_monkey(v, o.monkey, error)) return false;
    } else if (a == "--dump-state") {
      if (!value(o.dump_state)) return false;
    } else if (a == "--session") {
      if (!value(o.session)) return false;
    } else if (!a.empty() && a[0] != '-') {
      if (!o.session.empty()) {
        error = "one session at a time: " + o.session + " and " + a;
        return false;
      }
      o.session = a;
    } else if (a == "--gl33") {
      o.gl33 = true;
    } else if (a == "--no-ini") {
      o.no_ini = true;
    } else {
      error = "unknown option " + a + " (see --help)";
      return false;
    }
  }
  return true;
}

}  // namespace sf
