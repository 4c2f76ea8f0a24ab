// The *.stepformer format (core/io/session_file.hpp, docs/sessions.md): JSON written with a fixed
// key order (a second save of the same session is byte-identical) and read strictly, every field
// type- and range-checked, an error naming the field's path.
#include "core/io/session_file.hpp"

#include <array>
#include <climits>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "core/arch/vit.hpp"            // kImagePixels, kDigitMax
#include "core/io/fileio.hpp"
#include "core/model/error.hpp"
#include "core/pseudocode/pseudocode.hpp"  // extra_pseudocode: the listings not in the paper
#include "core/training/digits.hpp"       // kDigitsTest

namespace sf {

namespace fs = std::filesystem;
using json = nlohmann::json;
using ojson = nlohmann::ordered_json;

// ---------------------------------------------------------------------------------------------
// Cursor references

CursorRef cursor_ref(const Trace& t, size_t k) {
  const Event& e = t.events.at(k);
  CursorRef c;
  c.event = k;
  c.alg = e.alg;
  c.line = e.line;
  c.pass = e.pass;
  c.kind = e.kind;
  c.depth = e.depth;
  c.idx = e.idx;
  c.caller = t.caller_ref(k);
  if (e.kind == EventKind::SubStep) c.label = e.label;
  return c;
}

namespace {

bool index_matches(int want, int have) { return want < 0 || want == have; }

bool matches(const Trace& t, size_t k, const CursorRef& c) {
  const Event& e = t.events[k];
  if (e.alg != c.alg || e.line != c.line || e.pass != c.pass || e.kind != c.kind) return false;
  if (c.depth >= 0 && e.depth != c.depth) return false;
  if (!index_matches(c.idx.l, e.idx.l) || !index_matches(c.idx.h, e.idx.h) || !index_matches(c.idx.t, e.idx.t) ||
      !index_matches(c.idx.i, e.idx.i) || !index_matches(c.idx.n, e.idx.n))
    return false;
  if (c.label && e.label != *c.label) return false;
  return !c.caller || t.caller_ref(k) == *c.caller;  // last: caller_ref walks the trace
}

}  // namespace

size_t resolve_cursor(const Trace& t, const CursorRef& c) {
  if (c.event < t.size() && matches(t, c.event, c)) return c.event;
  for (size_t k = 0; k < t.size(); ++k)
    if (matches(t, k, c)) return k;
  return SIZE_MAX;
}

// ---------------------------------------------------------------------------------------------
// Writing

namespace {

constexpr std::array<const char*, 3> kKinds = {"enter", "line", "substep"};  // EventKind's order
constexpr std::array<const char*, 5> kRunKinds = {"forward", "generate", "translate", "fill", "training"};
constexpr std::array<const char*, 3> kThemes = {"dark", "light", "high-contrast"};
constexpr std::array<const char*, 3> kNotations = {"paper", "carpenter", "dyz"};
constexpr std::array<const char*, 2> kTrainingModes = {"practical", "paper"};
constexpr std::array<const char*, 2> kPasses = {"forward", "backward"};  // Pass's order

// A line's pass, written only for the backward listing's lines (files from before it read as forward).
void put_pass(ojson& j, Pass p) {
  if (p == Pass::Backward) j["pass"] = kPasses[1];
}

ojson cursor_json(const CursorRef& c) {
  ojson j;
  if (c.event != SIZE_MAX) j["event"] = c.event;
  j["alg"] = c.alg;
  j["line"] = c.line;
  put_pass(j, c.pass);
  j["kind"] = kKinds[static_cast<size_t>(c.kind)];
  if (c.depth >= 0) j["depth"] = c.depth;
  ojson idx = ojson::object();
  const std::pair<const char*, int> fields[] = {{"l", c.idx.l}, {"h", c.idx.h}, {"t", c.idx.t}, {"i", c.idx.i}, {"n", c.idx.n}};
  for (const auto& [name, v] : fields)
    if (v >= 0) idx[name] = v;
  j["idx"] = idx;
  if (c.caller) j["caller"] = session_code(*c.caller);
  if (c.label) j["label"] = *c.label;
  return j;
}

ojson model_json(const SessionModel& m) { return {{"path", m.path}, {"checksum", m.checksum}}; }

ojson run_json(const SessionRun& r) {
  ojson j = {{"kind", r.kind}, {"generate", r.generate}, {"translate", r.translate}};
  if (r.tau) j["tau"] = *r.tau;
  return j;
}

ojson image_json(const SessionImage& im) { return {{"pixels", im.pixels}, {"test_digit", im.test_digit}}; }

ojson state_json(const SessionFile& f) {
  const SessionState& s = f.state;
  ojson j;
  j["version"] = f.version;
  j["title"] = f.title;
  j["description"] = f.description;
  j["model"] = model_json(s.model);
  j["prompt"] = s.prompt;
  j["context"] = s.context;
  if (s.image) j["image"] = image_json(*s.image);
  j["run"] = run_json(s.run);
  if (s.cursor.alg != 0) j["cursor"] = cursor_json(s.cursor);  // alg 0: none (the run's first line)
  ojson bps = ojson::array();
  for (const LineRef& b : s.breakpoints) {
    ojson bp = {{"alg", b.alg}, {"line", b.line}};
    put_pass(bp, b.pass);
    bps.push_back(bp);
  }
  j["breakpoints"] = bps;
  j["sampling"] = {{"tau", s.sampling.tau},
                   {"l_gen", s.sampling.l_gen},
                   {"seed", s.sampling.seed},
                   {"trim_context", s.sampling.trim_context},
                   {"kv_cache", s.sampling.kv_cache},
                   {"stop_at_eos", s.sampling.stop_at_eos},
                   {"top_k", s.sampling.top_k},
                   {"top_p", s.sampling.top_p},
                   {"paged", s.sampling.paged},
                   {"kv_block", s.sampling.kv_block}};
  j["fill"] = {{"tau", s.fill.tau}, {"seed", s.fill.seed}, {"top_k", s.fill.top_k}};
  j["translation"] = {{"tau", s.translation.tau},
                      {"seed", s.translation.seed},
                      {"reuse_encoding", s.translation.reuse_encoding},
                      {"kv_cache", s.translation.kv_cache},
                      {"top_k", s.translation.top_k},
                      {"top_p", s.translation.top_p}};
  j["training"] = {{"task", s.training.task},
                   {"mode", s.training.mode},
                   {"eta", s.training.eta},
                   {"batch", s.training.batch},
                   {"seed", s.training.seed}};
  j["view"] = {{"panels", s.view.panels},
               {"selected_value", s.view.selected_value},
               {"theme", s.view.theme},
               {"colorblind", s.view.colorblind},
               {"font_px", s.view.font_px},
               {"notation", s.view.notation}};
  return j;
}

ojson stop_json(const LessonStop& st) {
  ojson j;
  j["title"] = st.title;
  j["cursor"] = cursor_json(st.cursor);
  j["panels"] = st.panels;
  j["note"] = st.note;
  j["selected_value"] = st.selected_value;
  if (!st.focus.empty()) j["focus"] = st.focus;
  if (st.model) j["model"] = model_json(*st.model);
  if (st.prompt) j["prompt"] = *st.prompt;
  if (st.context) j["context"] = *st.context;
  if (st.image) j["image"] = image_json(*st.image);
  if (st.run) j["run"] = run_json(*st.run);
  return j;
}

}  // namespace

std::string session_to_json(const SessionFile& s) {
  ojson j = state_json(s);
  if (!s.stops.empty()) {
    ojson stops = ojson::array();
    for (const LessonStop& st : s.stops) stops.push_back(stop_json(st));
    j["stops"] = stops;
  }
  try {
    return j.dump(2) + "\n";
  } catch (const ojson::type_error&) {
    throw Error("cannot save the session: a text in it (the prompt, the context, a note or a path) is not valid UTF-8");
  }
}

// ---------------------------------------------------------------------------------------------
// Reading

namespace {

[[noreturn]] void bad(const std::string& field, const std::string& what) {
  throw Error("session file: " + field + " must be " + what);
}

template <size_t N>
std::string one_of(const std::array<const char*, N>& names) {
  std::string s = "one of";
  for (size_t i = 0; i < N; ++i) s += std::string(i ? ", \"" : " \"") + names[i] + "\"";
  return s;
}

std::string range(long long lo, long long hi) {
  if (hi == INT_MAX) return "an integer ≥ " + std::to_string(lo);
  return "an integer " + std::to_string(lo) + "–" + std::to_string(hi);
}

// A JSON object being read, with its path in the file ("stops[2].cursor"); absent keys keep
// the default that the caller passes in.
class Obj {
 public:
  Obj(const json& j, std::string at) : j_(j), at_(std::move(at)) {
    if (!j.is_object()) bad(at_.empty() ? "the file" : at_, "a JSON object {…}");
  }
  std::string path(const std::string& key) const { return at_.empty() ? key : at_ + "." + key; }
  const json* find(const char* key) const {
    const auto it = j_.find(key);
    return it == j_.end() ? nullptr : &*it;
  }
  Obj object(const char* key) const {
    static const json empty = json::object();
    const json* v = find(key);
    return Obj(v ? *v : empty, path(key));
  }
  void require(const char* key, const std::string& what) const {
    if (!find(key)) throw Error("session file: " + path(key) + " is missing: it must be " + what);
  }
  long long integer(const char* key, long long lo, long long hi, long long def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number_integer()) bad(path(key), range(lo, hi));
    if (v->is_number_unsigned() && v->get<uint64_t>() > static_cast<uint64_t>(hi)) bad(path(key), range(lo, hi));
    const long long x = v->get<long long>();
    if (x < lo || x > hi) bad(path(key), range(lo, hi));
    return x;
  }
  int integer(const char* key, int lo, int hi, int def) const {
    return static_cast<int>(integer(key, static_cast<long long>(lo), static_cast<long long>(hi), static_cast<long long>(def)));
  }
  uint64_t seed(const char* key, uint64_t def) const {
    const json* v = find(key);
    if (!v) return def;
    if (v->is_number_unsigned()) return v->get<uint64_t>();
    bad(path(key), "an integer 0–18446744073709551615 (a seed)");
  }
  double number(const char* key, double lo, double hi, const std::string& what, double def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_number()) bad(path(key), what);
    const double x = v->get<double>();
    if (!std::isfinite(x) || x < lo || x > hi) bad(path(key), what);
    return x;
  }
  bool boolean(const char* key, bool def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_boolean()) bad(path(key), "true or false");
    return v->get<bool>();
  }
  std::string string(const char* key, const std::string& def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_string()) bad(path(key), "a string \"…\"");
    return v->get<std::string>();
  }
  template <size_t N>
  std::string name(const char* key, const std::array<const char*, N>& names, const std::string& def) const {
    const json* v = find(key);
    if (!v) return def;
    if (v->is_string())
      for (const char* n : names)
        if (v->get<std::string>() == n) return n;
    bad(path(key), one_of(names));
  }
  std::vector<std::string> strings(const char* key, const std::vector<std::string>& def) const {
    const json* v = find(key);
    if (!v) return def;
    if (!v->is_array()) bad(path(key), "a list of strings [\"…\", …]");
    std::vector<std::string> out;
    for (size_t i = 0; i < v->size(); ++i) {
      if (!(*v)[i].is_string()) bad(path(key) + "[" + std::to_string(i) + "]", "a string \"…\"");
      out.push_back((*v)[i].get<std::string>());
    }
    return out;
  }
  // The elements of the array at key (absent: none), each with its path.
  std::vector<std::pair<const json*, std::string>> array(const char* key) const {
    const json* v = find(key);
    std::vector<std::pair<const json*, std::string>> out;
    if (!v) return out;
    if (!v->is_array()) bad(path(key), "a list [ … ]");
    for (size_t i = 0; i < v->size(); ++i) out.emplace_back(&(*v)[i], path(key) + "[" + std::to_string(i) + "]");
    return out;
  }

 private:
  const json& j_;
  std::string at_;
};

