// The app's --actions script. The input is the value of --actions: parsed exactly as the app parses
// it (parse_app_options on {"stepformer", "--actions", DATA}, i.e. app/options.cpp's split_actions),
// then applied, in order, to a headless Session (app/session.cpp, the app's logic without a window).
//
// What App::apply_action (app/app.cpp) does needs a window for most verbs that are not Session calls
// (panels, themes, fonts, the mouse), so this target applies the verbs that reach Session through
// the function App::apply_action itself calls (app/logic/session_actions.hpp), and only parses the
// arguments of the others. Limits, so that one input stays well under the 10 s timeout under ASan: at
// most 64 actions, gen:N and spec-gen:N at most 16 tokens (the app allows 4096), flash-blocks:R:C at least 4:4
// (the app allows 1:1), and load:PATH and draft:PATH only
// for files under assets/ (the bundled models: a fuzzer must not open /dev/zero). Every input starts from the app's start state, the
// default model opened once per process (Session(const SessionStart&)). docs/hardening.md says what is covered.
#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <filesystem>
#include <string>
#include <vector>

#include "app/logic/session_actions.hpp"
#include "app/options.hpp"
#include "app/session.hpp"

namespace {

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
  std::string error;
  std::vector<int> v;
  if (verb == "load") {
    if (bundled(arg)) s.load_model(sf::assets_dir() + "/" + std::filesystem::path(arg).filename().string(), error);
  } else if (verb == "draft") {
    // draft:PATH opens any file too: as for load:, only the bundled models, by name.
    if (bundled(arg)) sf::apply_session_action(s, verb, std::filesystem::path(arg).filename().string(), error);
  } else if (verb == "flash-blocks" && sf::action_ints(arg, v) && v.size() == 2) {
    // This target's limit: blocks of at least 4×4 (the app allows 1×1, whose traced generation at ℓ = 62 is
    // 1.78 M steps: 17 s, a 218 MB event vector and 1.6 GB under ASan; 4×4: 2.9 s, 27 MB, 0.5 GB).
    sf::apply_session_action(s, verb, std::to_string(std::max(v[0], 4)) + ":" + std::to_string(std::max(v[1], 4)), error);
  } else if (verb == "frame") {
    // The app shows the frame at depth v[0] of the call stack at the cursor.
    if (sf::action_ints(arg, v) && v.size() == 1) {
      const auto stack = s.trace().call_stack(s.cursor());
      if (v[0] >= 0 && v[0] < static_cast<int>(stack.size())) (void)stack[v[0]];
    }
  } else if (sf::apply_session_action(s, verb, arg, error) == sf::ActionResult::NotMine) {
    // Window-only verbs (example, font, wheel, mouse, train-step, …): their numeric arguments parsed as the app does.
    sf::action_ints(arg, v);
  }
  int& l_gen = s.generation().settings.l_gen;
  l_gen = std::min(l_gen, 16);  // this target's limit (the app allows 4096)
  int& spec_gen = s.speculation().settings.l_gen;
  spec_gen = std::min(spec_gen, 16);  // the same for speculative decoding (spec-gen:N)
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
  // The default model is opened once per process; each input starts a fresh Session from it, in the
  // state Session() gives (Session(const SessionStart&)): the same start for every input.
  static const sf::SessionStart start = sf::default_start();
  // No try: the app does not catch around apply_action either, so anything thrown is a finding.
  sf::Session s(start);
  for (const std::string& a : options.actions) apply(s, a);
  s.wait_for_trace();
  return 0;
}
