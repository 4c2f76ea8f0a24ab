// The *.stepformer format (core/io/session_file.hpp): round trips, byte-stable writing, strict
// reading of malformed files (an sf::Error naming the field, never a crash), model paths,
// the checkpoint checksum, and cursor references with their wildcards.
#include <gtest/gtest.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/io/fileio.hpp"
#include "core/io/session_file.hpp"
#include "core/model/error.hpp"

namespace test_session_file {

namespace fs = std::filesystem;
using sf::CursorRef;
using sf::EventKind;
using sf::SessionFile;

namespace {

// A session with every field away from its default, and a lesson's stops with and without the
// optional fields.
SessionFile full_session() {
  SessionFile f;
  f.title = "Masks: causal, bidirectional, cross";
  f.description = "Three masks in one lesson — ℓ_x, Ṽ and −∞";
  sf::SessionState& s = f.state;
  s.model = {"@assets/default.safetensors", "fnv1a64:0123456789abcdef"};
  s.prompt = "hello=";
  s.context = "z ∈ V*";
  s.run = {"generate", 7, 0};
  s.cursor.event = 123;
  s.cursor.alg = 4;
  s.cursor.line = 6;
  s.cursor.kind = EventKind::SubStep;
  s.cursor.depth = 3;
  s.cursor.idx = {2, 3, 0, 1, 0};
  s.cursor.caller = sf::lines::mh_attention::Y_h;  // Algorithm 5 line 2 calls Algorithm 4
  s.cursor.label = "softmax(S/√d_attn)";
  s.breakpoints = {{4, 6}, {10, 7}};
  s.sampling = {0.25, 33, 18446744073709551615ull, false, true, false, 7, 0.875, true, 3};
  s.fill = {1.5, 9, 3};
  s.translation = {0.5, 77, true, true, 2, 0.5};
  s.training = {"/tmp/some text.txt", "paper", 0.01, 8, 4};
  s.view.panels = {"pseudocode", "attention", "lesson"};
  s.view.selected_value = "Ṽ";
  s.view.theme = "high-contrast";
  s.view.colorblind = true;
  s.view.font_px = 23.5f;
  s.view.notation = "dyz";
  sf::LessonStop a;
  a.title = "The causal mask";
  a.cursor.alg = 5;
  a.cursor.line = 4;
  a.cursor.idx = {1, -1, -1, -1, -1};  // wildcards: only l is given
  a.panels = {"attention"};
  a.note = "**Mask** is `−∞` above the diagonal";
  sf::LessonStop b;
  b.title = "Cross-attention";
  b.cursor.alg = 8;
  b.cursor.line = 0;
  b.cursor.kind = EventKind::Enter;
  b.selected_value = "Z";
  b.focus = "softmax(S/√d_attn)";  // the focal value presentation mode shows large
  b.model = sf::SessionModel{"models/ed.safetensors", ""};
  b.prompt = "";
  b.context = "abc";
  b.run = sf::SessionRun{"translate", 0, 3};
  f.stops = {a, b};
  return f;
}

void expect_same_cursor(const CursorRef& a, const CursorRef& b) {
  EXPECT_EQ(a.event, b.event);
  EXPECT_EQ(a.alg, b.alg);
  EXPECT_EQ(a.line, b.line);
  EXPECT_EQ(a.kind, b.kind);
  EXPECT_EQ(a.depth, b.depth);
  EXPECT_EQ(a.idx, b.idx);
  EXPECT_EQ(a.caller, b.caller);
  EXPECT_EQ(a.label, b.label);
}

// The message of the sf::Error that reading `text` throws ("" when it reads).
std::string read_error(const std::string& text) {
  try {
    sf::session_from_json(text);
  } catch (const sf::Error& e) {
    return e.what();
  }
  return "";
}

// A minimal valid session with `patch` merged in (JSON merge patch: null removes a key).
std::string with(const std::string& patch) {
  nlohmann::json j = nlohmann::json::parse(sf::session_to_json(full_session()));
  j.merge_patch(nlohmann::json::parse(patch));
  return j.dump();
}

fs::path temp_dir() {
  const fs::path d = fs::temp_directory_path() / ("sf-session-file-" + std::to_string(::getpid()));
  fs::create_directories(d);
  return d;
}

}  // namespace

TEST(SessionFile, RoundTripKeepsEveryField) {
  const SessionFile f = full_session();
  const SessionFile g = sf::session_from_json(sf::session_to_json(f));
  EXPECT_EQ(g.version, 1);
  EXPECT_EQ(g.title, f.title);
  EXPECT_EQ(g.description, f.description);
  const sf::SessionState &a = f.state, &b = g.state;
  EXPECT_EQ(b.model.path, a.model.path);
  EXPECT_EQ(b.model.checksum, a.model.checksum);
  EXPECT_EQ(b.prompt, a.prompt);
  EXPECT_EQ(b.context, a.context);
  EXPECT_EQ(b.run.kind, "generate");
  EXPECT_EQ(b.run.generate, 7);
  expect_same_cursor(b.cursor, a.cursor);
  EXPECT_EQ(b.breakpoints, a.breakpoints);
  EXPECT_EQ(b.sampling.tau, 0.25);
  EXPECT_EQ(b.sampling.l_gen, 33);
  EXPECT_EQ(b.sampling.seed, 18446744073709551615ull);
  EXPECT_FALSE(b.sampling.trim_context);
  EXPECT_TRUE(b.sampling.kv_cache);
  EXPECT_FALSE(b.sampling.stop_at_eos);
  EXPECT_EQ(b.sampling.top_k, 7);
  EXPECT_EQ(b.sampling.top_p, 0.875);  // exact in binary, so it survives the text form unchanged
  EXPECT_TRUE(b.sampling.paged);
  EXPECT_EQ(b.sampling.kv_block, 3);
  EXPECT_EQ(b.fill.tau, 1.5);
  EXPECT_EQ(b.fill.seed, 9u);
  EXPECT_EQ(b.fill.top_k, 3);
  EXPECT_EQ(b.translation.tau, 0.5);
  EXPECT_EQ(b.translation.seed, 77u);
  EXPECT_EQ(b.translation.top_k, 2);
  EXPECT_EQ(b.translation.top_p, 0.5);
  EXPECT_TRUE(b.translation.reuse_encoding);
  EXPECT_TRUE(b.translation.kv_cache);
  EXPECT_EQ(b.training.task, a.training.task);
  EXPECT_EQ(b.training.mode, "paper");
  EXPECT_EQ(b.training.eta, 0.01);
  EXPECT_EQ(b.training.batch, 8);
  EXPECT_EQ(b.training.seed, 4u);
  EXPECT_EQ(b.view.panels, a.view.panels);
  EXPECT_EQ(b.view.selected_value, "Ṽ");
  EXPECT_EQ(b.view.theme, "high-contrast");
  EXPECT_TRUE(b.view.colorblind);
  EXPECT_EQ(b.view.font_px, 23.5f);
  EXPECT_EQ(b.view.notation, "dyz");
  ASSERT_EQ(g.stops.size(), 2u);
  EXPECT_TRUE(g.is_lesson());
  expect_same_cursor(g.stops[0].cursor, f.stops[0].cursor);
  EXPECT_EQ(g.stops[0].title, "The causal mask");
  EXPECT_EQ(g.stops[0].panels, std::vector<std::string>{"attention"});
  EXPECT_EQ(g.stops[0].note, f.stops[0].note);
  EXPECT_FALSE(g.stops[0].model || g.stops[0].prompt || g.stops[0].context || g.stops[0].run);
  expect_same_cursor(g.stops[1].cursor, f.stops[1].cursor);
  EXPECT_EQ(g.stops[1].selected_value, "Z");
  EXPECT_EQ(g.stops[0].focus, "");  // none named: the value the stop's step bound
  EXPECT_EQ(g.stops[1].focus, "softmax(S/√d_attn)");
  ASSERT_TRUE(g.stops[1].model && g.stops[1].prompt && g.stops[1].context && g.stops[1].run);
  EXPECT_EQ(g.stops[1].model->path, "models/ed.safetensors");
  EXPECT_EQ(*g.stops[1].prompt, "");
  EXPECT_EQ(*g.stops[1].context, "abc");
  EXPECT_EQ(g.stops[1].run->kind, "translate");
  EXPECT_EQ(g.stops[1].run->translate, 3);
}

// The typed lines keep the file's text form: a caller is alg*1000 + line (0: top level), a
// breakpoint {"alg", "line"}.
TEST(SessionFile, LinesKeepTheirTextForm) {
  const nlohmann::json j = nlohmann::json::parse(sf::session_to_json(full_session()));
  EXPECT_EQ(j["cursor"]["caller"], 5002);
  EXPECT_EQ(j["breakpoints"], nlohmann::json::parse(R"([{"alg": 4, "line": 6}, {"alg": 10, "line": 7}])"));
  const SessionFile top = sf::session_from_json(with(R"({"cursor": {"caller": 0}})"));
  EXPECT_EQ(top.state.cursor.caller, sf::LineRef{});  // the top level, not "any"
  const SessionFile called = sf::session_from_json(with(R"({"cursor": {"caller": 8016}})"));
  EXPECT_EQ(called.state.cursor.caller, sf::lines::ed_transformer::cross_attention);
}

// A backward listing's line ("adjoint of line n", issue 24) keeps its pass in the cursor and the breakpoints; a file
// without "pass" (every file before the backward listings) reads as forward.
TEST(SessionFile, BackwardLinesKeepTheirPass) {
  SessionFile f = full_session();
  f.state.cursor.pass = sf::Pass::Backward;
  f.state.breakpoints.push_back(sf::lines::attention::S.adjoint());
  const std::string text = sf::session_to_json(f);
  const nlohmann::json j = nlohmann::json::parse(text);
  EXPECT_EQ(j["cursor"]["pass"], "backward");
  EXPECT_EQ(j["breakpoints"].back(), nlohmann::json::parse(R"({"alg": 4, "line": 4, "pass": "backward"})"));
  EXPECT_FALSE(j["breakpoints"].front().contains("pass"));  // forward: no key, as before
  const SessionFile back = sf::session_from_json(text);
  EXPECT_EQ(back.state.cursor.pass, sf::Pass::Backward);
  EXPECT_EQ(back.state.breakpoints.back(), sf::lines::attention::S.adjoint());
  EXPECT_EQ(back.state.breakpoints.front().pass, sf::Pass::Forward);
  EXPECT_THROW(sf::session_from_json(with(R"({"cursor": {"alg": 4, "line": 6, "pass": "sideways"}})")), sf::Error);
}

TEST(SessionFile, SecondWriteIsByteIdentical) {
  const std::string first = sf::session_to_json(full_session());
  EXPECT_EQ(sf::session_to_json(sf::session_from_json(first)), first);
  const std::string plain = sf::session_to_json(SessionFile{});
  EXPECT_EQ(sf::session_to_json(sf::session_from_json(plain)), plain);
  EXPECT_EQ(plain.find("\"stops\""), std::string::npos);  // a plain session has no stops key
  EXPECT_EQ(plain.find("\"cursor\""), std::string::npos);  // nor a cursor when none was set
}

TEST(SessionFile, SaveAndLoadThroughAFile) {
  const fs::path p = temp_dir() / "a.stepformer";
  sf::save_session(p.string(), full_session());
  EXPECT_EQ(sf::load_session(p.string()).state.cursor.label, "softmax(S/√d_attn)");
  EXPECT_FALSE(fs::exists(p.string() + ".tmp." + std::to_string(::getpid())));
  fs::remove_all(p.parent_path());
}

TEST(SessionFile, HandWrittenCursorKeysLeftOutAreWildcards) {
  const SessionFile f = sf::session_from_json(
      R"({"version": 1, "stops": [{"title": "t", "cursor": {"alg": 4, "line": 6, "idx": {"h": 2}}},
                                   {"cursor": {"alg": 10, "line": 0}}]})");
  const CursorRef& c = f.stops[0].cursor;
  EXPECT_EQ(c.event, SIZE_MAX);
  EXPECT_EQ(c.kind, EventKind::Line);
  EXPECT_EQ(c.depth, -1);
  EXPECT_FALSE(c.caller.has_value());  // any caller
  EXPECT_FALSE(c.label.has_value());
  EXPECT_EQ(c.idx, (sf::Indices{-1, 2, -1, -1, -1}));
  EXPECT_EQ(f.stops[1].cursor.kind, EventKind::Enter);  // line 0 without a kind: the Enter event
  EXPECT_EQ(f.state.cursor.alg, 0);  // no cursor at the top: none
  EXPECT_EQ(f.state.run.kind, "forward");
  EXPECT_EQ(f.state.view.theme, "dark");
}

