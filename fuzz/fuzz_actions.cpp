// The app's --actions script. The input is the value of --actions: parsed exactly as the app parses
// it (parse_app_options on {"stepformer", "--actions", DATA}, i.e. app/options.cpp's split_actions),
// then applied, in order, to a headless Session (app/session.cpp, the app's logic without a window).
//
// What App::apply_action (app/app.cpp) does needs a window for most verbs that are not Session calls
// (panels, themes, fonts, the mouse), so this target mirrors apply_action for the verbs that reach
// Session — the same argument parsing, the same Session call — and only parses the arguments of the
// others. Limits, so that one input stays well under the 10 s timeout under ASan: at most 64 actions,
// gen:N at most 16 tokens (the app allows 4096), and load:PATH only for files under assets/ (the
// bundled models: a fuzzer must not open /dev/zero). docs/hardening.md says what is covered.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <string>
#include <vector>

#include "app/options.hpp"
#include "app/session.hpp"

namespace {

// apply_action's `ints`: the argument split at ':' into whole numbers (false if one is not).
bool ints(const std::string& arg, std::vector<int>& out) {
  out.clear();
  std::string cur;
  for (char c : arg + ":") {
    if (c != ':') {
      cur += c;
      continue;
    }
    try {
      out.push_back(std::stoi(cur));
    } catch (const std::logic_error&) {
      return false;
    }
    cur.clear();
  }
  return true;
}

bool number(const std::string& arg, double& x) {
  try {
    x = std::stod(arg);
    return true;
  } catch (const std::logic_error&) {
    return false;
  }
}

// A bundled model (assets/NAME), or nothing: load:PATH opens only those.
bool bundled(const std::string& arg) {
  std::error_code ec;
  const auto assets = std::filesystem::weakly_canonical(sf::assets_dir(), ec);
  const auto p = std::filesystem::weakly_canonical(assets / std::filesystem::path(arg).filename(), ec);
  return !ec && p.parent_path() == assets && std::filesystem::is_regular_file(p, ec);
}

void apply(sf::Session& s, const std::string& action) {
  const size_t colon = action.find(':');
  const std::string verb = action.substr(0, colon);
  const std::string arg = colon == std::string::npos ? "" : action.substr(colon + 1);
  std::vector<int> v;
  double x = 0;
  if (verb == "step-into") s.step_into();
  else if (verb == "step-over") s.step_over();
  else if (verb == "step-out") s.step_out();
  else if (verb == "step-back") s.step_back();
  else if (verb == "step-back-over") s.step_back_over();
  else if (verb == "continue") s.continue_run();
  else if (verb == "restart") s.restart();
  else if (verb == "wait-trace") s.wait_for_trace();
  else if (verb == "jump") {
    if (ints(arg, v) && v.size() == 1) s.jump(static_cast<size_t>(std::max(1, v[0]) - 1));
  } else if (verb == "goto") {
    if (ints(arg, v) && v.size() >= 2) {
      v.resize(5, 0);
      s.jump_to(v[0], v[1], v[2], v[3], v[4]);
    }
  } else if (verb == "breakpoint") {
    if (ints(arg, v) && v.size() == 2) s.toggle_breakpoint(v[0], v[1]);
  } else if (verb == "prompt") {
    s.set_prompt(arg);
  } else if (verb == "context") {
    if (s.arch().has_context()) s.set_context(arg);
  } else if (verb == "mask") {
    std::string error;
    if (ints(arg, v) && v.size() == 1 && s.arch().output() == sf::OutputKind::FillIn) s.toggle_mask(v[0], error);
  } else if (verb == "fill-trace") {
    s.trace_fill();
  } else if (verb == "translate-one" || verb == "translate-all") {
    if (s.arch().output() == sf::OutputKind::Translation) s.trace_translate(verb == "translate-one");
  } else if (verb == "translate-tau") {
    if (number(arg, x)) s.translation_settings.tau = std::clamp(x, 0.0, 100.0);
  } else if (verb == "kv-cache") {
    s.sampling.kv_cache = s.translation_settings.kv_cache = arg == "on";
  } else if (verb == "translate-reuse") {
    s.translation_settings.reuse_encoding = arg == "on";
  } else if (verb == "frame") {
    // The app shows the frame at depth v[0] of the call stack at the cursor.
    if (ints(arg, v) && v.size() == 1) {
      const auto stack = s.trace().call_stack(s.cursor());
      if (v[0] >= 0 && v[0] < static_cast<int>(stack.size())) (void)stack[v[0]];
    }
  } else if (verb == "generate-one") {
    s.trace_generate(1, true);
  } else if (verb == "generate-all") {
    s.trace_generate(s.sampling.l_gen, false);
  } else if (verb == "tau") {
    if (number(arg, x)) s.sampling.tau = std::clamp(x, 0.0, 100.0);
  } else if (verb == "gen") {
    if (ints(arg, v) && v.size() == 1) s.sampling.l_gen = std::clamp(v[0], 1, 16);
  } else if (verb == "seed") {
    if (ints(arg, v) && v.size() == 1) s.sampling.seed = static_cast<uint64_t>(v[0]);
  } else if (verb == "load") {
    std::string error;
    if (bundled(arg)) s.load_model(sf::assets_dir() + "/" + std::filesystem::path(arg).filename().string(), error);
  } else {
    // Window-only verbs (example, font, wheel, mouse, train-step, …): their numeric arguments parsed as the app does.
    ints(arg, v);
  }
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const uint8_t* data, size_t size) {
  std::string value(reinterpret_cast<const char*>(data), size);
  // argv strings end at their first NUL, as the shell would pass them.
  value.resize(value.find('\0') == std::string::npos ? value.size() : value.find('\0'));
  std::string program = "stepformer", flag = "--actions";
  char* argv[] = {program.data(), flag.data(), value.data(), nullptr};
  sf::AppOptions options;
  std::string error;
  if (!sf::parse_app_options(3, argv, options, error)) return 0;
  if (options.actions.size() > 64) return 0;
  // No try: the app does not catch around apply_action either, so anything thrown is a finding.
  sf::Session s;
  for (const std::string& a : options.actions) apply(s, a);
  s.wait_for_trace();
  return 0;
}
