// The real app under Xvfb (Mesa's software renderer): scripted actions and key presses go
// in, a screenshot and the --dump-state report come out, and both are checked.
#include <gtest/gtest.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdio>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "app/session.hpp"

#include "tests/app/gui_harness.hpp"
#include "core/io/checkpoint.hpp"
#include "tests/app/gui_models.hpp"

namespace test_gui {

namespace fs = std::filesystem;
using json = nlohmann::json;
using gui::AppRun;
using gui::inside;
using gui::luminance_std;
using gui::quote;
using gui::run_app;

TEST(Gui, StartsOnAlgorithm10Line1WithTheLineHighlighted) {
  const AppRun r = run_app("");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.w, 1280);
  ASSERT_EQ(r.h, 800);
  EXPECT_GT(luminance_std(r), 20.0) << "the screenshot looks blank";
  EXPECT_EQ(r.state["event"]["alg"], 10);
  EXPECT_EQ(r.state["event"]["line"], 1);
  const json& win = r.state["windows"];
  for (const char* name : {"Pseudocode", "Call stack", "Toolbar"}) EXPECT_TRUE(win.contains(name)) << name;
  const json& hl = r.state["highlight"];
  ASSERT_GT(hl[2].get<float>(), 50.0f);
  EXPECT_TRUE(inside(hl, win["Pseudocode"])) << hl << " not in " << win["Pseudocode"];
  // The highlight's right end (no text there) has the highlight colour: amber on the dark theme.
  const auto c = r.px(static_cast<int>(hl[0].get<float>() + hl[2].get<float>() - 8),
                      static_cast<int>(hl[1].get<float>() + hl[3].get<float>() / 2));
  EXPECT_GT(c[0], c[2] + 30) << "pixel " << c[0] << "," << c[1] << "," << c[2];
  EXPECT_GT(c[0], 60);
}

TEST(Gui, KeyboardStepsMoveTheCursorLikeTheSession) {
  const AppRun r = run_app("", "key:F10,key:F10,key:F11,key:F11,key:S-F11");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  sf::Session s;
  s.step_over();
  s.step_over();
  s.step_into();
  s.step_into();
  s.step_out();
  EXPECT_EQ(r.state["cursor"].get<size_t>(), s.cursor());
  EXPECT_EQ(r.state["event"]["alg"], s.current().alg);
  EXPECT_EQ(r.state["event"]["line"], s.current().line);
}

TEST(Gui, ScriptedActionsReachAnAttentionHeadAndTheHighlightFollows) {
  const AppRun start = run_app("");
  const AppRun r = run_app("", "goto:4:5:2:3,step-back,step-into");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["line"], 5);
  EXPECT_EQ(r.state["event"]["l"], 2);
  EXPECT_EQ(r.state["event"]["h"], 3);
  // Line 5 of Attention is lower on the panel than line 1 of DTransformer.
  EXPECT_GT(r.state["highlight"][1].get<float>(), start.state["highlight"][1].get<float>());
}

TEST(Gui, EditingThePromptKeepsTheCursorAndMarksUnknownCharacters) {
  AppRun r = run_app("", "goto:4:5:1:2,prompt:the cat");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["h"], 2);
  EXPECT_EQ(r.state["prompt"], "the cat");
  r = run_app("", "prompt:caf\xC3\xA9!");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["unknown_chars"], 1);
  EXPECT_NE(r.state["prompt_error"].get<std::string>().find("not in the vocabulary"), std::string::npos);
}

TEST(Gui, TheInspectorViewsAndVariablesDrawWhereTheyShould) {
  for (const char* view : {"attention", "tensor", "layernorm", "sampling"}) {
    const AppRun r = run_app("", std::string("goto:4:6:2:3,open:") + view);
    ASSERT_EQ(r.exit_code, 0) << view << ": " << r.output;
    const json& win = r.state["windows"];
    ASSERT_TRUE(win.contains("Inspector")) << view;
    ASSERT_TRUE(win.contains("Variables")) << view;
    // The inspector sits right of the variables, which sit right of the pseudocode.
    EXPECT_GT(win["Inspector"][0].get<float>(), win["Variables"][0].get<float>());
    EXPECT_GT(win["Variables"][0].get<float>(), win["Pseudocode"][0].get<float>());
    EXPECT_GT(luminance_std(r), 20.0) << view;
  }
}