// Each malformed file is refused with a message naming the field (and what it must be).
TEST(SessionFile, MalformedFilesNameTheField) {
  const std::vector<std::pair<std::string, std::string>> cases = {
      {"[1, 2]", "the file must be a JSON object"},
      {R"({"title": "no version"})", "version is missing"},
      {with(R"({"version": 2})"), "made by a newer Stepformer (format version 2"},
      {with(R"({"version": 0})"), "version must be 1"},
      {with(R"({"version": "1"})"), "version must be 1"},
      {with(R"({"title": 5})"), "title must be a string"},
      {with(R"({"model": "default"})"), "model must be a JSON object"},
      {with(R"({"model": {"path": 3}})"), "model.path must be a string"},
      {with(R"({"model": {"checksum": "md5:00"}})"), "model.checksum must be \"fnv1a64:\""},
      {with(R"({"prompt": null})"), ""},  // merge patch: null removes the key, which is allowed
      {with(R"({"prompt": ["x"]})"), "prompt must be a string"},
      {with(R"({"run": {"kind": "sample"}})"), "run.kind must be one of \"forward\", \"generate\""},
      {with(R"({"run": {"generate": -1}})"), "run.generate must be an integer 0–4096"},
      {with(R"({"run": {"translate": 1.5}})"), "run.translate must be an integer 0–4096"},
      {with(R"({"cursor": {"alg": 16}})"), "cursor.alg must be an integer 1–15"},
      {with(R"({"cursor": {"alg": null}})"), "cursor.alg is missing: it must be an integer 1–15"},
      {with(R"({"cursor": {"line": -1}})"), "cursor.line must be an integer 0–999"},
      {with(R"({"cursor": {"kind": "exit"}})"), "cursor.kind must be one of \"enter\", \"line\", \"substep\""},
      {with(R"({"cursor": {"kind": "enter"}})"), "cursor.line must be 0 for an \"enter\" event"},
      {with(R"({"cursor": {"event": -3}})"), "cursor.event must be an integer ≥ 0"},
      {with(R"({"cursor": {"depth": -2}})"), "cursor.depth must be an integer 0–1000"},
      {with(R"({"cursor": {"idx": {"t": -1}}})"), "cursor.idx.t must be an integer ≥ 0"},
      {with(R"({"cursor": {"idx": [1, 2]}})"), "cursor.idx must be a JSON object"},
      {with(R"({"cursor": {"caller": "4006"}})"), "cursor.caller must be an integer ≥ 0"},
      {with(R"({"cursor": {"label": 7}})"), "cursor.label must be a string"},
      {with(R"({"breakpoints": {"alg": 4}})"), "breakpoints must be a list"},
      {with(R"({"breakpoints": [{"alg": 4, "line": 6}, {"alg": 0, "line": 1}]})"), "breakpoints[1].alg must be an integer 1–15"},
      {with(R"({"breakpoints": [{"alg": 4}]})"), "breakpoints[0].line is missing"},
      {with(R"({"sampling": {"tau": -0.1}})"), "sampling.tau must be a number ≥ 0"},
      {with(R"({"sampling": {"l_gen": 0}})"), "sampling.l_gen must be an integer 1–4096"},
      {with(R"({"sampling": {"l_gen": 4097}})"), "sampling.l_gen must be an integer 1–4096"},
      {with(R"({"sampling": {"seed": -1}})"), "sampling.seed must be an integer 0–18446744073709551615"},
      {with(R"({"sampling": {"kv_cache": 1}})"), "sampling.kv_cache must be true or false"},
      {with(R"({"fill": {"top_k": 0}})"), "fill.top_k must be an integer ≥ 1"},
      {with(R"({"translation": {"reuse_encoding": "yes"}})"), "translation.reuse_encoding must be true or false"},
      {with(R"({"training": {"mode": "fast"}})"), "training.mode must be one of \"practical\", \"paper\""},
      {with(R"({"training": {"eta": 0}})"), "training.eta must be a number in (0, 10]"},
      {with(R"({"training": {"batch": 0}})"), "training.batch must be an integer 1–4096"},
      {with(R"({"training": {"task": ""}})"), "training.task must be a built-in task's name"},
      {with(R"({"view": {"theme": "solarized"}})"), "view.theme must be one of \"dark\", \"light\", \"high-contrast\""},
      {with(R"({"view": {"font_px": 7}})"), "view.font_px must be a number 8–96"},
      {with(R"({"view": {"font_px": 97}})"), "view.font_px must be a number 8–96"},
      {with(R"({"view": {"notation": "einstein"}})"), "view.notation must be one of \"paper\", \"carpenter\", \"dyz\""},
      {with(R"({"view": {"panels": ["tensor", 3]}})"), "view.panels[1] must be a string"},
      {with(R"({"view": {"colorblind": "no"}})"), "view.colorblind must be true or false"},
      {with(R"({"stops": {}})"), "stops must be a list"},
      {with(R"({"stops": [5]})"), "stops[0] must be a JSON object"},
      {with(R"({"stops": [{"title": "a", "cursor": {"alg": 4, "line": 6}}, {"title": "b"}]})"),
       "stops[1].cursor is missing"},
      {with(R"({"stops": [{"cursor": {"alg": 4, "line": 6}}, {"cursor": {"alg": 4, "line": 6}},
                          {"cursor": {"alg": 99, "line": 6}}]})"),
       "stops[2].cursor.alg must be an integer 1–15"},
      {with(R"({"stops": [{"cursor": {"alg": 4, "line": 6}, "run": {"kind": "x"}}]})"), "stops[0].run.kind must be one of"},
      {with(R"({"stops": [{"cursor": {"alg": 4, "line": 6}, "model": {"path": []}}]})"), "stops[0].model.path must be a string"},
      {with(R"({"stops": [{"cursor": {"alg": 4, "line": 6}, "panels": "attention"}]})"), "stops[0].panels must be a list"},
      {with(R"({"stops": [{"cursor": {"alg": 4, "line": 6}, "note": false}]})"), "stops[0].note must be a string"},
  };
  ASSERT_GE(cases.size(), 25u);
  for (const auto& [text, want] : cases) {
    const std::string got = read_error(text);
    if (want.empty()) {
      EXPECT_EQ(got, "") << text;
    } else {
      EXPECT_NE(got.find("session file: "), std::string::npos) << got;
      EXPECT_NE(got.find(want), std::string::npos) << "expected \"" << want << "\" in \"" << got << "\"";
    }
  }
}

