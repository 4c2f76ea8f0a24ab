#include "app/logic/session_run.hpp"

namespace sf {

SessionRun current_run(const Session& s) {
  SessionRun r;
  switch (s.run_kind()) {
    case RunKind::Forward: r.kind = "forward"; break;
    case RunKind::Generate:
      r.kind = "generate";
      r.generate = static_cast<int>(s.generation().result().y.size());
      break;
    case RunKind::Translate: {
      r.kind = "translate";
      const int shown = s.translation().shown();
      r.translate = shown == static_cast<int>(s.translation().result().steps.size()) ? 0 : shown;
      break;
    }
    case RunKind::Training: r.kind = "training"; break;
    case RunKind::Speculate: r.kind = "forward"; break;  // not saved: the draft is another file (speculative_actions.cpp)
  }
  return r;
}

namespace {

// Why s's model has no `kind` run ("" when it has).
std::string refusal(const Session& s, const std::string& kind) {
  const OutputKind out = s.arch().output();
  if (kind == "generate" && out != OutputKind::Continuation)
    return "the run \"generate\" (Algorithm 14) needs a model that continues text; " + s.model_label() + " does not";
  if (kind == "fill" && out != OutputKind::FillIn)
    return "the run \"fill\" needs a model that fills in [MASK] (BERT); " + s.model_label() + " does not";
  if (kind == "translate" && out != OutputKind::Translation)
    return "the run \"translate\" (Algorithm 15) needs an encoder-decoder model; " + s.model_label() + " is not one";
  if (kind == "training") return "a training run is traced by the Training tab, not from a saved run";
  return "";
}

}  // namespace

bool trace_run(Session& s, const SessionRun& run, std::string& error) {
  error = refusal(s, run.kind);
  if (!error.empty()) return false;
  RunKind want = RunKind::Forward;
  if (run.kind == "forward") {
    s.trace_forward();
  } else if (run.kind == "fill") {
    s.trace_fill();
  } else if (run.kind == "generate") {
    want = RunKind::Generate;
    s.trace_generate(run.generate, false);
  } else if (run.kind == "translate") {
    want = RunKind::Translate;
    if (s.run_kind() == RunKind::Translate) s.trace_forward();  // so that the steps are counted from the first
    if (run.translate == 0) {
      s.trace_translate(false);
    } else {
      for (int i = 0; i < run.translate; ++i) s.trace_translate(true);
    }
  } else {
    error = "unknown run \"" + run.kind + "\"";
    return false;
  }
  s.wait_for_trace();
  if (s.run_kind() != want) {  // the run failed and the session went back to the forward pass
    error = s.prompt_input().error.empty() ? "the run \"" + run.kind + "\" failed" : s.prompt_input().error;
    return false;
  }
  return true;
}

bool place_cursor(Session& s, const CursorRef& c) {
  s.wait_for_trace();
  const size_t k = c.alg == 0 ? SIZE_MAX : resolve_cursor(s.trace(), c);
  if (k == SIZE_MAX) {
    s.restart();
    return c.alg == 0;
  }
  s.jump_ungated(k);
  return true;
}

}  // namespace sf