// What an algorithm number may be: the paper's 1–15, or the id of one of Stepformer's listings not in the
// paper (extra_pseudocode(): 104 for Algorithm 4-F), whose steps a cursor or a breakpoint can name too.
std::string algorithm_numbers() {
  std::string s = range(1, 15);
  for (const PseudoAlgorithm& a : extra_pseudocode())
    s += ", or " + std::to_string(a.number) + " (Algorithm " + algorithm_label(a.number) + ", not in the paper)";
  return s;
}

int read_alg(const Obj& o) {
  const std::string what = algorithm_numbers();
  o.require("alg", what);
  const json& v = *o.find("alg");
  const long long alg = v.is_number_integer() && !(v.is_number_unsigned() && v.get<uint64_t>() > INT_MAX) ? v.get<long long>() : 0;
  if (alg < 1 || (alg > 15 && (alg > INT_MAX || !not_in_paper(static_cast<int>(alg))))) bad(o.path("alg"), what);
  return static_cast<int>(alg);
}

Pass read_pass(const Obj& o) { return o.name("pass", kPasses, "forward") == kPasses[1] ? Pass::Backward : Pass::Forward; }

CursorRef read_cursor(const Obj& o) {
  CursorRef c;
  c.alg = read_alg(o);
  o.require("line", range(0, 999));
  c.line = o.integer("line", 0, 999, 0);
  c.pass = read_pass(o);
  if (const json* e = o.find("event")) {
    if (!e->is_number_unsigned()) bad(o.path("event"), "an integer ≥ 0");
    c.event = static_cast<size_t>(e->get<uint64_t>());
  }
  const std::string kind = o.name("kind", kKinds, c.line == 0 ? "enter" : "line");
  c.kind = kind == "enter" ? EventKind::Enter : kind == "line" ? EventKind::Line : EventKind::SubStep;
  if ((c.kind == EventKind::Enter) != (c.line == 0))
    bad(o.path("line"), c.kind == EventKind::Enter ? "0 for an \"enter\" event" : "≥ 1 for a \"" + kind + "\" event");
  c.depth = o.integer("depth", 0, 1000, -1);
  const Obj idx = o.object("idx");
  c.idx.l = idx.integer("l", 0, INT_MAX, -1);
  c.idx.h = idx.integer("h", 0, INT_MAX, -1);
  c.idx.t = idx.integer("t", 0, INT_MAX, -1);
  c.idx.i = idx.integer("i", 0, INT_MAX, -1);
  c.idx.n = idx.integer("n", 0, INT_MAX, -1);
  if (o.find("caller")) c.caller = from_session_code(o.integer("caller", 0, INT_MAX, 0));
  if (o.find("label")) c.label = o.string("label", "");
  return c;
}