TEST(SessionFile, UnknownKeysAreIgnored) {
  EXPECT_EQ(read_error(with(R"({"made_with": "a later version", "view": {"zoom": 2}})")), "");
}

TEST(SessionFile, TruncatedFilesAreRefusedAtEveryLength) {
  const std::string text = sf::session_to_json(full_session());
  for (size_t n = 0; n + 1 < text.size(); n += 7) {  // every 7th prefix: none is a whole JSON object
    const std::string got = read_error(text.substr(0, n));
    EXPECT_NE(got.find("session file: not valid JSON"), std::string::npos) << n << ": " << got;
  }
  EXPECT_NE(read_error(text.substr(0, text.size() / 2)).find("ends too early"), std::string::npos);
}

TEST(SessionFile, GarbageAndDeepNestingNeverCrash) {
  EXPECT_NE(read_error(std::string("\x00\xff\xfe{", 4)), "");
  EXPECT_NE(read_error(std::string(100000, '[')), "");
  EXPECT_NE(read_error(std::string(100000, '[') + std::string(100000, ']')), "");
  const std::string huge = read_error(R"({"version": 1, "stops": [{"cursor": {"alg": 4, "line": 6, "idx": {"l": 1e400}}}]})");
  EXPECT_NE(huge.find("session file: not valid JSON"), std::string::npos) << huge;
}

