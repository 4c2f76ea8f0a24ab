// Issue 21's bugs, each seen the way a user sees it: the real app under Xvfb, driven with
// --actions, checked through its --dump-state report and its screenshot.
#include <gtest/gtest.h>

#include <cmath>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_bugs {

using gui::AppRun;
using gui::json;
using gui::run_app;

namespace {

const std::string kSource = STEPFORMER_SOURCE_DIR;

std::string str(const json& j) { return j.is_string() ? j.get<std::string>() : j.dump(); }

}  // namespace

// Bug a: ImGui reads "##" in a button label as the start of its ID, so a WordPiece continuation
// such as "##ing" was an empty button in the Fill-in tab.
TEST(GuiBugs, FillInButtonsShowWordPiecesThatStartWithHashes) {
  const AppRun r = run_app("--model " + kSource + "/tests/data/ecosystem/hf-bert", "prompt:the cats,open:fillin");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& labels = r.state["token_labels"];
  const json& buttons = r.state["fillin_buttons"];
  ASSERT_EQ(buttons.size(), labels.size()) << buttons;
  bool continuation = false;
  for (size_t k = 0; k < labels.size(); ++k) {
    EXPECT_EQ(buttons[k], labels[k]) << "button " << k + 1;
    continuation |= labels[k].get<std::string>().rfind("##", 0) == 0;
  }
  EXPECT_TRUE(continuation) << "the prompt should cut into a piece starting with ##: " << labels;
}

// Bug b: with the KV cache no DTransformer call is traced per step, and the heading read "on 0
// tokens, p = P[:, 0]". The cached run feeds the same tokens as the uncached one.
TEST(GuiBugs, KvCacheSamplingHeadingCountsTheTokensFed) {
  const std::string gen = "open:sampling,stop-at-eos:off,gen:3,generate-all";
  const AppRun plain = run_app("", gen);
  const AppRun cached = run_app("", "kv-cache:on," + gen);
  ASSERT_EQ(plain.exit_code, 0) << plain.output;
  ASSERT_EQ(cached.exit_code, 0) << cached.output;
  // The last of 3 steps reads <bos> + "hello=" (7 tokens) and the 2 tokens drawn before it.
  const std::string expect = "Step i = 3 of 3: P ← DTransformer(x) on 9 tokens, p = P[:, 9]";
  EXPECT_EQ(str(plain.state["sampling_heading"]), expect);
  EXPECT_EQ(str(cached.state["sampling_heading"]).rfind(expect + " (KV cache: only this column computed", 0), 0u)
      << cached.state["sampling_heading"];
}

// Bug c: under Xvfb (Mesa's llvmpipe) the GL_TIMESTAMP pair of a dispatch is stamped before the
// work runs, about 20 ns apart, and the GPU tab showed "0.000 ms" for every dispatch. Launching a
// dispatch alone takes microseconds on any GPU: a GPU time is at least 1 µs, or it reads
// "not measured" (issue 23; it read "n/a" before).
TEST(GuiBugs, GpuTimesAreMeasuredOrSayThereAreNone) {
  const AppRun r = run_app("", "attention:gpu,goto:4:5:1:2,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"];
  const json& times = r.state["gpu_times"];
  ASSERT_FALSE(times.empty());
  for (const json& t : times) {
    EXPECT_GT(t["cpu_ms"].get<double>(), 0.0) << t;
    if (t["gpu_ms"].is_null()) EXPECT_EQ(t["gpu"], "not measured") << t;
    else EXPECT_GE(t["gpu_ms"].get<double>(), 1e-3) << t;  // not "0.000 ms": the bug printed a zero
    EXPECT_EQ(str(t["gpu"]).find("0.000"), std::string::npos) << t;
  }
}

// Bug d: Algorithm 14 as printed draws all ℓ_gen tokens, "<eos><eos><eos>" once the model has
// ended its text. The Sampling tab stops at eos_token by default, as the CLI's --stop-at-eos.
TEST(GuiBugs, SamplingStopsAtEosTokenByDefault) {
  const std::string gen = "open:sampling,tau:0,gen:24,generate-all";
  const AppRun on = run_app("", gen);
  ASSERT_EQ(on.exit_code, 0) << on.output;
  EXPECT_EQ(on.state["stop_at_eos"], true);
  const json& y = on.state["generated_labels"];
  ASSERT_FALSE(y.empty());
  EXPECT_EQ(y.back(), "<eos>") << y;
  for (size_t k = 0; k + 1 < y.size(); ++k) EXPECT_NE(y[k], "<eos>") << "token " << k + 1 << " of " << y;
  EXPECT_NE(str(on.state["generation_stopped"]).find("stopped at eos_token"), std::string::npos);
  // Off: the paper's loop, which goes on past eos_token (the same argmax tokens up to it).
  const AppRun off = run_app("", "stop-at-eos:off," + gen);
  ASSERT_EQ(off.exit_code, 0) << off.output;
  EXPECT_EQ(off.state["stop_at_eos"], false);
  EXPECT_EQ(off.state["generated_labels"].size(), 24u);
  EXPECT_EQ(off.state["generated_labels"][y.size() - 1], "<eos>");
  const AppRun bad = run_app("", "stop-at-eos:maybe");
  EXPECT_NE(bad.output.find("stop-at-eos needs on or off"), std::string::npos) << bad.output;
}