SessionModel read_model(const Obj& o) {
  SessionModel m;
  m.path = o.string("path", "");
  m.checksum = o.string("checksum", "");
  if (!m.checksum.empty()) {
    const bool ok = m.checksum.size() == 24 && m.checksum.rfind("fnv1a64:", 0) == 0 &&
                    m.checksum.find_first_not_of("0123456789abcdef", 8) == std::string::npos;
    if (!ok) bad(o.path("checksum"), "\"fnv1a64:\" and 16 lower-case hex digits, or \"\"");
  }
  return m;
}

SessionRun read_run(const Obj& o) {
  SessionRun r;
  r.kind = o.name("kind", kRunKinds, r.kind);
  r.generate = o.integer("generate", 0, 4096, 0);
  r.translate = o.integer("translate", 0, 4096, 0);
  if (o.find("tau")) r.tau = o.number("tau", 0, 1e6, "a number ≥ 0 (τ; 0 takes the argmax)", 0);
  return r;
}

// "image": {"pixels": [64 integers 0–16], "test_digit": 0–360}: a vit's 8×8 input.
SessionImage read_image(const Obj& o) {
  const std::string what = "a list of 64 integers 0–16 (the 8×8 image, row by row)";
  o.require("pixels", what);
  SessionImage im;
  const auto pixels = o.array("pixels");
  if (static_cast<int>(pixels.size()) != kImagePixels) bad(o.path("pixels"), what + "; it has " + std::to_string(pixels.size()));
  for (const auto& [v, at] : pixels) {
    if (!v->is_number_integer() || v->get<long long>() < 0 || v->get<long long>() > kDigitMax) bad(at, range(0, kDigitMax));
    im.pixels.push_back(v->get<int>());
  }
  im.test_digit = o.integer("test_digit", 0, kDigitsTest, 0);
  return im;
}