TEST(SessionFile, LoadRefusesAHugeFileAndNamesIt) {
  const fs::path p = temp_dir() / "huge.stepformer";
  { std::ofstream(p) << std::string((16u << 20) + 1, ' '); }
  try {
    sf::load_session(p.string());
    FAIL() << "a file over 16 MiB was read";
  } catch (const sf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("more than the limit"), std::string::npos) << e.what();
  }
  { std::ofstream(p) << "{\"version\": 1, \"prompt\": 3}"; }
  try {
    sf::load_session(p.string());
    FAIL();
  } catch (const sf::Error& e) {
    EXPECT_EQ(std::string(e.what()), p.string() + ": session file: prompt must be a string \"…\"");
  }
  fs::remove_all(p.parent_path());
}

TEST(SessionFile, SavingInvalidUtf8IsAClearError) {
  SessionFile f;
  f.state.prompt = "\xff\xfe";
  try {
    sf::session_to_json(f);
    FAIL();
  } catch (const sf::Error& e) {
    EXPECT_NE(std::string(e.what()).find("not valid UTF-8"), std::string::npos);
  }
}

TEST(SessionFile, ModelPathsResolve) {
  EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", "@assets/default.safetensors", "/opt/sf/assets"),
            "/opt/sf/assets/default.safetensors");
  EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", "m/x.safetensors", "/opt"), "/home/a/m/x.safetensors");
  EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", "../b/x.safetensors", "/opt"), "/home/b/x.safetensors");
  EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", "/data/gpt2", "/opt"), "/data/gpt2");
  EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", "", "/opt"), "");
  EXPECT_EQ(sf::model_path_for("/home/a/s.stepformer", "/opt/sf/assets/bert.safetensors", "/opt/sf/assets"),
            "@assets/bert.safetensors");
  EXPECT_EQ(sf::model_path_for("/home/a/s.stepformer", "/home/a/m/x.safetensors", "/opt/sf/assets"), "m/x.safetensors");
  EXPECT_EQ(sf::model_path_for("/home/a/s.stepformer", "/home/b/x.safetensors", "/opt/sf/assets"),
            "/home/b/x.safetensors");
  // Saved, then resolved: the same file.
  for (const std::string m : {"/opt/sf/assets/ed.safetensors", "/home/a/m/x.safetensors", "/srv/y.safetensors"})
    EXPECT_EQ(sf::resolve_model_path("/home/a/s.stepformer", sf::model_path_for("/home/a/s.stepformer", m, "/opt/sf/assets"),
                                     "/opt/sf/assets"),
              m);
}

