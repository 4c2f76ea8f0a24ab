#include "app/logic/session_actions.hpp"

#include <algorithm>
#include <cstdint>

#include "app/logic/flash_blocks.hpp"
#include "app/logic/speculative_actions.hpp"
#include "app/session.hpp"

namespace sf {

bool action_ints(const std::string& arg, std::vector<int>& out) {
  out.clear();
  std::string cur;
  for (char c : arg + ":") {
    if (c != ':') {
      cur += c;
      continue;
    }
    try {
      out.push_back(std::stoi(cur));
    } catch (...) {
      return false;
    }
    cur.clear();
  }
  return true;
}

namespace {

// A τ in [0, 100]; false if the argument is not a number.
bool temperature(const std::string& arg, double& tau) {
  try {
    tau = std::clamp(std::stod(arg), 0.0, 100.0);
    return true;
  } catch (...) {
    return false;
  }
}

}  // namespace

ActionResult apply_session_action(Session& s, const std::string& verb, const std::string& arg, std::string& error) {
  const auto fail = [&](const std::string& message) {
    error = message;
    return ActionResult::Failed;
  };
  std::vector<int> v;
  if (verb == "step-into") s.step_into();
  else if (verb == "step-over") s.step_over();
  else if (verb == "step-out") s.step_out();
  else if (verb == "step-back") s.step_back();
  else if (verb == "step-back-over") s.step_back_over();
  else if (verb == "continue") s.continue_run();
  else if (verb == "restart") s.restart();
  else if (verb == "wait") {
  } else if (verb == "wait-trace") {
    s.wait_for_trace();
  } else if (verb == "jump") {
    if (!action_ints(arg, v) || v.size() != 1) return fail("jump needs a step number");
    s.jump(static_cast<size_t>(std::max(1, v[0]) - 1));
  } else if (verb == "goto" || verb == "goto-adjoint") {
    // goto-adjoint: the backward listing's line, the adjoint of forward line LINE (a traced training step).
    if (!action_ints(arg, v) || v.size() < 2) return fail(verb + " needs ALG:LINE[:l:h:t]");
    v.resize(5, 0);
    const Pass pass = verb == "goto" ? Pass::Forward : Pass::Backward;
    if (!s.jump_to(LineRef{v[0], v[1], pass}, v[2], v[3], v[4]))
      return fail(pass == Pass::Forward ? "no such line in the trace"
                                        : "no such adjoint line in the trace (trace a training step: train-trace, "
                                          "then step into its update line)");
  } else if (verb == "breakpoint" || verb == "breakpoint-adjoint") {
    if (!action_ints(arg, v) || v.size() != 2) return fail(verb + " needs ALG:LINE");
    s.toggle_breakpoint(LineRef{v[0], v[1], verb == "breakpoint" ? Pass::Forward : Pass::Backward});
  } else if (verb == "prompt") {
    s.set_prompt(arg);
  } else if (verb == "context") {
    if (!s.arch().has_context()) return fail("this model reads no context z");
    s.set_context(arg);
  } else if (verb == "mask") {
    if (!action_ints(arg, v) || v.size() != 1) return fail("mask needs a position T (1-based, <bos> is 1)");
    if (s.arch().output() != OutputKind::FillIn) return fail("this model does not fill in [MASK]");
    if (!s.toggle_mask(v[0], error)) return ActionResult::Failed;
  } else if (verb == "fill-trace") {
    s.trace_fill();
  } else if (verb == "translate-one" || verb == "translate-all") {
    if (s.arch().output() != OutputKind::Translation) return fail("this model does not translate");
    s.trace_translate(verb == "translate-one");
  } else if (verb == "translate-tau") {
    if (!temperature(arg, s.translation().settings.tau)) return fail("translate-tau needs a number");
  } else if (verb == "kv-cache") {
    s.generation().settings.kv_cache = s.translation().settings.kv_cache = arg == "on";
  } else if (verb == "stop-at-eos") {
    if (arg != "on" && arg != "off") return fail("stop-at-eos needs on or off");
    s.generation().settings.stop_at_eos = arg == "on";
  } else if (verb == "translate-reuse") {
    s.translation().settings.reuse_encoding = arg == "on";
  } else if (verb == "generate-one") {
    s.trace_generate(1, true);
  } else if (verb == "generate-all") {
    s.trace_generate(s.generation().settings.l_gen, false);
  } else if (verb == "tau") {
    if (!temperature(arg, s.generation().settings.tau)) return fail("tau needs a number");
  } else if (verb == "gen") {
    if (!action_ints(arg, v) || v.size() != 1) return fail("gen needs a whole number");
    s.generation().settings.l_gen = std::clamp(v[0], 1, 4096);
  } else if (verb == "seed") {
    if (!action_ints(arg, v) || v.size() != 1) return fail("seed needs a whole number");
    s.generation().settings.seed = static_cast<uint64_t>(v[0]);
  } else if (verb.rfind("vision-", 0) == 0 && !s.reads_image()) {  // the verbs of a vit's image x
    return fail(verb + ": this model reads text, not an image (open a vision transformer, arch \"vit\")");
  } else if (verb == "vision-digit") {
    if (!action_ints(arg, v) || v.size() != 1) return fail("vision-digit needs N, a test digit 1 … 360");
    if (!s.select_test_digit(v[0], error)) return ActionResult::Failed;
  } else if (verb == "vision-pixel") {
    if (!action_ints(arg, v) || v.size() != 3)
      return fail("vision-pixel needs R:C:V (row and column 1 … 8, intensity 0 … 16), e.g. vision-pixel:4:5:16");
    if (!s.set_pixel(v[0], v[1], v[2], error)) return ActionResult::Failed;
  } else if (verb == "vision-clear") {
    s.clear_image();
  } else if (verb == "flash-blocks") {  // FlashAttention (Algorithm 4-F) with B_r = R, B_c = C
    if (!action_ints(arg, v) || v.size() != 2) return fail("flash-blocks needs R:C, two whole numbers (B_r:B_c), e.g. flash-blocks:4:4");
    if (!set_flash_blocks(s, v[0], v[1], error)) return ActionResult::Failed;
  } else {
    return apply_speculative_action(s, verb, arg, error);  // Algorithm 14-S's verbs, or NotMine
  }
  return ActionResult::Done;
}

}  // namespace sf