SessionState read_state(const Obj& o) {
  SessionState s;
  s.model = read_model(o.object("model"));
  s.prompt = o.string("prompt", s.prompt);
  s.context = o.string("context", s.context);
  if (o.find("image")) s.image = read_image(o.object("image"));
  s.run = read_run(o.object("run"));
  if (o.find("cursor")) s.cursor = read_cursor(o.object("cursor"));
  for (const auto& [v, at] : o.array("breakpoints")) {
    const Obj b(*v, at);
    const int alg = read_alg(b);
    b.require("line", range(1, 999));
    s.breakpoints.push_back({alg, b.integer("line", 1, 999, 0), read_pass(b)});
  }
  const Obj sa = o.object("sampling");
  s.sampling.tau = sa.number("tau", 0, 1e6, "a number ≥ 0 (τ; 0 takes the argmax)", s.sampling.tau);
  s.sampling.l_gen = sa.integer("l_gen", 1, 4096, s.sampling.l_gen);
  s.sampling.seed = sa.seed("seed", s.sampling.seed);
  s.sampling.trim_context = sa.boolean("trim_context", s.sampling.trim_context);
  s.sampling.kv_cache = sa.boolean("kv_cache", s.sampling.kv_cache);
  s.sampling.stop_at_eos = sa.boolean("stop_at_eos", s.sampling.stop_at_eos);
  s.sampling.top_k = sa.integer("top_k", 0, INT_MAX, s.sampling.top_k);
  s.sampling.top_p = sa.number("top_p", 1e-300, 1, "a number in (0, 1] (top-p; 1 is off)", s.sampling.top_p);
  s.sampling.paged = sa.boolean("paged", s.sampling.paged);
  s.sampling.kv_block = sa.integer("kv_block", 1, 4096, s.sampling.kv_block);
  const Obj fi = o.object("fill");
  s.fill.tau = fi.number("tau", 0, 1e6, "a number ≥ 0 (τ; 0 takes the argmax)", s.fill.tau);
  s.fill.seed = fi.seed("seed", s.fill.seed);
  s.fill.top_k = fi.integer("top_k", 1, INT_MAX, s.fill.top_k);
  const Obj tr = o.object("translation");
  s.translation.tau = tr.number("tau", 0, 1e6, "a number ≥ 0 (τ; 0 takes the argmax)", s.translation.tau);
  s.translation.seed = tr.seed("seed", s.translation.seed);
  s.translation.reuse_encoding = tr.boolean("reuse_encoding", s.translation.reuse_encoding);
  s.translation.kv_cache = tr.boolean("kv_cache", s.translation.kv_cache);
  s.translation.top_k = tr.integer("top_k", 0, INT_MAX, s.translation.top_k);
  s.translation.top_p = tr.number("top_p", 1e-300, 1, "a number in (0, 1] (top-p; 1 is off)", s.translation.top_p);
  const Obj tg = o.object("training");
  s.training.task = tg.string("task", s.training.task);
  if (s.training.task.empty()) bad(tg.path("task"), "a built-in task's name or a text file's path, not \"\"");
  s.training.mode = tg.name("mode", kTrainingModes, s.training.mode);
  s.training.eta = tg.number("eta", 1e-12, 10, "a number in (0, 10] (the learning rate η)", s.training.eta);
  s.training.batch = tg.integer("batch", 1, 4096, s.training.batch);
  s.training.seed = tg.seed("seed", s.training.seed);
  const Obj vw = o.object("view");
  s.view.panels = vw.strings("panels", s.view.panels);
  s.view.selected_value = vw.string("selected_value", s.view.selected_value);
  s.view.theme = vw.name("theme", kThemes, s.view.theme);
  s.view.colorblind = vw.boolean("colorblind", s.view.colorblind);
  s.view.font_px = static_cast<float>(vw.number("font_px", 8, 96, "a number 8–96 (pixels)", s.view.font_px));
  s.view.notation = vw.name("notation", kNotations, s.view.notation);
  return s;
}