TEST(SessionFile, ChecksumIsFnv1a64AndChangesWithOneByte) {
  const fs::path d = temp_dir();
  const fs::path p = d / "model.safetensors";
  sf::write_file_atomic(p.string(), "a");
  EXPECT_EQ(sf::model_checksum(p.string()), "fnv1a64:af63dc4c8601ec8c");  // FNV-1a 64 of "a" (the published test vector)
  sf::write_file_atomic(p.string(), "");
  EXPECT_EQ(sf::model_checksum(p.string()), "fnv1a64:cbf29ce484222325");  // the offset basis
  std::string big(3'000'000, 'x');  // more than one read buffer
  sf::write_file_atomic(p.string(), big);
  const std::string before = sf::model_checksum(p.string());
  big[2'500'000] = 'y';
  sf::write_file_atomic(p.string(), big);
  const std::string after = sf::model_checksum(p.string());
  EXPECT_NE(before, after);
  EXPECT_EQ(sf::model_checksum(d.string()), after);  // a folder: its model.safetensors
  EXPECT_THROW(sf::model_checksum((d / "missing.safetensors").string()), sf::Error);
  fs::remove_all(d);
}

TEST(SessionFile, TheShippedModelHasAChecksum) {
  const std::string assets = std::string(STEPFORMER_TEST_DATA) + "/../../assets/default.safetensors";
  const std::string c = sf::model_checksum(assets);
  EXPECT_EQ(c.size(), 24u);
  EXPECT_EQ(c, sf::model_checksum(assets));
}

