#include "app/logic/session_state.hpp"

#include "app/logic/session_run.hpp"

namespace sf {

SessionImage capture_image(const Session& s) {
  return {s.vision().pixels(), s.vision().test_index()};
}

bool restore_image(Session& s, const SessionImage& im, std::string& error) {
  if (!s.reads_image()) return error = "this model (" + s.model_label() + ") reads text, not an image", false;
  const VisionInput& v = s.vision();
  const int n = im.test_digit;
  if (n >= 1 && n <= v.test_count() && v.test_digits()[static_cast<size_t>(n - 1)].pixels == im.pixels)
    return s.select_test_digit(n, error);
  return s.set_image(im.pixels, error);
}

SessionState capture_session(const Session& s) {
  SessionState st;
  st.model.path = s.origin().path;
  st.prompt = s.prompt();
  st.context = s.context();
  if (s.reads_image()) st.image = capture_image(s);
  st.run = current_run(s);
  if (s.trace().size() > 0) st.cursor = cursor_ref(s.trace(), s.cursor());
  st.breakpoints = s.breakpoints();
  const SamplingSettings& sa = s.generation().settings;
  st.sampling = {sa.tau, sa.l_gen, sa.seed, sa.trim_context, sa.kv_cache, sa.stop_at_eos, sa.cut.k, sa.cut.p, sa.paged,
                 sa.kv_block_size};
  st.fill = {s.fill_in().settings.tau, s.fill_in().settings.seed, s.fill_in().settings.top_k};
  const TranslationSettings& tr = s.translation().settings;
  st.translation = {tr.tau, tr.seed, tr.reuse_encoding, tr.kv_cache, tr.cut.k, tr.cut.p};
  return st;
}

namespace {

// "Algorithm 4 line 6 (l = 2, h = 3)": a saved step, for messages.
std::string describe(const CursorRef& c) {
  std::string s = "Algorithm " + std::to_string(c.alg) + (c.line ? " line " + std::to_string(c.line) : " (its start)");
  std::string idx;
  const std::pair<const char*, int> fields[] = {{"l", c.idx.l}, {"h", c.idx.h}, {"t", c.idx.t}, {"i", c.idx.i}, {"n", c.idx.n}};
  for (const auto& [name, v] : fields)
    if (v > 0) idx += std::string(idx.empty() ? "" : ", ") + name + " = " + std::to_string(v);
  return idx.empty() ? s : s + " (" + idx + ")";
}

}  // namespace

std::vector<std::string> restore_session(Session& s, const SessionState& st) {
  std::vector<std::string> notes;
  const SessionSampling& sa = st.sampling;
  s.generation().settings = {sa.tau,      sa.l_gen,    sa.seed,  sa.trim_context, sa.kv_cache, sa.stop_at_eos,
                             {sa.top_k, sa.top_p}, sa.paged, sa.kv_block};
  s.fill_in().settings = {st.fill.tau, st.fill.seed, st.fill.top_k};
  const SessionTranslation& tr = st.translation;
  s.translation().settings = {tr.tau, tr.seed, tr.reuse_encoding, tr.kv_cache, {tr.top_k, tr.top_p}};
  for (const LineRef b : std::vector<LineRef>(s.breakpoints())) s.toggle_breakpoint(b);
  for (const LineRef b : st.breakpoints)
    if (!s.has_breakpoint(b)) s.toggle_breakpoint(b);
  if (s.arch().has_context()) {
    s.set_context(st.context);
    if (!s.context_input().error.empty()) notes.push_back("The saved context: " + s.context_input().error);
  }
  s.set_prompt(st.prompt);
  if (!s.prompt_input().error.empty()) notes.push_back("The saved prompt: " + s.prompt_input().error);
  std::string error;
  if (st.image && !restore_image(s, *st.image, error)) notes.push_back("The saved image: " + error);
  SessionRun run = st.run;
  if (run.kind == "training") run.kind = "forward";  // the app traces the update (the Training tab)
  if (!trace_run(s, run, error)) {
    notes.push_back("The saved run could not be traced again: " + error);
    if (s.run_kind() != RunKind::Forward) s.trace_forward();
    s.wait_for_trace();
  }
  if (st.run.kind != "training" && !place_cursor(s, st.cursor))
    notes.push_back("The saved step, " + describe(st.cursor) + ", is not in this run; the cursor is on line 1");
  return notes;
}

}  // namespace sf