TEST(Gui, GeneratingATokenTracesAlgorithm14) {
  const AppRun r = run_app("", "tau:0,generate-one,open:sampling");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 14);
  EXPECT_EQ(r.state["generated"], 1);
}

TEST(Gui, FontSizeShortcutAndLightTheme) {
  const AppRun r = run_app("", "key:C-=,key:C-=,theme:light");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FLOAT_EQ(r.state["font_px"].get<float>(), 21.0f);
  EXPECT_FALSE(r.state["dark"].get<bool>());
  EXPECT_GT(luminance_std(r), 20.0);
  // Light theme: the window background near the bottom-left is light.
  const auto c = r.px(20, r.h - 60);
  EXPECT_GT(c[0] + c[1] + c[2], 3 * 170);
}

TEST(Gui, KeysAreIgnoredWhileTypingInTheTextField) {
  AppRun r = run_app("", "key:F10");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["line"], 2);
  r = run_app("", "focus:prompt,wait,key:F10");  // F10 goes to the text field, not the stepper
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["line"], 1);
}

TEST(Gui, BadCheckpointGivesANoticeNotACrash) {
  const fs::path bad = fs::temp_directory_path() / "stepformer-bad.safetensors";
  std::ofstream(bad) << "this is not a checkpoint";
  const AppRun r = run_app("--model " + bad.string());
  fs::remove(bad);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_NE(r.state["notice"].get<std::string>().find("Could not open"), std::string::npos);
  EXPECT_EQ(r.state["event"]["alg"], 10);
}

TEST(Gui, WithoutOpenGL43TheAppRunsWithANotice) {
  const AppRun r = run_app("--gl33", "step-over");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_FALSE(r.state["gl43"].get<bool>());
  EXPECT_NE(r.state["notice"].get<std::string>().find("OpenGL 4.3 is not available"), std::string::npos);
  EXPECT_EQ(r.state["event"]["line"], 2);
  EXPECT_GT(luminance_std(r), 20.0);
}

TEST(Gui, NoDisplayIsAOneLineErrorNamingTheFix) {
  const AppRun r = run_app("", "", false);
  EXPECT_EQ(r.exit_code, 1);
  EXPECT_NE(r.output.find("xvfb-run"), std::string::npos) << r.output;
  EXPECT_NE(r.output.find("DISPLAY"), std::string::npos) << r.output;
  EXPECT_EQ(std::count(r.output.begin(), r.output.end(), '\n'), 1);
}

TEST(Gui, BadOptionsAndActionsAreRefused) {
  AppRun r = run_app("--frames zero");
  EXPECT_EQ(r.exit_code, 2);
  r = run_app("", "frobnicate");
  EXPECT_EQ(r.exit_code, 3);
  EXPECT_NE(r.output.find("unknown action"), std::string::npos);
}

TEST(Gui, TrainingTabTrainsAndTheLossStaysFinite) {
  const AppRun r = run_app("", "open:training,train-task:sort,train-step:20");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["training_tab_shown"].get<bool>());
  EXPECT_EQ(r.state["train_step"], 20);
  EXPECT_EQ(r.state["train_task"], "sort");
  ASSERT_TRUE(r.state["train_loss"].is_number());
  const double first = r.state["train_first_loss"].get<double>(), last = r.state["train_loss"].get<double>();
  EXPECT_TRUE(std::isfinite(last));
  EXPECT_LT(last, first) << "20 Adam updates on sort should lower the loss";
  EXPECT_GT(luminance_std(r), 20.0);
}

TEST(Gui, TracedUpdateOfAlgorithm13StepsIntoAlgorithm10) {
  AppRun r = run_app("", "open:training,train-mode:paper,train-step:2,train-trace");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 13);
  EXPECT_EQ(r.state["train_step"], 2) << "the traced update ran on a copy";
  EXPECT_EQ(r.state["train_mode"], "paper");
  r = run_app("", "train-trace,goto:13:3,step-into");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 10);
  // A prompt edit returns to the forward run.
  r = run_app("", "train-trace,prompt:abc");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 10);
  EXPECT_EQ(r.state["run_kind"], 0);
}

TEST(Gui, UsingTheTrainedModelShowsItInTheStepper) {
  const AppRun r = run_app("", "train-step:3,train-use");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["model"], "trained: sort step 3");
  EXPECT_EQ(r.state["event"]["alg"], 10);
}

