// Training the encoder-decoder: Algorithm 11 as printed (one update against θ − η·∇loss computed
// here; its trace, with Algorithm 8 nested under line 4), the Trainer in both modes (the reverse
// task's validation loss drops in practical mode), the seq2seq tasks (deterministic, disjoint
// split, conversions checked by independent parsers) and files of z<TAB>x pairs.
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <functional>
#include <map>
#include <set>
#include <sstream>
#include <unistd.h>

#include "core/algorithms/algorithms.hpp"
#include "core/model/error.hpp"
#include "core/training/pair_tasks.hpp"
#include "float_bounds.hpp"
#include "reference_json.hpp"
#include "test_ed_support.hpp"

namespace test_ed_training {

using namespace sf;
using namespace sf::test;

namespace {

ModelConfig small_config() { return ed_test_config(1, 1, 2, 8, 4, 4, 16, 8, {"a", "b", "c"}); }  // bos 5, eos 6

// How far a loss Σ_t −log p_t can be from exact when each p_t is within p_error (absolute) of
// exact: δlog p = δp/p. small_config's models are the size reference_json.hpp's bounds are derived
// for, so p_error is kRefDouble in double and kRefFloat in float.
double log_loss_error(const std::vector<double>& p, double p_error) {
  double e = 0;
  for (double pt : p) e += p_error / pt;
  return e;
}

}  // namespace

// ---- Algorithm 11 ------------------------------------------------------------------------------------

TEST(EdTraining, OneUpdateIsThetaMinusEtaTimesTheGradient) {
  const ModelConfig c = small_config();
  Model m = Model::initialised(c, 3);
  const std::vector<Example> data = EdArchitecture().examples({"ab\tba", "cab\tabc"}, c);
  const std::vector<float> theta0 = m.theta;
  EdTraining alg(2, 1);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(m.table);
  Rng rng(1);
  const float eta = 0.5f;
  const PaperTraining::Update u = alg.step(data, m, eta, TrainOptions{}, *g, rng);
  ASSERT_TRUE(u.finite);
  EXPECT_EQ(u.l, 4);  // x_1 = [bos, b, a, eos]
  EXPECT_EQ(u.terms, 3);
  EXPECT_EQ(alg.n(), 2);
  // By hand, in double: θ − η ∇loss(θ) with loss(θ) = −Σ_{t=1}^{3} log P[x_1[t+1], t].
  const std::vector<double> theta_d(theta0.begin(), theta0.end());
  EdGradient<double> gd(m.table);
  const double loss = gd.loss_and_gradient(c, bind_ed<const double>(m.table, theta_d.data()), pair_batch({data[0]}), 1.0);
  const MatD P = edtransformer<double>(data[0].z, data[0].x, c, bind_ed<const double>(m.table, theta_d.data()));
  const std::vector<double> p{P(2 - 1, 0), P(1 - 1, 1), P(6 - 1, 2)};
  // Two double forwards of the same θ (the gradient's and Algorithm 8's), each P within kRefDouble.
  EXPECT_NEAR(loss, -std::log(p[0]) - std::log(p[1]) - std::log(p[2]), 2 * log_loss_error(p, kRefDouble));
  // The float forward's P within kRefFloat of exact (the double one's error is 10⁵ times smaller).
  EXPECT_NEAR(u.loss, loss, log_loss_error(p, kRefFloat));
  // The update in float: θ − η·g rounds η·g and the difference (u·(|θ'| + η|g|), an ulp of θ), and
  // the float gradient is within kRefFloatGradient·‖g‖ of the double one (reference_json.hpp): each
  // entry moves by η times that at most. A wrong gradient (O(0.1) relative) is 10³ times that.
  const double grad_norm = Eigen::Map<const Vec<double>>(gd.grad.data(), static_cast<Eigen::Index>(gd.grad.size())).norm();
  double moved = 0, enc_moved = 0;
  for (const ParamEntry& e : m.table.entries())
    for (size_t k = e.offset; k < e.offset + e.size(); ++k) {
      const double want = theta_d[k] - eta * gd.grad[k];
      const double rounding = kFloatU * (std::abs(want) + std::abs(eta * gd.grad[k]));
      EXPECT_NEAR(m.theta[k], want, rounding + eta * kRefFloatGradient * grad_norm) << e.name;
      moved = std::max(moved, std::abs(double(m.theta[k]) - theta_d[k]));
      if (e.name.rfind("enc.", 0) == 0) enc_moved = std::max(enc_moved, std::abs(double(m.theta[k]) - theta_d[k]));
    }
  EXPECT_GT(moved, 1e-3);  // the update did move θ: η·|g| of its largest entry, 10⁴ ulps of a θ ≈ 1
  EXPECT_GT(enc_moved, 1e-6);  // the encoder learns (through the cross-attention): 10 ulps of a θ ≈ 1
  alg.step(data, m, eta, TrainOptions{}, *g, rng);
  EXPECT_TRUE(alg.done());
  EXPECT_EQ(alg.algorithm(), 11);
}

TEST(EdTraining, TraceOfOneUpdateNestsAlgorithm8UnderLine4) {
  const ModelConfig c = small_config();
  Model m = Model::initialised(c, 3);
  const std::vector<Example> data = EdArchitecture().examples({"ab\tba"}, c);
  const MatF P = edtransformer<float>(data[0].z, data[0].x, c, ed_weights(m));  // θ before the update
  const std::unique_ptr<PaperTraining> alg = architecture(c).paper_training(1, 1);
  const std::unique_ptr<ModelGradient> g = architecture(c).gradient(m.table);
  Trace trace;
  Tracer tr(trace);
  Rng rng(1);
  alg->step(data, m, 0.1f, TrainOptions{}, *g, rng, &tr);
  // Algorithm 11's own events: Enter, lines 1–6; everything between lines 3 and 4 is Algorithm 8.
  std::vector<std::pair<EventKind, int>> top;
  std::vector<size_t> at;
  for (size_t k = 0; k < trace.size(); ++k)
    if (trace.events[k].depth == 0) {
      EXPECT_EQ(trace.events[k].alg, 11);
      top.push_back({trace.events[k].kind, trace.events[k].line});
      at.push_back(k);
    }
  const EventKind E = EventKind::Enter, L = EventKind::Line;
  ASSERT_EQ(top, (std::vector<std::pair<EventKind, int>>{{E, 0}, {L, 1}, {L, 2}, {L, 3}, {L, 4}, {L, 5}, {L, 6}}));
  ASSERT_GT(at[4], at[3] + 1);
  EXPECT_EQ(trace.events[at[3] + 1].kind, E);
  EXPECT_EQ(trace.events[at[3] + 1].alg, 8);
  EXPECT_EQ(trace.events[at[3] + 1].depth, 1);
  for (size_t k = at[3] + 1; k < at[4]; ++k) EXPECT_GE(trace.events[k].depth, 1);
  EXPECT_EQ(trace.events[at[4] - 1].alg, 8);
  EXPECT_EQ(trace.events[at[4] - 1].line, 21);
  EXPECT_EQ(trace.events[at[1]].idx.i, 1);
  EXPECT_EQ(trace.events[at[2]].idx.n, 1);
  // Line 3 binds z_n, x_n and ℓ; line 4 P; line 5 the terms −log P[x_n[t+1], t] and their sum.
  EXPECT_EQ(find_value(trace.events[at[3]], "z_n")->tokens, data[0].z);
  EXPECT_EQ(find_value(trace.events[at[3]], "x_n")->tokens, data[0].x);
  EXPECT_EQ(find_value(trace.events[at[3]], "ℓ")->m(0, 0), 4.0f);
  EXPECT_EQ(find_value(trace.events[at[4]], "P")->m, P);
  const Value* terms = find_value(trace.events[at[5]], "−log P[x_n[t+1], t]");
  ASSERT_NE(terms, nullptr);
  ASSERT_EQ(terms->m.rows(), 1);
  ASSERT_EQ(terms->m.cols(), 3);
  // The traced terms come from the gradient's forward, P from Algorithm 8's: both float, each P within
  // kRefFloat of exact, so each −log P within 2·kRefFloat/P, plus the log's rounding (k·u·|log P|).
  for (int t = 0; t < 3; ++t) {
    const double p = P(data[0].x[t + 1] - 1, t);
    EXPECT_NEAR(terms->m(0, t), -std::log(p), 2 * kRefFloat / p + kFunctionRoundings * kFloatU * std::abs(std::log(p)))
        << t;
  }
  // The loss sums the same 3 positive floats, maybe in another order: 2·γ_3·Σ.
  EXPECT_NEAR(find_value(trace.events[at[5]], "loss")->m(0, 0), terms->m.sum(), 2 * float_gamma(3) * terms->m.sum());
  // Line 6 binds η and the update of every tensor, the encoder's included.
  EXPECT_EQ(find_value(trace.events[at[6]], "η")->m(0, 0), 0.1f);
  EXPECT_NE(find_value(trace.events[at[6]], "∇enc.layer1.attn.W_v"), nullptr);
  EXPECT_NE(find_value(trace.events[at[6]], "dec.layer1.cross_attn.W_k (after)"), nullptr);
}

// ---- The Trainer ---------------------------------------------------------------------------------------

TEST(EdTraining, TrainerLearnsTheReverseTaskInPracticalMode) {
  // z = 3–8 random letters, x = the same reversed. A uniform guess scores ln N_V = ln 29 = 3.37 per
  // token; knowing the letters but not where they go, about 2.76 (a plateau that smaller runs stay
  // on). 300 Adam steps of a 1 + 1-layer, 4-head model leave it: the cross-attention learns the
  // alignment, and the validation loss ends near 1.7 (about 2 s).
  TaskOptions t;
  t.seed = 1;
  t.train_size = 4000;
  t.val_size = 200;
  t.max_chars = 8;
  const Dataset d = make_pair_task("reverse", t);
  const ModelConfig c = ed_test_config(1, 1, 4, 32, 8, 8, 64, 10, d.vocab);
  TrainOptions opt;
  opt.lr = 1e-2;
  opt.min_lr = 1e-3;
  opt.steps = 300;
  opt.warmup = 30;
  opt.batch = 64;
  Trainer trainer(Model::initialised(c, 1), d, opt);
  EXPECT_EQ(trainer.arch().name(), "ed");
  const double initial = trainer.evaluate();
  EXPECT_NEAR(initial, std::log(c.N_V()), 0.3);
  while (!trainer.finished()) ASSERT_TRUE(trainer.step().finite);
  const double val = trainer.evaluate();
  RecordProperty("initial_validation_loss", std::to_string(initial));
  RecordProperty("validation_loss", std::to_string(val));
  EXPECT_LT(val, 2.4);  // below the plateau, well below the uniform guess
}

TEST(EdTraining, TrainerPaperModeRunsAlgorithm11) {
  Dataset d;
  d.name = "two pairs";
  d.train = {"cab\tabc", "ba\tab"};
  d.vocab = {"a", "b", "c"};
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  opt.lr = 0.05;
  Trainer trainer(Model::initialised(small_config(), 1), d, opt);
  Trace trace;
  Tracer tr(trace);
  const StepInfo s1 = trainer.step(&tr);
  EXPECT_TRUE(s1.finite);
  EXPECT_EQ(s1.tokens, 5);  // x_1 = [bos, a, b, c, eos]
  // The same loss over the 4 targets: one float division on either side, u·|loss/4| each.
  EXPECT_NEAR(s1.token_loss, s1.loss / 4, 2 * kFloatU * std::abs(s1.loss / 4));
  ASSERT_FALSE(trace.events.empty());
  EXPECT_EQ(trace.events[0].alg, 11);
  trainer.step();
  EXPECT_TRUE(trainer.finished());
}

// ---- The seq2seq tasks ---------------------------------------------------------------------------------

namespace {

// "three hundred twelve" → 312, written independently of the task's speller; −1 on a word it does
// not know.
int parse_number(const std::string& words) {
  static const std::map<std::string, int> value{
      {"zero", 0},      {"one", 1},      {"two", 2},        {"three", 3},     {"four", 4},      {"five", 5},
      {"six", 6},       {"seven", 7},    {"eight", 8},      {"nine", 9},      {"ten", 10},      {"eleven", 11},
      {"twelve", 12},   {"thirteen", 13}, {"fourteen", 14}, {"fifteen", 15},  {"sixteen", 16},  {"seventeen", 17},
      {"eighteen", 18}, {"nineteen", 19}, {"twenty", 20},   {"thirty", 30},   {"forty", 40},    {"fifty", 50},
      {"sixty", 60},    {"seventy", 70},  {"eighty", 80},   {"ninety", 90}};
  std::istringstream in(words);
  int n = 0;
  for (std::string w; in >> w;) {
    if (w == "hundred") {
      n *= 100;
    } else if (value.count(w)) {
      n += value.at(w);
    } else {
      return -1;
    }
  }
  return n;
}

std::pair<std::string, std::string> sides(const std::string& line) {
  std::string z, x;
  EXPECT_TRUE(split_pair(line, z, x)) << line;
  return {z, x};
}

// The checks every pair task passes: deterministic by seed, no validation pair in train, both
// sides within max_chars, every character in the vocabulary, no tab in it.
Dataset checked_task(const std::string& name, TaskOptions t) {
  const Dataset d = make_pair_task(name, t);
  EXPECT_EQ(make_pair_task(name, t).train, d.train) << name;
  EXPECT_EQ(make_pair_task(name, t).val, d.val) << name;
  TaskOptions other = t;
  other.seed = t.seed + 1;
  EXPECT_NE(make_pair_task(name, other).train, d.train) << name;
  EXPECT_EQ(static_cast<int>(d.train.size()), t.train_size) << name;
  EXPECT_FALSE(d.val.empty()) << name;
  const std::set<std::string> train(d.train.begin(), d.train.end()), val(d.val.begin(), d.val.end());
  EXPECT_EQ(val.size(), d.val.size()) << name;  // distinct
  for (const std::string& v : d.val) EXPECT_FALSE(train.count(v)) << name << ": " << v;
  const std::set<std::string> vocab(d.vocab.begin(), d.vocab.end());
  EXPECT_FALSE(vocab.count("\t")) << name;
  for (const auto* lines : {&d.train, &d.val})
    for (const std::string& line : *lines) {
      const auto [z, x] = sides(line);
      EXPECT_LE(static_cast<int>(z.size()), t.max_chars) << name << ": " << line;
      EXPECT_LE(static_cast<int>(x.size()), t.max_chars) << name << ": " << line;
      for (char ch : z + x) EXPECT_TRUE(vocab.count(std::string(1, ch))) << name << ": " << line;
    }
  return d;
}

TaskOptions task_options(int max_chars, int train = 3000, int val = 100) {
  TaskOptions t;
  t.seed = 4;
  t.train_size = train;
  t.val_size = val;
  t.max_chars = max_chars;
  return t;
}

}  // namespace

TEST(EdPairTasks, NamesAndUnknownNames) {
  EXPECT_EQ(pair_task_names(), (std::vector<std::string>{"reverse", "sort", "numbers", "dates"}));
  const std::string e = error_of([] { make_pair_task("translate", TaskOptions{}); });
  EXPECT_NE(e.find("unknown pair task \"translate\""), std::string::npos) << e;
  EXPECT_NE(e.find("reverse, sort, numbers, dates"), std::string::npos) << e;
}

TEST(EdPairTasks, ReverseAndSort) {
  for (const char* name : {"reverse", "sort"}) {
    const Dataset d = checked_task(name, task_options(62));
    for (const std::string& line : d.train) {
      const auto [z, x] = sides(line);
      ASSERT_GE(z.size(), 3u);
      ASSERT_LE(z.size(), 8u);
      std::string want = z;
      if (std::string(name) == "sort")
        std::sort(want.begin(), want.end());
      else
        std::reverse(want.begin(), want.end());
      EXPECT_EQ(x, want) << line;
    }
  }
  // A small ℓ_max shortens the letters; too small refuses.
  for (const std::string& line : checked_task("reverse", task_options(5)).train) EXPECT_LE(line.size(), 11u);
  EXPECT_THROW(make_pair_task("sort", task_options(2)), Error);
}

TEST(EdPairTasks, NumbersAreSpelledOutAndConverted) {
  const Dataset d = checked_task("numbers", task_options(62, 20000, 100));
  std::set<std::string> seen;
  for (const auto* lines : {&d.train, &d.val})
    for (const std::string& line : *lines) {
      const auto [z, x] = sides(line);
      const int n = parse_number(z);
      ASSERT_GE(n, 0) << line;
      ASSERT_LE(n, 999) << line;
      EXPECT_EQ(x, std::to_string(n)) << line;
      seen.insert(line);
    }
  EXPECT_TRUE(seen.count("three hundred twelve\t312"));
  EXPECT_TRUE(seen.count("zero\t0"));
  EXPECT_TRUE(seen.count("forty two\t42"));
  EXPECT_TRUE(seen.count("seven hundred\t700"));
  EXPECT_TRUE(seen.count("nineteen\t19"));
  EXPECT_EQ(d.val.size(), 100u);
  // ℓ_max = 12: only numbers whose words fit in 10 characters ("ninety one" but not "one hundred").
  const Dataset small = checked_task("numbers", task_options(10, 500, 10));
  for (const std::string& line : small.train) EXPECT_LT(parse_number(sides(line).first), 100) << line;
  EXPECT_THROW(make_pair_task("numbers", task_options(2)), Error);
}

TEST(EdPairTasks, DatesAreValidAndConverted) {
  static const char* kMonths[] = {"january", "february", "march",     "april",   "may",      "june",
                                  "july",    "august",   "september", "october", "november", "december"};
  const Dataset d = checked_task("dates", task_options(62, 20000, 100));
  int leap_days = 0;
  for (const auto* lines : {&d.train, &d.val})
    for (const std::string& line : *lines) {
      const auto [z, x] = sides(line);
      std::istringstream in(z);
      int day = 0, year = 0;
      std::string month;
      ASSERT_TRUE(in >> day >> month >> year) << line;
      const int m = static_cast<int>(std::find(std::begin(kMonths), std::end(kMonths), month) - std::begin(kMonths)) + 1;
      ASSERT_LE(m, 12) << line;
      const std::chrono::year_month_day date{std::chrono::year{year}, std::chrono::month{static_cast<unsigned>(m)},
                                             std::chrono::day{static_cast<unsigned>(day)}};
      EXPECT_TRUE(date.ok()) << line;  // the day exists in that month of that year
      EXPECT_GE(year, 1950);
      EXPECT_LE(year, 2049);
      char iso[64];
      std::snprintf(iso, sizeof iso, "%04d-%02d-%02d", year, m, day);
      EXPECT_EQ(x, iso) << line;
      leap_days += m == 2 && day == 29;
    }
  EXPECT_GT(leap_days, 0);
  checked_task("dates", task_options(11, 500, 10));  // "30 may 2024" fits, "1 june 2024" too
  EXPECT_THROW(make_pair_task("dates", task_options(9)), Error);
}

// ---- Files of pairs -----------------------------------------------------------------------------------

namespace {

std::string temp_file(const std::string& name, const std::string& text) {
  const std::string path =
      (std::filesystem::temp_directory_path() / ("stepformer_ed_" + std::to_string(::getpid()) + "_" + name)).string();
  std::ofstream(path, std::ios::binary) << text;
  return path;
}

}  // namespace

TEST(EdPairsFile, LinesInFileOrderAndTheirErrors) {
  const std::string ok = temp_file("ok.tsv", "cab\tabc\n\nba\tab\r\n");
  const Dataset d = pairs_dataset(ok, 10);
  EXPECT_EQ(d.train, (std::vector<std::string>{"cab\tabc", "ba\tab"}));
  EXPECT_TRUE(d.val.empty());
  EXPECT_EQ(d.vocab, (std::vector<std::string>{"a", "b", "c"}));
  const std::string notab = temp_file("notab.tsv", "cab\tabc\nno tab here\n");
  EXPECT_EQ(error_of([&] { pairs_dataset(notab, 10); }), notab + ": line 2 has no tab: each line must be z<TAB>x");
  const std::string long_z = temp_file("long.tsv", "\n\nabcd\tab\n");
  std::string e = error_of([&] { pairs_dataset(long_z, 3); });
  EXPECT_EQ(e.rfind(long_z + ": line 3: the context z has 4 characters", 0), 0u) << e;
  const std::string long_x = temp_file("longx.tsv", "ab\tabcd\n");
  e = error_of([&] { pairs_dataset(long_x, 3); });
  EXPECT_EQ(e.rfind(long_x + ": line 1: x has 4 characters", 0), 0u) << e;
  const std::string empty = temp_file("empty.tsv", "\n\n");
  EXPECT_NE(error_of([&] { pairs_dataset(empty, 3); }).find("no pairs"), std::string::npos);
  // The Trainer takes the file's pairs, in order (Algorithm 11's n).
  TrainOptions opt;
  opt.mode = TrainMode::Paper;
  Trainer trainer(Model::initialised(small_config(), 1), d, opt);
  EXPECT_EQ(trainer.step().tokens, 5);  // x_1 = [bos, a, b, c, eos]
  EXPECT_EQ(trainer.step().tokens, 4);  // x_2 = [bos, a, b, eos]
  for (const std::string& p : {ok, notab, long_z, long_x, empty}) std::filesystem::remove(p);
}

}  // namespace test_ed_training
