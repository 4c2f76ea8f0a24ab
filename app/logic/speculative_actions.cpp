#include "app/logic/speculative_actions.hpp"

#include <algorithm>
#include <filesystem>
#include <vector>

#include "app/logic/session_actions.hpp"
#include "app/session.hpp"

namespace sf {

namespace {

// draft:NAME: the candidate whose file name is NAME (e.g. draft.safetensors), else a bundled model of
// that name (assets/, assets/lessons/: refused with the reason it cannot draft), else NAME as a path.
bool pick_draft(Session& s, const std::string& arg, std::string& error) {
  Speculation& sp = s.speculation();
  const std::filesystem::path assets = assets_dir();
  std::string name = std::filesystem::path(arg).filename().string(), path = arg;
  for (const std::filesystem::path& bundled : {assets / arg, assets / "lessons" / arg})
    if (!std::filesystem::exists(arg) && std::filesystem::exists(bundled)) path = bundled.string();
  for (const DraftCandidate& c : sp.candidates(s.model()))
    if (std::filesystem::path(c.path).filename() == arg) {
      name = c.name;
      path = c.path;
    }
  if (sp.pick_draft(name, path, s.model())) return true;
  error = sp.error();
  return false;
}

}  // namespace

ActionResult apply_speculative_action(Session& s, const std::string& verb, const std::string& arg, std::string& error) {
  SpeculationSettings& st = s.speculation().settings;
  std::vector<int> v;
  const auto number = [&](const char* what) {
    if (action_ints(arg, v) && v.size() == 1) return true;
    error = verb + " needs " + what;
    return false;
  };
  if (verb == "draft") {
    if (!pick_draft(s, arg, error)) return ActionResult::Failed;
  } else if (verb == "speculate") {
    if (!number("K, the proposals per round (1–64)")) return ActionResult::Failed;
    st.K = std::clamp(v[0], 1, 64);
    // No draft picked yet: the best candidate (draft.safetensors when it fits).
    const std::vector<DraftCandidate> c = s.speculation().draft() ? std::vector<DraftCandidate>{} : s.speculation().candidates(s.model());
    if (!c.empty()) s.speculation().pick_draft(c.front().name, c.front().path, s.model());
    if (!s.trace_speculate()) {
      error = s.arch().output() != OutputKind::Continuation
                  ? "speculative decoding continues text: this model does not"
                  : "no draft model with this model's vocabulary: pick one with draft:NAME or draft:PATH";
      return ActionResult::Failed;
    }
  } else if (verb == "spec-tau") {
    try {
      st.tau = std::clamp(std::stod(arg), 0.0, 100.0);
    } catch (...) {
      error = "spec-tau needs a number";
      return ActionResult::Failed;
    }
  } else if (verb == "spec-seed") {
    if (!number("a whole number")) return ActionResult::Failed;
    st.seed = static_cast<uint64_t>(std::max(0, v[0]));
  } else if (verb == "spec-gen") {
    if (!number("a whole number")) return ActionResult::Failed;
    st.l_gen = std::clamp(v[0], 1, 4096);
  } else {
    return ActionResult::NotMine;
  }
  return ActionResult::Done;
}

}  // namespace sf