LessonStop read_stop(const Obj& o) {
  LessonStop st;
  st.title = o.string("title", "");
  o.require("cursor", "an object {\"alg\": …, \"line\": …}");
  st.cursor = read_cursor(o.object("cursor"));
  st.panels = o.strings("panels", {});
  st.note = o.string("note", "");
  st.selected_value = o.string("selected_value", "");
  st.focus = o.string("focus", "");
  if (o.find("model")) st.model = read_model(o.object("model"));
  if (o.find("prompt")) st.prompt = o.string("prompt", "");
  if (o.find("context")) st.context = o.string("context", "");
  if (o.find("image")) st.image = read_image(o.object("image"));
  if (o.find("run")) st.run = read_run(o.object("run"));
  return st;
}

}  // namespace

SessionFile session_from_json(const std::string& text) {
  json j;
  try {
    j = json::parse(text);
  } catch (const json::parse_error& e) {
    const bool truncated = e.byte >= text.size();
    throw Error("session file: not valid JSON" + std::string(truncated ? " (it ends too early: a truncated file?)" : "") +
                " at byte " + std::to_string(e.byte) + ": " + e.what());
  } catch (const json::exception& e) {  // e.g. a number too large for a double
    throw Error(std::string("session file: not valid JSON: ") + e.what());
  }
  const Obj o(j, "");
  const json* v = o.find("version");
  if (!v) throw Error("session file: version is missing: it must be 1 (is this a Stepformer session?)");
  if (v->is_number_unsigned() && v->get<uint64_t>() > 1)
    throw Error("session file: it was made by a newer Stepformer (format version " + std::to_string(v->get<uint64_t>()) +
                "; this one reads version 1): update Stepformer to open it");
  if (!v->is_number_unsigned() || v->get<uint64_t>() != 1) bad("version", "1");
  SessionFile f;
  f.title = o.string("title", "");
  f.description = o.string("description", "");
  f.state = read_state(o);
  for (const auto& [s, at] : o.array("stops")) f.stops.push_back(read_stop(Obj(*s, at)));
  return f;
}