TEST(Gui, TrainingPlaysPausesAndTakesEtaFromActions) {
  std::string waits;
  for (int k = 0; k < 40; ++k) waits += ",wait";
  AppRun r = run_app("", "eta:0.004,train-play" + waits + ",train-pause");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GE(r.state["train_step"].get<int>(), 1) << "40 frames of playing made no update";
  EXPECT_FALSE(r.state["train_playing"].get<bool>());
  EXPECT_FLOAT_EQ(r.state["train_eta"].get<float>(), 0.004f);
  // Still playing when the run ends without a pause.
  r = run_app("", "train-play");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["train_playing"].get<bool>());
  // η outside the slider's range, or not a number: refused with the reason, η unchanged.
  for (const char* bad : {"eta:2", "eta:0", "eta:nan", "eta:x", "eta:"}) {
    r = run_app("", bad);
    EXPECT_EQ(r.exit_code, 3) << bad << ": " << r.output;
    EXPECT_NE(r.output.find("eta"), std::string::npos) << r.output;
    EXPECT_NE(r.state["train_eta"].get<float>(), 2.0f);
  }
}

TEST(Gui, GpuAttentionTracesTheSameLinesWithTheGpusNumbers) {
  const AppRun cpu = run_app("", "goto:4:5:1:2");
  const AppRun r = run_app("", "attention:gpu,goto:4:5:1:2,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_EQ(r.state["attention_backend"], "gpu") << r.state["notice"];
  EXPECT_GT(r.state["gpu_dispatches"].get<int>(), 0);
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["line"], 5);
  EXPECT_EQ(r.state["event"]["l"], 1);
  EXPECT_EQ(r.state["event"]["h"], 2);
  EXPECT_EQ(r.state["cursor"], cpu.state["cursor"]);  // the same events, in the same order
  EXPECT_EQ(r.state["steps"], cpu.state["steps"]);
  EXPECT_EQ(r.state["notice"].get<std::string>().find("unavailable"), std::string::npos) << r.state["notice"];
  // and back to the CPU
  const AppRun back = run_app("", "attention:gpu,attention:cpu,goto:4:5:1:2");
  ASSERT_EQ(back.exit_code, 0) << back.output;
  EXPECT_EQ(back.state["attention_backend"], "cpu");
  EXPECT_EQ(back.state["gpu_dispatches"], 0);
}

TEST(Gui, WithoutOpenGL43GpuAttentionFallsBackToTheCpuAndSaysWhy) {
  const AppRun r = run_app("--gl33", "attention:gpu,goto:4:5:1:2,open:gpu");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["attention_backend"], "cpu");
  EXPECT_EQ(r.state["gpu_dispatches"], 0);
  const std::string notice = r.state["notice"].get<std::string>();
  EXPECT_NE(notice.find("GPU attention unavailable"), std::string::npos) << notice;
  EXPECT_NE(notice.find("4.3"), std::string::npos) << notice;
  EXPECT_EQ(r.state["event"]["line"], 5);
}

// --- BERT and the encoder-decoder ---

namespace {

// A small untrained model of `arch` saved to a temporary checkpoint.
std::string small_checkpoint(const std::string& arch) { return gui::temp_checkpoint(gui::small_config(arch), arch, 1); }

bool has_tab(const AppRun& r, const std::string& name) {
  for (const auto& t : r.state["tabs_shown"])
    if (t == name) return true;
  return false;
}

}  // namespace

TEST(GuiBert, FillInTabMasksAndFills) {
  const std::string model = small_checkpoint("bert");
  const AppRun r = run_app("--model " + model, "prompt:abcd,mask:3,mask:5,open:fillin,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(luminance_std(r), 20.0) << "the screenshot looks blank";
  EXPECT_EQ(r.state["arch"], "bert");
  EXPECT_EQ(r.state["prompt"], "a[MASK]c[MASK]");
  EXPECT_EQ(r.state["fill_positions"], 2);
  EXPECT_EQ(r.state["event"]["alg"], 9);
  EXPECT_TRUE(has_tab(r, "Fill-in")) << r.state["tabs_shown"];
  // The fill is the session's: fill_masks at τ = 0 on the same prompt.
  sf::Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(model, error)) << error;
  s.set_prompt("a[MASK]c[MASK]");
  EXPECT_EQ(r.state["fill"], s.tokenizer().decode(s.fill().filled));
  // A GPT model has no Fill-in tab, and mask: is refused.
  const AppRun g = run_app("", "mask:2");
  EXPECT_EQ(g.exit_code, 3) << g.output;
}

