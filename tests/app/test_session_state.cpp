// Sessions headless (app/logic/session_state.hpp, session_run.hpp): what is captured of a
// Session comes back on a fresh Session — the prompt, the run, the cursor's event and the
// breakpoints — for GPT's forward pass and generation, BERT and the encoder-decoder.
#include <gtest/gtest.h>

#include "app/logic/session_run.hpp"
#include "app/logic/session_state.hpp"
#include "app/session.hpp"

namespace test_session_state {

using namespace sf;

namespace {

// Through the file format too: what is restored is what a saved file holds.
SessionState through_json(const SessionState& st) {
  SessionFile f;
  f.state = st;
  return session_from_json(session_to_json(f)).state;
}

void expect_same_step(const Session& a, const Session& b) {
  ASSERT_EQ(a.cursor(), b.cursor());
  const Event &x = a.current(), &y = b.current();
  EXPECT_EQ(x.alg, y.alg);
  EXPECT_EQ(x.line, y.line);
  EXPECT_EQ(x.kind, y.kind);
  EXPECT_EQ(x.depth, y.depth);
  EXPECT_EQ(x.idx, y.idx);
  EXPECT_EQ(x.label, y.label);
  EXPECT_EQ(a.trace().caller_ref(a.cursor()), b.trace().caller_ref(b.cursor()));
}

// The first event k ≥ from with this algorithm, line and kind and the given indices (0: any).
size_t find(const Session& s, int alg, int line, EventKind kind, int l = 0, int h = 0, int i = 0) {
  for (size_t k = 0; k < s.trace().size(); ++k) {
    const Event& e = s.trace().events[k];
    if (e.alg == alg && e.line == line && e.kind == kind && (!l || e.idx.l == l) && (!h || e.idx.h == h) &&
        (!i || e.idx.i == i))
      return k;
  }
  return SIZE_MAX;
}

std::string asset(const char* name) { return assets_dir() + "/" + name; }

}  // namespace

TEST(SessionState, ForwardRunDeepInAlgorithm4ComesBack) {
  Session a;
  a.set_prompt("dcba=");
  const size_t k = find(a, 4, 6, EventKind::SubStep, 2, 2);  // Algorithm 4 line 6's softmax, layer 2, head 2
  ASSERT_NE(k, SIZE_MAX);
  a.jump(k);
  a.toggle_breakpoint(4, 6);
  a.toggle_breakpoint(10, 7);
  a.generation().settings.tau = 0.3;
  a.generation().settings.seed = 42;
  a.generation().settings.stop_at_eos = false;  // on by default
  a.generation().settings.cut = {5, 0.75};       // top-k / top-p (not in the paper), off by default
  a.generation().settings.paged = true;
  a.generation().settings.kv_block_size = 2;
  a.translation().settings.cut = {3, 0.5};
  a.fill_in().settings.top_k = 2;
  const SessionState st = through_json(capture_session(a));
  EXPECT_EQ(st.run.kind, "forward");
  EXPECT_EQ(st.cursor.event, k);
  EXPECT_TRUE(st.cursor.label.has_value());

  Session b;  // fresh: the default model, "hello=", line 1, no breakpoints
  b.toggle_breakpoint(5, 1);  // one the saved session does not have: removed
  EXPECT_TRUE(restore_session(b, st).empty());
  EXPECT_EQ(b.prompt(), "dcba=");
  EXPECT_EQ(b.run_kind(), RunKind::Forward);
  expect_same_step(a, b);
  EXPECT_EQ(b.current().kind, EventKind::SubStep);
  EXPECT_EQ(b.current().idx.l, 2);
  EXPECT_EQ(b.current().idx.h, 2);
  EXPECT_EQ(b.breakpoints(), (std::vector<LineRef>{lines::attention::V_tilde, lines::d_transformer::norm2}));
  EXPECT_EQ(b.generation().settings.tau, 0.3);
  EXPECT_EQ(b.generation().settings.seed, 42u);
  EXPECT_FALSE(b.generation().settings.stop_at_eos);
  EXPECT_EQ(b.generation().settings.cut.k, 5);
  EXPECT_EQ(b.generation().settings.cut.p, 0.75);
  EXPECT_TRUE(b.generation().settings.paged);
  EXPECT_EQ(b.generation().settings.kv_block_size, 2);
  EXPECT_EQ(b.translation().settings.cut.k, 3);
  EXPECT_EQ(b.translation().settings.cut.p, 0.5);
  EXPECT_EQ(b.fill_in().settings.top_k, 2);
}

TEST(SessionState, GenerateRunComesBackWithTheSameTokens) {
  Session a;
  a.generation().settings.seed = 7;
  a.generation().settings.tau = 1.0;
  a.trace_generate(5, false);
  a.wait_for_trace();
  ASSERT_EQ(a.run_kind(), RunKind::Generate);
  const size_t k = find(a, 10, 6, EventKind::Line, 1, 0, 3);  // the third generation step's layer 1
  ASSERT_NE(k, SIZE_MAX);
  a.jump(k);
  const SessionState st = through_json(capture_session(a));
  EXPECT_EQ(st.run.kind, "generate");
  EXPECT_EQ(st.run.generate, 5);

  Session b;
  EXPECT_TRUE(restore_session(b, st).empty());
  EXPECT_EQ(b.run_kind(), RunKind::Generate);
  EXPECT_EQ(b.generation().generated(), a.generation().generated());
  ASSERT_EQ(b.generation().generated().size(), 5u);
  expect_same_step(a, b);
  EXPECT_EQ(b.current().idx.i, 3);
}

TEST(SessionState, BertForwardComesBack) {
  Session a;
  std::string error;
  ASSERT_TRUE(a.load_model(asset("bert.safetensors"), error)) << error;
  const size_t k = a.trace().size() * 2 / 3;  // somewhere in its second half
  a.jump(k);
  a.toggle_breakpoint(9, 5);
  const SessionState st = through_json(capture_session(a));

  Session b;
  ASSERT_TRUE(b.load_model(asset("bert.safetensors"), error)) << error;
  b.set_prompt("x");
  EXPECT_TRUE(restore_session(b, st).empty());
  EXPECT_EQ(b.prompt(), a.prompt());
  EXPECT_EQ(b.tokens(), a.tokens());
  expect_same_step(a, b);
  EXPECT_EQ(b.breakpoints(), std::vector<LineRef>{lines::e_transformer::attention});
}

TEST(SessionState, EncoderDecoderTranslationComesBackWithTheStepsShown) {
  Session a;
  std::string error;
  ASSERT_TRUE(a.load_model(asset("ed.safetensors"), error)) << error;
  a.trace_translate(true);
  a.trace_translate(true);
  a.wait_for_trace();
  ASSERT_EQ(a.run_kind(), RunKind::Translate);
  ASSERT_EQ(a.translation().shown(), 2);
  const SessionState st = through_json(capture_session(a));
  EXPECT_EQ(st.run.kind, "translate");
  EXPECT_EQ(st.run.translate, 2);
  EXPECT_EQ(st.context, a.context());

  Session b;
  ASSERT_TRUE(b.load_model(asset("ed.safetensors"), error)) << error;
  EXPECT_TRUE(restore_session(b, st).empty());
  EXPECT_EQ(b.run_kind(), RunKind::Translate);
  EXPECT_EQ(b.translation().shown(), 2);
  EXPECT_EQ(b.translation().translated(), a.translation().translated());
  EXPECT_EQ(b.tokens_z(), a.tokens_z());
  expect_same_step(a, b);
}

TEST(SessionState, AStepThatNoLongerExistsPutsTheCursorOnLine1WithANote) {
  Session a;
  SessionState st = capture_session(a);
  st.cursor.alg = 4;
  st.cursor.line = 6;
  st.cursor.kind = EventKind::Line;
  st.cursor.event = 3;
  st.cursor.idx = {99, 1, 0, 0, 0};  // layer 99: the default model has 2
  Session b;
  b.jump(40);
  const std::vector<std::string> notes = restore_session(b, st);
  ASSERT_EQ(notes.size(), 1u);
  EXPECT_NE(notes[0].find("Algorithm 4 line 6 (l = 99, h = 1)"), std::string::npos) << notes[0];
  EXPECT_NE(notes[0].find("line 1"), std::string::npos);
  EXPECT_EQ(b.current().alg, 10);
  EXPECT_EQ(b.current().line, 1);
}

TEST(SessionState, ARunTheModelCannotMakeIsANoteAndTheForwardPassIsShown) {
  Session s;
  SessionRun run;
  run.kind = "translate";
  std::string error;
  EXPECT_FALSE(trace_run(s, run, error));
  EXPECT_NE(error.find("encoder-decoder"), std::string::npos) << error;
  run.kind = "training";
  EXPECT_FALSE(trace_run(s, run, error));
  EXPECT_NE(error.find("Training tab"), std::string::npos);
  SessionState st = capture_session(s);
  st.run.kind = "fill";
  const std::vector<std::string> notes = restore_session(s, st);
  ASSERT_FALSE(notes.empty());
  EXPECT_NE(notes[0].find("fills in [MASK]"), std::string::npos) << notes[0];
  EXPECT_EQ(s.run_kind(), RunKind::Forward);
}

TEST(SessionState, PlaceCursorWithWildcards) {
  Session s;
  CursorRef c;
  c.alg = 4;
  c.line = 5;
  c.idx = {2, -1, -1, -1, -1};  // layer 2, any head
  ASSERT_TRUE(place_cursor(s, c));
  EXPECT_EQ(s.current().alg, 4);
  EXPECT_EQ(s.current().line, 5);
  EXPECT_EQ(s.current().idx.l, 2);
  EXPECT_EQ(s.current().idx.h, 1);  // the first head
  CursorRef none;  // no cursor saved: line 1
  s.jump(30);
  EXPECT_TRUE(place_cursor(s, none));
  EXPECT_EQ(s.current().line, 1);
}

TEST(SessionState, FillRunPutsTheCursorOnTheLastLine) {
  Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(asset("bert.safetensors"), error)) << error;
  SessionRun run;
  run.kind = "fill";
  ASSERT_TRUE(trace_run(s, run, error)) << error;
  EXPECT_EQ(s.current().alg, 9);
  EXPECT_EQ(s.current().depth, 0);
  EXPECT_GT(s.cursor(), s.trace().size() / 2);
}

}  // namespace test_session_state