void save_session(const std::string& path, const SessionFile& s) { write_file_atomic(path, session_to_json(s)); }

SessionFile load_session(const std::string& path) {
  const std::string text = read_file(path, size_t(16) << 20);
  try {
    return session_from_json(text);
  } catch (const Error& e) {
    throw Error(path + ": " + e.what());
  }
}

// ---------------------------------------------------------------------------------------------
// Paths and checksums

std::string resolve_model_path(const std::string& session_path, const std::string& model_path,
                               const std::string& assets_dir) {
  if (model_path.empty()) return "";
  const std::string assets = "@assets/";
  if (model_path.rfind(assets, 0) == 0) return (fs::path(assets_dir) / model_path.substr(assets.size())).string();
  const fs::path p(model_path);
  if (p.is_absolute()) return model_path;
  return (fs::path(session_path).parent_path() / p).lexically_normal().string();
}

std::string model_path_for(const std::string& session_path, const std::string& model_file,
                           const std::string& assets_dir) {
  std::error_code ec;
  const fs::path file = fs::weakly_canonical(fs::absolute(model_file, ec), ec);
  const auto inside = [&](const fs::path& dir, std::string& rel) {
    const fs::path d = fs::weakly_canonical(fs::absolute(dir, ec), ec);
    const fs::path r = file.lexically_relative(d);
    if (r.empty() || *r.begin() == "..") return false;
    rel = r.generic_string();
    return true;
  };
  std::string rel;
  if (!assets_dir.empty() && inside(assets_dir, rel)) return "@assets/" + rel;
  if (inside(fs::absolute(session_path, ec).parent_path(), rel)) return rel;
  return file.string();
}

namespace {

// The checkpoint file open_model reads for `path`: the file, or a folder's model.safetensors or
// its only .safetensors file.
std::string checkpoint_file_of(const std::string& path) {
  std::error_code ec;
  if (!fs::is_directory(path, ec)) return path;
  if (fs::exists(fs::path(path) / "model.safetensors", ec)) return (fs::path(path) / "model.safetensors").string();
  std::vector<fs::path> found;
  for (const auto& entry : fs::directory_iterator(path, ec))
    if (entry.path().extension() == ".safetensors") found.push_back(entry.path());
  if (found.size() != 1) throw Error("cannot checksum the model folder " + path + ": it holds " +
                                     std::to_string(found.size()) + " .safetensors files, not one");
  return found[0].string();
}

}  // namespace

std::string model_checksum(const std::string& path) {
  const std::string file = checkpoint_file_of(path);
  std::ifstream f(file, std::ios::binary);
  if (!f) throw Error("cannot read the model " + file + " to checksum it");
  uint64_t h = 0xcbf29ce484222325ull;  // FNV-1a 64: offset basis, then xor and multiply by the prime per byte
  std::vector<char> buf(size_t(1) << 20);
  while (f) {
    f.read(buf.data(), static_cast<std::streamsize>(buf.size()));
    const std::streamsize n = f.gcount();
    for (std::streamsize i = 0; i < n; ++i) {
      h ^= static_cast<unsigned char>(buf[static_cast<size_t>(i)]);
      h *= 0x100000001b3ull;
    }
  }
  if (f.bad()) throw Error("cannot read the model " + file + " to checksum it");
  char hex[17];
  std::snprintf(hex, sizeof hex, "%016llx", static_cast<unsigned long long>(h));
  return std::string("fnv1a64:") + hex;
}

}  // namespace sf