TEST(GuiEd, ToolbarHasTwoInputsAndTracesAlgorithm8) {
  const std::string model = small_checkpoint("ed");
  const AppRun r = run_app("--model " + model, "context:ab\\,c,prompt:xy,goto:4:4:1:2,open:attention,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(luminance_std(r), 20.0) << "the screenshot looks blank";
  EXPECT_EQ(r.state["arch"], "ed");
  EXPECT_EQ(r.state["context"], "ab,c");
  EXPECT_EQ(r.state["tokens_z"], 6);  // <bos> a b , c <eos>
  EXPECT_EQ(r.state["prompt"], "xy");
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_TRUE(has_tab(r, "Attention"));
  // An unknown character in z is reported and the last good z kept.
  const AppRun bad = run_app("--model " + model, "context:ab,context:a\u00e9");
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  EXPECT_EQ(bad.state["tokens_z"], 4);
  EXPECT_NE(bad.state["context_error"].get<std::string>(), "");
}

TEST(GuiEd, TranslationTabTranslates) {
  const std::string model = small_checkpoint("ed");
  const AppRun r = run_app("--model " + model, "context:abc,translate-one,translate-one,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(luminance_std(r), 20.0) << "the screenshot looks blank";
  EXPECT_EQ(r.state["run_kind"], 3);  // RunKind::Translate
  EXPECT_EQ(r.state["translation_shown"], 2);
  EXPECT_EQ(r.state["event"]["alg"], 15);
  EXPECT_EQ(r.state["event"]["i"], 2);
  EXPECT_TRUE(has_tab(r, "Translation")) << r.state["tabs_shown"];
  sf::Session s;
  std::string error;
  ASSERT_TRUE(s.load_model(model, error)) << error;
  s.set_context("abc");
  const sf::EdInferenceResult e = sf::edinference(s.tokens_z(), s.model(), sf::EdInferenceOptions{0.0, 1, false});
  EXPECT_EQ(r.state["translated"], s.tokenizer().decode(sf::Tokens(e.x_hat.begin(), e.x_hat.begin() + 3)));
  const AppRun all = run_app("--model " + model, "context:abc,translate-all,wait");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.state["translated"], s.tokenizer().decode(e.x_hat));
  EXPECT_EQ(all.state["translation_stopped"], e.stopped);
}

TEST(GuiExamples, ExampleOneOpensTheDefaultModel) {
  const AppRun r = run_app("", "prompt:abc,example:1,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["prompt"], "hello=");
  EXPECT_EQ(r.state["model"], "default.safetensors");
  const AppRun none = run_app("", "example:9");
  EXPECT_EQ(none.exit_code, 3);
}

// File › New model…: the builder's actions make a RoPE + SwiGLU + grouped-query model the
// session's, and the state reports its configuration and ParamTable(c).total().
TEST(Gui, ModelBuilderCreatesARopeSwigluModel) {
  const AppRun r = run_app("", "builder:open,builder:set:position=rope,builder:set:activation=swiglu,"
                               "builder:set:H_kv=2,builder:set:L=3,builder:create");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["windows"].contains("New model###builder"));
  const json& c = r.state["config"];
  EXPECT_EQ(c["position"], "rope");
  EXPECT_EQ(c["activation"], "swiglu");
  EXPECT_EQ(c["H_kv"], 2);
  EXPECT_EQ(c["L"], 3);
  // The count the app reports is that of the table of the same choice made here.
  const sf::Session s;  // the default model, whose sizes the builder started from
  sf::ModelConfig expect = s.model().config;
  expect.position = sf::Position::Rope;
  expect.activation = sf::Activation::SwiGLU;
  expect.H_kv = 2;
  expect.L = 3;
  const sf::ParamTable table(expect);
  EXPECT_EQ(r.state["params"].get<size_t>(), table.total());
  EXPECT_NE(r.state["params"].get<size_t>(), s.model().table.total());
  EXPECT_EQ(table.find("W_p"), nullptr);  // RoPE: no learned positions
  EXPECT_NE(table.find("layer3.W_gate"), nullptr);
  EXPECT_NE(r.state["variants"].get<std::string>().find("RoPE"), std::string::npos);
  // The trace re-ran on the new model: the cursor is back on Algorithm 10, line 1.
  EXPECT_EQ(r.state["event"]["alg"], 10);
  EXPECT_EQ(r.state["event"]["line"], 1);
  EXPECT_NE(r.state["model"].get<std::string>().find("new gpt model"), std::string::npos);
}

TEST(Gui, SixtyFourHeadsFitTheAttentionTab) {
  // Found by the soak's monkey: H = 64 (the builder's largest) asked ImGui for a 65-column table in
  // the Attention tab, over its limit of 64, and the assertion ended the app.
  const AppRun r = run_app("", "builder:open,builder:set:H=64,builder:create,open:attention,goto:4:6:1:64");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 4);
  EXPECT_EQ(r.state["event"]["h"], 64);
  EXPECT_TRUE(has_tab(r, "Attention")) << r.state["tabs_shown"];  // drawn in the last frame
}