// A small trace: Alg 10 calling Alg 4 for two layers, each with a substep.
sf::Trace small_trace() {
  sf::Trace t;
  sf::Tracer tr(t);
  tr.enter(10, {});
  for (int l = 1; l <= 2; ++l) {
    sf::TraceIndex li(&tr, &sf::Indices::l, l);
    tr.enter(4, {});
    tr.line(sf::lines::attention::mask, {});
    tr.substep(sf::lines::attention::V_tilde, "softmax", {});
    tr.line(sf::lines::attention::V_tilde, {});
    tr.leave();
    tr.line(sf::lines::d_transformer::attention, {});
  }
  tr.line(sf::lines::d_transformer::end, {});
  tr.leave();
  return t;
}

TEST(SessionFile, CursorRefFindsTheSameEventAgain) {
  const sf::Trace t = small_trace();
  for (size_t k = 0; k < t.size(); ++k) EXPECT_EQ(sf::resolve_cursor(t, sf::cursor_ref(t, k)), k) << k;
  // Through the JSON too.
  for (size_t k = 0; k < t.size(); ++k) {
    SessionFile f;
    f.state.cursor = sf::cursor_ref(t, k);
    EXPECT_EQ(sf::resolve_cursor(t, sf::session_from_json(sf::session_to_json(f)).state.cursor), k);
  }
}