// Bug e: the accuracy chart's x tick labels overlapped in its narrow column, and it had no 95% line.
// The narrow column is the projector's width, 1280; 800 rows so that the chart, below the Training tab's fold at
// 720 (three rows of Inspector tabs since the Gradient flow tab), is drawn on screen where its pixels can be read.
TEST(GuiBugs, AccuracyChartTicksDoNotOverlapAndItDrawsThe95PercentLine) {
  const AppRun r = run_app("--size 1280x800", "open:training,train-step:300,wait,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& chart = r.state["accuracy_chart"];
  const json& ticks = chart["x_ticks"];
  ASSERT_GE(ticks.size(), 2u) << chart;
  for (size_t k = 1; k < ticks.size(); ++k) {
    const float prev_right = ticks[k - 1]["rect"][0].get<float>() + ticks[k - 1]["rect"][2].get<float>();
    EXPECT_LT(prev_right, ticks[k]["rect"][0].get<float>()) << ticks;
  }
  ASSERT_FALSE(chart["target_y"].is_null()) << chart;
  // The line is dashed: along its row, some pixels have the line's colour (line_chart.cpp:
  // (240, 200, 80) on the dark theme, (190, 120, 0) on the light). ±40 per channel: the 1.5-px
  // line is blended with the background where it straddles two pixel rows.
  const bool dark = r.state["dark"];
  const int want[3] = {dark ? 240 : 190, dark ? 200 : 120, dark ? 80 : 0};
  const int y = static_cast<int>(std::lround(chart["target_y"].get<float>()));
  const float x0 = chart["rect"][0], w = chart["rect"][2];
  int hits = 0;
  for (int x = static_cast<int>(x0 + w * 0.3f); x < static_cast<int>(x0 + w * 0.9f); ++x) {
    const auto p = r.px(x, y);
    hits += std::abs(p[0] - want[0]) < 40 && std::abs(p[1] - want[1]) < 40 && std::abs(p[2] - want[2]) < 40;
  }
  EXPECT_GT(hits, 10) << "no 95% line at y = " << y;
}

// Bug e: "Paper: Algorithm 13 as printed — one example at a time, summed loss, plai": the radio
// buttons' labels ran past the window's edge. Nothing in the tab reaches past its window now.
TEST(GuiBugs, TrainingTabTextWrapsInsideItsWindow) {
  const AppRun r = run_app("--size 1280x720", "open:training,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& over = r.state["content_overflow"];
  ASSERT_TRUE(over.contains("Inspector")) << over;
  EXPECT_LE(over["Inspector"].get<float>(), 0.5f) << "the Training tab's content reaches past the Inspector";
}

// Bug f: during a traced training update the toolbar showed the prompt "hello=" re-encoded; it
// shows the sequence the update steps through.
TEST(GuiBugs, TrainingTraceShowsTheSteppedSequence) {
  const AppRun r = run_app("", "open:training,train-step:1,train-trace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["run_kind"], 2);  // RunKind::Training
  const json& x_n = r.state["stepped_sequence"];
  ASSERT_GE(x_n.size(), 2u);
  EXPECT_EQ(x_n[0], "<bos>");
  EXPECT_NE(x_n, r.state["token_labels"]) << "the prompt's tokens, not the update's sequence";
}

// Bug g: README.md opened by mistake said "header length 8027226966880100387…", cut off by the
// status bar. It says what is wrong in plain words, and the status bar shows all of it.
TEST(GuiBugs, ANonModelFileIsNamedInPlainWordsShownInFull) {
  const AppRun r = run_app("", "load:" + kSource + "/README.md");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string notice = r.state["notice"];
  EXPECT_NE(notice.find("README.md is not a model: Stepformer opens .safetensors files or model folders"),
            std::string::npos)
      << notice;
  EXPECT_EQ(notice.find("header length"), std::string::npos) << notice;
  const json& rect = r.state["notice_rect"];
  ASSERT_GT(rect[2].get<float>(), 0.0f) << "the notice is not drawn";
  // The message is longer than the 1280-px window: it wraps onto more lines, all on screen.
  const float line = r.state["font_px"].get<float>();
  EXPECT_GE(rect[3].get<float>(), 2 * line) << rect;
  EXPECT_TRUE(gui::inside(rect, json::array({0, 0, r.w, r.h}))) << rect;
}

// Bug h: a capital letter left the old trace up with no hint. The error names the character and
// the vocabulary, and the trace is marked stale until the prompt can be encoded again.
TEST(GuiBugs, AnUnknownCharacterIsNamedAndTheTraceMarkedStale) {
  const AppRun bad = run_app("", "prompt:Hello=");
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  const std::string error = bad.state["prompt_error"];
  EXPECT_NE(error.find("\"H\" at 1 is not in the vocabulary (lowercase a–z, digits 0–9, space, the symbols !"),
            std::string::npos)
      << error;
  EXPECT_EQ(bad.state["trace_stale"], true);
  EXPECT_EQ(bad.state["token_labels"].size(), 7u) << "the trace is still of hello=";
  const AppRun fixed = run_app("", "prompt:Hello=,prompt:hello=");
  EXPECT_EQ(fixed.state["trace_stale"], false);
  EXPECT_EQ(fixed.state["prompt_error"], "");
}

// Bug i: "the pair occurred 1 times".
TEST(GuiBugs, AMergeSeenOnceOccurredOneTime) {
  const AppRun r = run_app("", "open:tokenizer,tokenizer:ab,bpe-step:1");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const std::string h = str(r.state["bpe_merge_heading"]);
  EXPECT_NE(h.find("(the pair occurred 1 time)"), std::string::npos) << h;
}

}  // namespace test_gui_bugs