TEST(Gui, ModelBuilderRefusesAnImpossibleCombinationWithTheReason) {
  AppRun r = run_app("", "builder:open,builder:set:H_kv=3,builder:create");
  EXPECT_EQ(r.exit_code, 3) << r.output;  // a refused action
  EXPECT_NE(r.output.find("must divide H"), std::string::npos) << r.output;
  r = run_app("", "builder:open,builder:set:position=sideways");
  EXPECT_EQ(r.exit_code, 3) << r.output;
  EXPECT_NE(r.output.find("learned, sinusoidal, rope, alibi, none"), std::string::npos) << r.output;
  // Shown, not created: the dialog stays open over the unchanged model.
  r = run_app("", "builder:open,builder:set:H_kv=3");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["windows"].contains("New model###builder"));
  EXPECT_EQ(r.state["model"], "default.safetensors");
}

// Help › Errata: "Show me" moves the stepper to the line where the slip shows, traces the run
// that has it, or says which model to open.
TEST(Gui, ErrataShowMeJumpsToTheLine) {
  AppRun r = run_app("", "errata:show:paper-layer-norm-eps");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_TRUE(r.state["windows"].contains("Errata of the seeds###errata"));
  EXPECT_EQ(r.state["event"]["alg"], 6);
  EXPECT_EQ(r.state["event"]["line"], 3);
  // τ = 0 shows in Algorithm 14: the GPT generates to get there.
  r = run_app("", "errata:show:paper-tau-zero");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 14);
  EXPECT_EQ(r.state["event"]["line"], 5);
  // Algorithm 8's loop index: the GPT does not run it; the encoder-decoder does.
  r = run_app("", "errata:show:paper-alg8-loop-index");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 10);
  EXPECT_NE(r.state["notice"].get<std::string>().find("Encoder-decoder"), std::string::npos) << r.state["notice"];
  r = run_app("", "example:3,errata:show:paper-alg8-loop-index");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 8);
  EXPECT_EQ(r.state["event"]["line"], 13);
  r = run_app("", "errata:show:no-such-slip");
  EXPECT_EQ(r.exit_code, 3) << r.output;
}

TEST(Gui, ModelBuilderSavesTheNewModelAsACheckpoint) {
  const fs::path out = fs::temp_directory_path() / ("stepformer-builder-" + std::to_string(::getpid()) + ".safetensors");
  const AppRun r = run_app("", "builder:open,builder:set:arch=bert,builder:set:H_kv=1,builder:set:L=1,builder:set:seed=7,"
                               "builder:save:" + out.string());
  ASSERT_EQ(r.exit_code, 0) << r.output;
  ASSERT_TRUE(fs::exists(out)) << r.output;
  const sf::Checkpoint ck = sf::load_checkpoint(out.string());
  fs::remove(out);
  EXPECT_EQ(ck.model.config.arch, "bert");
  EXPECT_EQ(ck.model.config.kv_heads(), 1);
  EXPECT_EQ(ck.model.config.L, 1);
  EXPECT_EQ(ck.model.table.find("layer2.attn.W_q"), nullptr);
  EXPECT_EQ(r.state["params"].get<size_t>(), ck.model.table.total());
  EXPECT_EQ(r.state["arch"], "bert");
  // Seeded: the same seed gives the same θ.
  const sf::Model again = sf::Model::initialised(ck.model.config, 7);
  EXPECT_EQ(again.theta, ck.model.theta);
}