TEST(SessionFile, CursorRefFallsBackAndHonoursWildcards) {
  const sf::Trace t = small_trace();
  size_t layer2_line6 = SIZE_MAX, layer1_line6 = SIZE_MAX;
  for (size_t k = 0; k < t.size(); ++k)
    if (t.events[k].alg == 4 && t.events[k].line == 6 && t.events[k].kind == EventKind::Line)
      (t.events[k].idx.l == 1 ? layer1_line6 : layer2_line6) = k;
  CursorRef c = sf::cursor_ref(t, layer2_line6);
  c.event = 0;  // a stale hint: found by its fields
  EXPECT_EQ(sf::resolve_cursor(t, c), layer2_line6);
  c.event = layer1_line6;  // a hint at an event with other indices is not taken
  EXPECT_EQ(sf::resolve_cursor(t, c), layer2_line6);
  CursorRef any;  // Algorithm 4 line 6 anywhere: the first
  any.alg = 4;
  any.line = 6;
  any.idx = {-1, -1, -1, -1, -1};
  EXPECT_EQ(sf::resolve_cursor(t, any), layer1_line6);
  any.idx.l = 2;
  EXPECT_EQ(sf::resolve_cursor(t, any), layer2_line6);
  any.idx.l = 3;  // no layer 3
  EXPECT_EQ(sf::resolve_cursor(t, any), SIZE_MAX);
  CursorRef sub = any;
  sub.idx.l = -1;
  sub.kind = EventKind::SubStep;
  sub.label = "softmax";
  EXPECT_EQ(sf::resolve_cursor(t, sub), layer1_line6 - 1);
  sub.label = "exp";
  EXPECT_EQ(sf::resolve_cursor(t, sub), SIZE_MAX);
  CursorRef wrong_caller = sf::cursor_ref(t, layer1_line6);
  wrong_caller.caller = sf::LineRef{9, 999};
  EXPECT_EQ(sf::resolve_cursor(t, wrong_caller), SIZE_MAX);
  CursorRef exact_zero = any;  // idx 0 = not in force: Algorithm 4's lines all have l in force
  exact_zero.idx = {};
  EXPECT_EQ(sf::resolve_cursor(t, exact_zero), SIZE_MAX);
}

}  // namespace test_session_file
