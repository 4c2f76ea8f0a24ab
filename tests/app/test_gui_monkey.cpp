// The monkey in CI (issue 13, item 7; app/monkey.hpp, docs/soak.md): 10,000 random actions from a
// fixed seed under Xvfb, with no crash, no escaped exception and no growing heap.
#include <gtest/gtest.h>

#include <cstdio>
#include <regex>
#include <string>

#include "gui_harness.hpp"

namespace test_gui_monkey {

namespace {

// Actions a frame: keeps the run within the test's time limit (measured in docs/soak.md).
constexpr const char* kPerFrame = "4";
// RSS may grow this much from the 1,000th action to the 10,000th. The end figure is raw RSS at one
// instant, and with the same seed it varies from run to run with what is in flight then (a trace
// job, the training thread): measured +19.9, +23.5, +25.4 and +65.8 MiB (the last in a fresh clone,
// 2026-11-25), while RSS swings by up to 290 MiB with what is open (docs/soak.md). The limit is 1.5×
// the largest seen, so that an idle-moment swing passes while a leak of 11 KiB an action fails;
// the settled figures of scripts/soak.sh are the finer measure.
constexpr long long kMaxGrowthKib = 100 * 1024;

// The first number that `pattern`'s group 1 captures in the monkey's summary; -1 if absent.
long long summary_number(const std::string& output, const std::string& pattern) {
  std::smatch m;
  return std::regex_search(output, m, std::regex(pattern)) ? std::stoll(m[1]) : -1;
}

}  // namespace

TEST(GuiMonkey, TenThousandActionsFromAFixedSeedWithoutACrashOrGrowth) {
  const gui::AppRun r = gui::run_app(std::string("--monkey 13:10000:") + kPerFrame);
  ASSERT_EQ(r.exit_code, 0) << r.output;
  EXPECT_EQ(summary_number(r.output, R"(monkey: seed 13, (\d+) actions applied)"), 10000) << r.output;
  const long long at_1000 = summary_number(r.output, R"(RSS (\d+) KiB after the first 1000 actions)");
  const long long at_end = summary_number(r.output, R"((\d+) KiB at the end)");
  ASSERT_GT(at_1000, 0) << r.output;
  ASSERT_GT(at_end, 0) << r.output;
  std::printf("monkey RSS: %lld KiB after 1000 actions, %lld KiB after 10000 (%+lld KiB)\n", at_1000, at_end,
              at_end - at_1000);
  EXPECT_LE(at_end - at_1000, kMaxGrowthKib) << r.output;
  // The last frame was drawn: the screenshot is not blank.
  ASSERT_GT(r.w, 0) << r.output;
  EXPECT_GT(gui::luminance_std(r), 5.0);
}

TEST(GuiMonkey, ABadSpecIsAClearError) {
  for (const char* spec : {"13", "13:", "x:10", "13:0", "13:10:0", "13:ten", "13:forever:x"}) {
    const gui::AppRun r = gui::run_app(std::string("--monkey ") + spec, "", false);
    EXPECT_EQ(r.exit_code, 2) << spec << ": " << r.output;
    EXPECT_NE(r.output.find("--monkey needs SEED:N[:K] or SEED:forever[:K]"), std::string::npos) << r.output;
  }
}

}  // namespace test_gui_monkey