// The Training tab's padding view reads the trainer's last minibatch: sequences of different
// lengths padded to ℓ, and loss terms only on real positions (ℓ_n − 1 per GPT sequence).
TEST(Gui, TrainingTabShowsTheMinibatchPadding) {
  const AppRun r = run_app("", "open:training,train-task:sort,train-step:2");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  const json& b = r.state["train_batch"];
  ASSERT_EQ(b["B"], 32);  // the classroom recipe's batch
  const std::vector<int> lengths = b["lengths"].get<std::vector<int>>();
  ASSERT_EQ(lengths.size(), 32u);
  int sum = 0;
  for (int n : lengths) sum += n;
  EXPECT_EQ(b["real_tokens"], sum);
  EXPECT_GE(b["l"].get<int>(), *std::max_element(lengths.begin(), lengths.end()));  // padded to the longest of the data
  EXPECT_LT(*std::min_element(lengths.begin(), lengths.end()), b["l"].get<int>()) << "no sequence is padded";
  EXPECT_EQ(b["targets"], sum - 32);  // no loss term on padding, none on the last real token
}

TEST(Gui, ErrataShowMeTracesTrainingAndTranslationWhenTheyHaveTheLine) {
  // Carpenter's LOG_DENSITY shows at Algorithm 13's loss line: one traced update of the GPT.
  AppRun r = run_app("", "errata:show:carpenter-history-names");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 13);
  EXPECT_EQ(r.state["event"]["line"], 5);
  EXPECT_EQ(r.state["run_kind"], static_cast<int>(sf::RunKind::Training));
  // Algorithm 15's unbounded loop: the encoder-decoder translates.
  r = run_app("", "example:3,errata:show:paper-alg15-unbounded");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["event"]["alg"], 15);
  EXPECT_EQ(r.state["event"]["line"], 3);
  EXPECT_EQ(r.state["run_kind"], static_cast<int>(sf::RunKind::Translate));
}

// --- issue 11: the Tokenizer tab, opening folders, big matrices ---

