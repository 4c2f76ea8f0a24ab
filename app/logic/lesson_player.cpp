#include "app/logic/lesson_player.hpp"

#include <algorithm>
#include <filesystem>

#include "app/logic/session_run.hpp"
#include "app/logic/session_state.hpp"
#include "app/session.hpp"

namespace sf {

namespace fs = std::filesystem;

namespace {

// The same file (or folder) whatever the spelling of its path.
bool same_file(const std::string& a, const std::string& b) {
  if (a.empty() || b.empty()) return false;
  std::error_code ea, eb;
  return fs::weakly_canonical(a, ea) == fs::weakly_canonical(b, eb) && !ea && !eb;
}

// The lesson's sampling, fill and translation settings on the session (each stop starts from them).
void apply_settings(Session& s, const SessionState& st) {
  SamplingSettings& g = s.generation().settings;  // stop_at_eos is not saved: the learner's choice stays
  g.tau = st.sampling.tau, g.l_gen = st.sampling.l_gen, g.seed = st.sampling.seed;
  g.trim_context = st.sampling.trim_context, g.kv_cache = st.sampling.kv_cache;
  g.cut = {st.sampling.top_k, st.sampling.top_p}, g.paged = st.sampling.paged, g.kv_block_size = st.sampling.kv_block;
  s.fill_in().settings = {st.fill.tau, st.fill.seed, st.fill.top_k};
  const SessionTranslation& tr = st.translation;
  s.translation().settings = {tr.tau, tr.seed, tr.reuse_encoding, tr.kv_cache, {tr.top_k, tr.top_p}};
}

// A run's own τ replaces the setting of the algorithm it runs.
void apply_tau(Session& s, const SessionRun& run) {
  if (!run.tau) return;
  if (run.kind == "generate") s.generation().settings.tau = *run.tau;
  if (run.kind == "translate") s.translation().settings.tau = *run.tau;
  if (run.kind == "fill") s.fill_in().settings.tau = *run.tau;
}

}  // namespace

std::string describe_cursor(const CursorRef& c) {
  std::string s = "Algorithm " + std::to_string(c.alg) + (c.line ? " line " + std::to_string(c.line) : " (its call)");
  std::string idx;
  auto add = [&](const char* name, int v) {
    if (v > 0) idx += (idx.empty() ? "" : ", ") + std::string(name) + "=" + std::to_string(v);
  };
  add("l", c.idx.l), add("h", c.idx.h), add("t", c.idx.t), add("i", c.idx.i), add("n", c.idx.n);
  if (!idx.empty()) s += " (" + idx + ")";
  if (c.label) s += " ▸ " + *c.label;
  return s;
}

std::string stop_heading(const LessonPlayer& p, size_t n) {
  if (n >= p.size()) return "";
  return "Stop " + std::to_string(n + 1) + " of " + std::to_string(p.size()) + " — " + p.lesson().stops[n].title;
}

std::vector<std::string> shipped_lessons() {
  std::vector<std::string> out;
  std::error_code ec;
  for (const auto& e : fs::directory_iterator(fs::path(assets_dir()) / "lessons", ec))
    if (e.path().extension() == ".stepformer") out.push_back(e.path().string());
  std::sort(out.begin(), out.end());
  return out;
}

std::string find_lesson(const std::string& name) {
  std::error_code ec;
  if (fs::is_regular_file(name, ec)) return name;
  const fs::path dir = fs::path(assets_dir()) / "lessons";
  for (const fs::path& p : {dir / name, dir / (name + ".stepformer")})
    if (fs::is_regular_file(p, ec)) return p.string();
  return "";
}

bool LessonPlayer::open(const std::string& path, std::string& error) {
  SessionFile f;
  try {
    f = load_session(path);
  } catch (const std::exception& e) {
    return error = e.what(), false;
  }
  if (!f.is_lesson())
    return error = path + " is a session, not a lesson (it has no stops): open it with File › Open session…", false;
  lesson_ = std::move(f);
  path_ = path;
  active_ = true;
  current_ = SIZE_MAX;
  resolved_ = false;
  error_.clear();
  return true;
}

void LessonPlayer::record(SessionState start, std::string title) {
  lesson_ = SessionFile{};
  lesson_.title = std::move(title);
  lesson_.state = std::move(start);
  path_.clear();
  active_ = true;
  current_ = SIZE_MAX;
  resolved_ = true;
  error_.clear();
}

bool LessonPlayer::save(const std::string& path, std::string& error) {
  if (lesson_.stops.empty()) return error = "the lesson has no stops yet: add one with Lesson › Add stop here…", false;
  SessionFile out = lesson_;
  // Model paths are relative to the lesson's folder: rewrite them for the new one.
  auto rebase = [&](SessionModel& m) {
    if (!m.path.empty()) m.path = model_path_for(path, model_file(m), assets_dir());
  };
  rebase(out.state.model);
  for (auto& st : out.stops)
    if (st.model) rebase(*st.model);
  try {
    save_session(path, out);
  } catch (const std::exception& e) {
    return error = e.what(), false;
  }
  lesson_ = std::move(out);
  path_ = path;
  return true;
}

void LessonPlayer::close() { *this = LessonPlayer{}; }

std::string LessonPlayer::model_file(const SessionModel& m) const {
  if (m.path.empty()) return "";
  return resolve_model_path(path_.empty() ? (fs::current_path() / "lesson").string() : path_, m.path, assets_dir());
}

StopSetup LessonPlayer::setup_for(size_t n) const {
  const SessionState& st = lesson_.state;
  StopSetup s{st.model, st.prompt, st.context, st.run, st.image};
  for (size_t k = 0; k <= n && k < size(); ++k) {
    const LessonStop& stop = lesson_.stops[k];
    if (stop.model) s.model = *stop.model;
    if (stop.prompt) s.prompt = *stop.prompt;
    if (stop.context) s.context = *stop.context;
    if (stop.image) s.image = *stop.image;
    if (stop.run) s.run = *stop.run;
  }
  return s;
}

bool LessonPlayer::go(Session& s, size_t n, const TrainingTracer& training, std::string& error) {
  if (n >= size()) {
    return error = "the lesson has " + std::to_string(size()) + " stops; there is no stop " + std::to_string(n + 1),
           false;
  }
  current_ = n;
  resolved_ = false;
  const LessonStop& stop = lesson_.stops[n];
  const StopSetup setup = setup_for(n);
  auto fail = [&](const std::string& why) {
    error_ = stop_heading(*this, n) + ": " + why;
    error = error_;
    return false;
  };
  const std::string model = model_file(setup.model);
  const bool new_model = !model.empty() && !same_file(model, s.origin().path);
  if (new_model) {
    std::string why;
    if (!s.load_model(model, why)) return fail("could not open the model " + model + ": " + why);
  }
  apply_settings(s, lesson_.state);
  apply_tau(s, setup.run);
  // A new model encodes the texts again (its vocabulary may differ).
  if (s.arch().has_context()) {
    if (new_model || setup.context != s.context()) s.set_context(setup.context);
    if (!s.context_input().error.empty()) return fail("the context z: " + s.context_input().error);
  }
  if (!s.reads_image()) {  // a vision transformer's x is its image: the last text model's prompt does not apply
    if (!setup.prompt.empty() && (new_model || setup.prompt != s.prompt())) s.set_prompt(setup.prompt);
    if (!s.prompt_input().error.empty()) return fail("the prompt: " + s.prompt_input().error);
  }
  std::string why;
  if (setup.image && !restore_image(s, *setup.image, why)) return fail("the image: " + why);
  if (setup.run.kind == "training") {
    if (!training) return fail("its run is a traced training update (Algorithm 13), which needs the app's Training tab");
    if (!training(why)) return fail("the training update: " + why);
  } else if (!trace_run(s, setup.run, why)) {
    return fail(why);
  }
  s.wait_for_trace();
  if (!place_cursor(s, stop.cursor)) return fail(describe_cursor(stop.cursor) + " is not a step of this run");
  resolved_ = true;
  error_.clear();
  return true;
}

void LessonPlayer::add(LessonStop stop) {
  const size_t at = current_ < size() ? current_ + 1 : size();
  lesson_.stops.insert(lesson_.stops.begin() + static_cast<std::ptrdiff_t>(at), std::move(stop));
  current_ = at;
}

bool LessonPlayer::move(size_t from, size_t to, std::string& error) {
  if (from >= size() || to >= size()) {
    return error = "stops are numbered 1 to " + std::to_string(size()) + "; cannot move " + std::to_string(from + 1) +
                   " to " + std::to_string(to + 1),
           false;
  }
  auto& v = lesson_.stops;
  LessonStop st = std::move(v[from]);
  v.erase(v.begin() + static_cast<std::ptrdiff_t>(from));
  v.insert(v.begin() + static_cast<std::ptrdiff_t>(to), std::move(st));
  if (current_ == from) current_ = to;
  else if (current_ < size() && from < current_ && to >= current_) --current_;
  else if (current_ < size() && from > current_ && to <= current_) ++current_;
  return true;
}

bool LessonPlayer::remove(size_t n, std::string& error) {
  if (n >= size())
    return error = "stops are numbered 1 to " + std::to_string(size()) + "; there is no stop " + std::to_string(n + 1),
           false;
  lesson_.stops.erase(lesson_.stops.begin() + static_cast<std::ptrdiff_t>(n));
  if (current_ == n) current_ = n < size() ? n : (size() ? size() - 1 : SIZE_MAX);
  else if (current_ < SIZE_MAX && current_ > n) --current_;
  return true;
}

}  // namespace sf
