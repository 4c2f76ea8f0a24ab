// Lessons, headless: every shipped lesson plays (each stop's setup applies and its cursor
// resolves to a step with the stop's algorithm and line), stops reached directly show what
// playing up to them shows, recording / reordering / saving round-trips, and the Markdown of the
// notes parses as the caption draws it.
#include <gtest/gtest.h>

#include <cmath>
#include <filesystem>
#include <unistd.h>

#include "app/logic/lesson_player.hpp"
#include "app/logic/markdown.hpp"
#include "app/logic/session_run.hpp"
#include "app/session.hpp"

namespace sf {
namespace test_session_lessons {

namespace fs = std::filesystem;

const Value* in_scope(const Session& s, const std::string& name) {
  for (const Value* v : s.scope_for_view(s.cursor()))
    if (v->name == name) return v;
  return nullptr;
}

// The value `name` bound by the event at the cursor.
const Value* at_cursor(const Session& s, const std::string& name) {
  for (const Value& v : s.current().values)
    if (v.name == name) return &v;
  return nullptr;
}

LessonPlayer open_lesson(const std::string& name) {
  LessonPlayer p;
  std::string error;
  EXPECT_TRUE(p.open(find_lesson(name), error)) << error;
  return p;
}

fs::path temp_file(const std::string& name) {
  return fs::temp_directory_path() / ("stepformer-lessons-" + std::to_string(::getpid()) + "-" + name);
}

TEST(Lessons, ThirteenLessonsShip) {
  const std::vector<std::string> all = shipped_lessons();
  ASSERT_EQ(all.size(), 13u);
  for (size_t k = 0; k < all.size(); ++k)
    EXPECT_EQ(fs::path(all[k]).filename().string().substr(0, 3), (k < 9 ? "0" : "") + std::to_string(k + 1) + "-");
  EXPECT_EQ(find_lesson("02-one-attention-head"), find_lesson("02-one-attention-head.stepformer"));
  EXPECT_EQ(find_lesson("no-such-lesson"), "");
}

// Every stop of every shipped lesson: its setup applies, its cursor is a step with the stop's
// algorithm, line, kind, indices and label, its selected value is in scope there, and it has a
// title, panels and a note. Training stops need the app (the GUI test plays them): headless they
// must fail with a message naming the stop.
TEST(Lessons, EveryShippedLessonPlays) {
  for (const std::string& path : shipped_lessons()) {
    SCOPED_TRACE(path);
    LessonPlayer p;
    std::string error;
    ASSERT_TRUE(p.open(path, error)) << error;
    EXPECT_FALSE(p.lesson().title.empty());
    EXPECT_FALSE(p.lesson().description.empty());
    ASSERT_GE(p.size(), 5u);
    ASSERT_LE(p.size(), 9u);
    Session s;
    for (size_t n = 0; n < p.size(); ++n) {
      const LessonStop& st = p.lesson().stops[n];
      SCOPED_TRACE(stop_heading(p, n));
      EXPECT_FALSE(st.title.empty());
      EXPECT_GE(st.note.size(), 40u);
      EXPECT_FALSE(st.panels.empty());
      if (p.setup_for(n).run.kind == "training") {
        EXPECT_FALSE(p.go(s, n, nullptr, error));
        EXPECT_NE(error.find(stop_heading(p, n)), std::string::npos) << error;
        EXPECT_NE(error.find("Training tab"), std::string::npos) << error;
        continue;
      }
      ASSERT_TRUE(p.go(s, n, nullptr, error)) << error;
      EXPECT_TRUE(p.resolved());
      const Event& e = s.current();
      EXPECT_EQ(e.alg, st.cursor.alg);
      EXPECT_EQ(e.line, st.cursor.line);
      EXPECT_EQ(e.kind, st.cursor.kind);
      for (auto [want, got] : {std::pair{st.cursor.idx.l, e.idx.l}, {st.cursor.idx.h, e.idx.h}, {st.cursor.idx.t, e.idx.t},
                               {st.cursor.idx.i, e.idx.i}, {st.cursor.idx.n, e.idx.n}})
        if (want >= 0) {
          EXPECT_EQ(got, want);
        }
      if (st.cursor.label) {
        EXPECT_EQ(e.label, *st.cursor.label);
      }
      if (!st.selected_value.empty()) {
        EXPECT_NE(in_scope(s, st.selected_value), nullptr) << st.selected_value;
      }
      const StopSetup setup = p.setup_for(n);
      if (!setup.prompt.empty()) {
        EXPECT_EQ(s.prompt(), setup.prompt);
      }
      EXPECT_TRUE(s.prompt_input().error.empty()) << s.prompt_input().error;
    }
  }
}

// Lesson 3 shows each mask on its own model: −∞ exactly where the mask says, after a jump back.
TEST(Lessons, MasksLessonShowsEachMask) {
  LessonPlayer p = open_lesson("03-masks");
  Session s;
  std::string error;
  auto S = [&]() -> MatF {
    const Value* v = at_cursor(s, "S");
    EXPECT_NE(v, nullptr);
    return v ? MatF(v->m) : MatF();
  };
  // Stop 4: the prefix-LM (p = 6, the '='): bidirectional inside the prefix, causal after it.
  ASSERT_TRUE(p.go(s, 3, nullptr, error)) << error;
  EXPECT_TRUE(s.model().config.mask == MaskKind::Prefix);
  MatF m = S();  // (ℓ_z, ℓ_x) = (10, 10): "<bos>dcba=abcd"
  ASSERT_EQ(m.rows(), 10);
  EXPECT_TRUE(std::isfinite(m(5, 0)));   // key t_z = 6 (the '=') seen by query t_x = 1
  EXPECT_TRUE(std::isinf(m(7, 6)) && m(7, 6) < 0);  // key 8 is after query 7: −∞
  EXPECT_TRUE(std::isfinite(m(6, 7)));
  // Stop 2: BERT, Mask ≡ 1: no −∞ at all.
  ASSERT_TRUE(p.go(s, 1, nullptr, error)) << error;
  EXPECT_EQ(s.arch().forward_algorithm(), 9);
  EXPECT_TRUE(S().allFinite());
  // Stop 1 (straight back): the GPT and "hello=" again, causal: −∞ exactly above the diagonal
  // of Sᵀ, i.e. at t_z > t_x.
  ASSERT_TRUE(p.go(s, 0, nullptr, error)) << error;
  EXPECT_EQ(s.arch().forward_algorithm(), 10);
  EXPECT_EQ(s.prompt(), "hello=");
  m = S();
  ASSERT_EQ(m.rows(), 7);
  for (int tz = 0; tz < 7; ++tz)
    for (int tx = 0; tx < 7; ++tx) EXPECT_EQ(std::isinf(m(tz, tx)), tz > tx) << tz << "," << tx;
  // Stop 3: the encoder-decoder's cross-attention (the saved event, not the encoder's first
  // head, which has the same algorithm, line and indices): ℓ_z × ℓ_x = 15 × 11, Mask ≡ 1.
  ASSERT_TRUE(p.go(s, 2, nullptr, error)) << error;
  EXPECT_EQ(s.cursor(), 572u);
  EXPECT_EQ(s.tokens_z().size(), 15u);
  EXPECT_EQ(s.tokens().size(), 11u);
  m = S();
  EXPECT_EQ(m.rows(), 15);
  EXPECT_EQ(m.cols(), 11);
  EXPECT_TRUE(m.allFinite());
}

// Lesson 6 samples at τ = 0 and at τ = 3 (the run's own τ): q is one-hot, then q ∝ p^{1/3}.
TEST(Lessons, SamplingLessonChangesTemperature) {
  LessonPlayer p = open_lesson("06-sampling-temperature");
  Session s;
  std::string error;
  ASSERT_TRUE(p.go(s, 3, nullptr, error)) << error;  // line 5 at τ = 0
  EXPECT_EQ(s.generation().settings.tau, 0.0);
  const Value* q = at_cursor(s, "q");
  ASSERT_NE(q, nullptr);
  EXPECT_FLOAT_EQ(q->m.maxCoeff(), 1.0f);
  ASSERT_TRUE(p.go(s, 4, nullptr, error)) << error;  // the answer: sorted letters
  EXPECT_EQ(s.tokenizer().decode(s.generation().generated()).substr(0, 5), "ehllo");
  ASSERT_TRUE(p.go(s, 5, nullptr, error)) << error;  // line 5 at τ = 3
  EXPECT_EQ(s.generation().settings.tau, 3.0);
  q = at_cursor(s, "q");
  const Value* pv = in_scope(s, "p");
  ASSERT_TRUE(q && pv);
  MatF want = pv->m.array().pow(1.0f / 3.0f).matrix();
  want /= want.sum();
  // q is temperature()'s double result stored as float (u·q, u = 2⁻²⁴); want is computed here in
  // float: a pow (4 roundings, as tests/core/float_bounds.hpp counts a function; 1/3 rounded to
  // float moves p^{1/3} by |ln p|/3·u, ≤ u/e once normalised), a sum of N_V terms and a division:
  // (N_V + 7)·u of q ≤ 1.
  const float u = std::ldexp(1.0f, -24);
  EXPECT_LT((MatF(q->m) - want).cwiseAbs().maxCoeff(), static_cast<float>(want.size() + 7) * u);
  EXPECT_LT(q->m.maxCoeff(), 0.9f);
  // Back to stop 4: τ = 0 again (the lesson's setup, not what stop 6 left).
  ASSERT_TRUE(p.go(s, 3, nullptr, error)) << error;
  EXPECT_EQ(s.generation().settings.tau, 0.0);
}

TEST(Lessons, StopThatDoesNotResolveSaysWhich) {
  SessionFile f;
  f.title = "broken";
  f.state.model.path = "@assets/default.safetensors";
  f.state.prompt = "hello=";
  LessonStop ok;
  ok.title = "fine";
  ok.cursor.alg = 10, ok.cursor.line = 3;
  LessonStop bad = ok;
  bad.title = "layer nine";
  bad.cursor.alg = 4, bad.cursor.line = 6, bad.cursor.idx.l = 9;
  f.stops = {ok, bad};
  const fs::path path = temp_file("broken.stepformer");
  save_session(path.string(), f);
  LessonPlayer p;
  std::string error;
  ASSERT_TRUE(p.open(path.string(), error)) << error;
  Session s;
  EXPECT_TRUE(p.go(s, 0, nullptr, error)) << error;
  EXPECT_FALSE(p.go(s, 1, nullptr, error));
  EXPECT_EQ(error, "Stop 2 of 2 — layer nine: Algorithm 4 line 6 (l=9) is not a step of this run");
  EXPECT_EQ(p.error(), error);
  EXPECT_FALSE(p.resolved());
  EXPECT_EQ(p.current(), 1u);  // still the current stop: PageUp goes back from it
  EXPECT_FALSE(p.go(s, 2, nullptr, error));
  EXPECT_EQ(error, "the lesson has 2 stops; there is no stop 3");
  fs::remove(path);
}

TEST(Lessons, RefusesWhatIsNotALesson) {
  SessionFile f;  // a session: no stops
  f.state.prompt = "hello=";
  const fs::path path = temp_file("session.stepformer");
  save_session(path.string(), f);
  LessonPlayer p;
  std::string error;
  EXPECT_FALSE(p.open(path.string(), error));
  EXPECT_NE(error.find("has no stops"), std::string::npos) << error;
  EXPECT_FALSE(p.open(temp_file("missing.stepformer").string(), error));
  EXPECT_FALSE(error.empty());
  EXPECT_FALSE(p.active());
  fs::remove(path);
}

// Recording: stops added after the current one, moved, deleted, saved, and read back.
TEST(Lessons, RecordMoveDeleteSave) {
  Session s;
  SessionState start;
  start.model.path = fs::absolute(assets_dir() + "/default.safetensors").string();
  start.prompt = s.prompt();
  LessonPlayer p;
  p.record(start, "Recorded");
  auto add_here = [&](const std::string& title, const std::string& note) {
    LessonStop st;
    st.title = title, st.note = note;
    st.cursor = cursor_ref(s.trace(), s.cursor());
    st.panels = {"pseudocode", "attention"};
    p.add(st);
  };
  ASSERT_TRUE(s.jump_to(4, 4, 1, 1));
  add_here("S", "the **scores**");
  ASSERT_TRUE(s.jump_to(10, 3));
  add_here("X", "tokens are *columns*");
  ASSERT_TRUE(s.jump_to(4, 6, 2, 3));
  add_here("A", "softmax");
  ASSERT_EQ(p.size(), 3u);
  std::string error;
  ASSERT_TRUE(p.move(2, 0, error)) << error;  // A, S, X
  EXPECT_EQ(p.lesson().stops[0].title, "A");
  EXPECT_EQ(p.current(), 0u);  // the moved stop stays current
  ASSERT_TRUE(p.remove(1, error)) << error;  // A, X
  EXPECT_FALSE(p.remove(5, error));
  EXPECT_FALSE(p.move(0, 7, error));
  const fs::path path = temp_file("recorded.stepformer");
  ASSERT_TRUE(p.save(path.string(), error)) << error;
  LessonPlayer back;
  ASSERT_TRUE(back.open(path.string(), error)) << error;
  ASSERT_EQ(back.size(), 2u);
  EXPECT_EQ(back.lesson().title, "Recorded");
  EXPECT_EQ(back.lesson().stops[0].note, "softmax");
  EXPECT_EQ(back.lesson().stops[1].note, "tokens are *columns*");
  Session fresh;
  ASSERT_TRUE(back.go(fresh, 0, nullptr, error)) << error;
  EXPECT_EQ(fresh.current().alg, 4);
  EXPECT_EQ(fresh.current().line, 6);
  EXPECT_EQ(fresh.current().idx.l, 2);
  EXPECT_EQ(fresh.current().idx.h, 3);
  ASSERT_TRUE(back.go(fresh, 1, nullptr, error)) << error;
  EXPECT_EQ(fresh.current().alg, 10);
  EXPECT_EQ(fresh.current().line, 3);
  fs::remove(path);
}

TEST(Markdown, SpansAndBlocks) {
  const auto b = parse_markdown("A **bold** and *slanted* `W_q`.\ncontinued\n\n- one\n* two *it*\n\nlast, 2 * 3");
  ASSERT_EQ(b.size(), 4u);
  EXPECT_FALSE(b[0].item);
  const std::vector<MdSpan> want{{"A ", false, false, false},       {"bold", true, false, false},
                                 {" and ", false, false, false},    {"slanted", false, true, false},
                                 {" ", false, false, false},        {"W_q", false, false, true},
                                 {". continued", false, false, false}};
  EXPECT_EQ(b[0].spans, want);
  EXPECT_TRUE(b[1].item);
  EXPECT_EQ(b[1].spans, (std::vector<MdSpan>{{"one"}}));
  EXPECT_TRUE(b[2].item);
  EXPECT_EQ(b[2].spans, (std::vector<MdSpan>{{"two "}, {"it", false, true, false}}));
  // A lone '*' between spaces is a multiplication sign, not italics.
  EXPECT_EQ(b[3].spans, (std::vector<MdSpan>{{"last, 2 * 3"}}));
  // Unclosed markers are text; `code` keeps its stars.
  EXPECT_EQ(parse_markdown("**open")[0].spans, (std::vector<MdSpan>{{"**open"}}));
  EXPECT_EQ(parse_markdown("`a*b*c`")[0].spans, (std::vector<MdSpan>{{"a*b*c", false, false, true}}));
  EXPECT_TRUE(parse_markdown("\n  \n").empty());
}

}  // namespace test_session_lessons
}  // namespace sf