TEST(GuiTokenizer, TheBpeStepperMakesOneMergeAtATime) {
  const AppRun r = run_app("", "open:tokenizer,tokenizer:the cat sat on the mat. the cat ate.,bpe-vocab:30,"
                               "bpe-step:1,bpe-step:2,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(luminance_std(r), 20.0) << "the screenshot looks blank";
  EXPECT_TRUE(has_tab(r, "Tokenizer")) << r.state["tabs_shown"];
  ASSERT_TRUE(r.state.contains("bpe")) << r.state.dump();
  EXPECT_EQ(r.state["bpe"]["merges"], 3);
  // The corpus's characters: t h e ␣ c a s o n m . (space-led words keep their space): 11, plus 3 merges.
  EXPECT_EQ(r.state["bpe"]["vocab"], 11 + 3);
  // Running to the target stops there.
  const AppRun all = run_app("", "tokenizer:the cat sat on the mat. the cat ate.,bpe-vocab:16,bpe-run");
  ASSERT_EQ(all.exit_code, 0) << all.output;
  EXPECT_EQ(all.state["bpe"]["vocab"], 16);
  // A bad size is refused.
  EXPECT_EQ(run_app("", "bpe-vocab:0").exit_code, 3);
}

TEST(GuiOpen, OpenThisFolderOpensTheModelInIt) {
  const fs::path dir = fs::temp_directory_path() / ("stepformer-gui-folder-" + std::to_string(::getpid()));
  fs::create_directories(dir / "sorter");
  fs::copy_file(sf::assets_dir() + "/default.safetensors", dir / "sorter" / "model.safetensors",
                fs::copy_options::overwrite_existing);
  const AppRun r = run_app("", "files:" + (dir / "sorter").string() + ",files-open-folder,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["model"], "sorter");
  EXPECT_EQ(r.state["layout"], "stepformer");
  EXPECT_NE(r.state["notice"].get<std::string>().find("Opened sorter"), std::string::npos) << r.state["notice"];
  // A folder with no checkpoint keeps the model and says why, in the browser and the status bar.
  fs::create_directories(dir / "empty");
  const AppRun bad = run_app("", "files:" + (dir / "empty").string() + ",files-open-folder,wait");
  ASSERT_EQ(bad.exit_code, 0) << bad.output;
  EXPECT_EQ(bad.state["model"], "default.safetensors");
  EXPECT_NE(bad.state["notice"].get<std::string>().find("Could not open"), std::string::npos) << bad.state["notice"];
  EXPECT_TRUE(bad.state["windows"].contains("Open a checkpoint or a model folder###files")) << bad.state["windows"];
  fs::remove_all(dir);
}

TEST(GuiOpen, AHuggingFaceGpt2FolderShowsItsPiecesInTheToolbar) {
  const std::string dir = std::string(STEPFORMER_SOURCE_DIR) + "/tests/data/ecosystem/hf-gpt2";
  if (!fs::exists(dir)) GTEST_SKIP() << dir << " is not there yet";
  const AppRun r = run_app("--model " + dir + " --prompt 'Hello world'", "wait-trace,open:tokenizer,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(r.state["layout"], "hf-gpt2");
  EXPECT_NE(r.state["model"].get<std::string>().find("Hugging Face GPT-2 layout"), std::string::npos);
  EXPECT_FALSE(r.state["tracing"]);
  bool space = false;
  for (const auto& l : r.state["token_labels"]) space |= l.get<std::string>().rfind("␣", 0) == 0;
  EXPECT_TRUE(space) << r.state["token_labels"];
  EXPECT_TRUE(has_tab(r, "Tokenizer"));
}

TEST(GuiBigMatrix, AVocabularySizedMatrixIsDrawnReducedAndZooms) {
  // A model with a 3000-token vocabulary: P (N_V × ℓ) is over 128 rows, W_e wider than the view.
  sf::ModelConfig c;
  c.L = 1;
  c.H = 2;
  c.d_e = 16;
  c.d_attn = c.d_mid = 8;
  c.d_mlp = 32;
  c.l_max = 16;
  c.vocab.clear();
  for (int i = 0; i < 2997; ++i) {  // a … z, then CJK characters (drawn as the fallback glyph)
    const int cp = i < 26 ? 'a' + i : 0x4E00 + i;
    c.vocab.push_back(cp < 0x80 ? std::string(1, static_cast<char>(cp))
                                : std::string{static_cast<char>(0xE0 | (cp >> 12)), static_cast<char>(0x80 | ((cp >> 6) & 0x3F)),
                                              static_cast<char>(0x80 | (cp & 0x3F))});
  }
  const std::string path = (fs::temp_directory_path() / ("stepformer-gui-vocab-" + std::to_string(::getpid()) +
                                                         ".safetensors")).string();
  sf::save_checkpoint(path, sf::Model::initialised(c, 1));
  const AppRun r = run_app("--model " + path + " --prompt abc", "goto:10:11,select:P,open:tensor,wait");
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_GT(luminance_std(r), 20.0);
  EXPECT_EQ(r.state["config"]["vocab"].size(), 2997u);
  const json& view = r.state["tensor_view"];
  EXPECT_EQ(view["value"], "P#3000x4");
  EXPECT_EQ(view["window"], json::array({0, 3000, 0, 4}));
  // Far fewer pixels than rows: each pixel the largest |value| of a block, and it says so.
  const std::string caption = view["caption"].get<std::string>();
  EXPECT_EQ(caption.rfind("3000 rows shown as ", 0), 0u) << caption;
  EXPECT_NE(caption.find("each pixel the largest |value| of"), std::string::npos) << caption;
  // The wheel over the cells zooms about the pointer: fewer rows, around the one under it.
  const json& cells = view["cells"];
  const int x = static_cast<int>(cells[0].get<float>() + cells[2].get<float>() / 2);
  const int y = static_cast<int>(cells[1].get<float>() + cells[3].get<float>() / 4);
  const AppRun z = run_app("--model " + path + " --prompt abc", "goto:10:11,select:P,open:tensor,mouse:" +
                                                                    std::to_string(x) + ":" + std::to_string(y) +
                                                                    ",wait,wheel:5,wait");
  ASSERT_EQ(z.exit_code, 0) << z.output;
  const json& w = z.state["tensor_view"]["window"];
  const int r0 = w[0].get<int>(), r1 = w[1].get<int>();
  EXPECT_LT(r1 - r0, 3000 / 2) << w;
  EXPECT_LT(r0, 3000 / 4);  // the pointer was a quarter of the way down
  EXPECT_GT(r1, 3000 / 4);
  EXPECT_EQ(w[2], 0);  // 4 columns: too few to zoom
  EXPECT_EQ(w[3], 4);
  fs::remove(path);
}

}  // namespace test_gui
