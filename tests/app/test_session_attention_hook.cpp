// The Forward run's attention hook (the GPU tab's data), headless: every MHAttention call of the
// encoder-decoder is recorded with its line, layer, kind, max |Ṽ_hook − Ṽ_cpu| and dispatches,
// and bound to its Algorithm 5 frame in the trace; a call the hook refuses is named and the whole
// run traced on the CPU. The hooks here are core's own mh_attention (shifted, or refusing one call),
// so no GPU is needed; tests/app/test_gui_gpu_calls.cpp runs the real GPU hook. Plus the GPU tab's
// time texts ("not measured").
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <tuple>
#include <vector>

#include "app/attention_calls.hpp"
#include "app/panels/gpu_text.hpp"
#include "app/session.hpp"
#include "core/algorithms/attention_check.hpp"
#include "core/model/error.hpp"
#include "core/trace/vocabulary.hpp"

namespace sf {
namespace test_session_attention_hook {

constexpr double kNaN = std::numeric_limits<double>::quiet_NaN();

// A small encoder-decoder: ℓ_z = 5 (<bos> abc <eos>) ≠ ℓ_x = 7 (<bos> abcdef).
void open_ed(Session& s) {
  ModelConfig c;
  c.arch = "ed";
  c.L_enc = c.L_dec = 2;
  c.l_max = 16;
  s.set_model(Model::initialised(c, 3), "ed (seed 3)");
  s.set_context("abc");
  s.set_prompt("abcdef");
  s.wait_for_trace();
}

// core's mh_attention, traced, with `shift` added to Ṽ; one dispatch whose GPU time was not measured.
// Refuses (throws) the calls made from line `refuse` of the forward algorithm.
AttentionHook core_hook(float shift, int refuse = 0) {
  return [shift, refuse](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                         const AttentionOptions& av, Tracer* tr, AttentionCall& call) {
    call.kind = X.data() == Z.data() ? "self" : "cross";
    if (av.patch.call.line == refuse) throw Error("not on this device");
    MatF Vt = mh_attention<float>(X, Z, W, mask, tr, nullptr, av);
    call.dispatches.push_back(AttentionDispatch{"all of it", 5, 1, 4, "1–4", kNaN, 0.5});
    return MatF(Vt.array() + shift);
  };
}

using Site = std::tuple<int, int, int>;  // (algorithm, line, l)

// The call sites of the CPU trace's Algorithm 4 calls, one per MHAttention call, in trace order.
std::vector<Site> cpu_call_sites(const Trace& t) {
  std::vector<Site> sites;
  for (const HeadCall& h : head_calls(t)) {
    const Site site{h.caller_alg, h.caller_line, h.idx.l};
    if (h.idx.h == 1) sites.push_back(site);
  }
  return sites;
}

TEST(AttentionHook, EveryCallOfTheEncoderDecoderIsRecordedAtItsLineAndBoundToItsFrame) {
  Session cpu;
  open_ed(cpu);
  Session s;
  open_ed(s);
  s.set_attention_hook(core_hook(0));
  ASSERT_TRUE(s.attention_hooked()) << s.take_attention_failure();
  const std::vector<AttentionCall>& calls = s.attention_calls();
  const std::vector<Site> expect = cpu_call_sites(cpu.trace());
  // Encoder self-attention (line 5), then per decoder layer line 14 and the cross-attention line 16.
  ASSERT_EQ(expect, (std::vector<Site>{{8, 5, 1}, {8, 5, 2}, {8, 14, 1}, {8, 16, 1}, {8, 14, 2}, {8, 16, 2}}));
  ASSERT_EQ(calls.size(), expect.size());
  EXPECT_EQ(s.trace().size(), cpu.trace().size());  // the hook's events are core's, in the same places
  for (size_t i = 0; i < calls.size(); ++i) {
    const AttentionCall& c = calls[i];
    EXPECT_EQ((Site{c.alg, c.line, c.layer}), expect[i]) << i;
    EXPECT_EQ(c.kind, c.line == 16 ? "cross" : "self") << i;
    // The same computation as core's (the hook is core's mh_attention): no difference at all.
    EXPECT_EQ(c.max_diff, 0.0) << i;
    ASSERT_EQ(c.dispatches.size(), 1u);
    EXPECT_TRUE(std::isnan(c.dispatches[0].gpu_ms));
    // Bound to its frame: the event at `enter` is its Algorithm 5, inside the calling line's frame.
    const Event& e = s.trace().events.at(c.enter);
    EXPECT_EQ(e.kind, EventKind::Enter) << i;
    EXPECT_EQ(e.alg, 5) << i;
    EXPECT_EQ(e.idx.l, c.layer) << i;
    const size_t end = frame_end(s.trace(), c.enter);
    ASSERT_GT(end, c.enter + 1) << i;
    EXPECT_EQ(s.trace().events.at(end - 1).alg, 5) << i;  // its last event: Algorithm 5 line 4
    EXPECT_EQ(s.trace().events.at(end - 1).line, 4) << i;
  }
  EXPECT_LE(s.attention_max_diff(), 0.0);
}

TEST(AttentionHook, MaxDiffIsTheCallsDistanceToCoresAttention) {
  Session s;
  open_ed(s);
  const float shift = 1e-3f;  // every entry of Ṽ moves by it
  s.set_attention_hook(core_hook(shift));
  ASSERT_TRUE(s.attention_hooked());
  for (const AttentionCall& c : s.attention_calls())
    EXPECT_NEAR(c.max_diff, shift, 1e-6) << c.alg << " L" << c.line << " l=" << c.layer;  // float rounding of +shift
  EXPECT_GT(s.attention_max_diff(), 0.0);  // and P moved
}

TEST(AttentionHook, ARefusedCallIsNamedAndTheWholeRunIsTracedOnTheCpu) {
  Session cpu;
  open_ed(cpu);
  Session s;
  open_ed(s);
  s.set_attention_hook(core_hook(0, 16));  // refuses the cross-attention, Algorithm 8 line 16
  EXPECT_FALSE(s.attention_hooked());
  EXPECT_TRUE(s.attention_calls().empty());
  EXPECT_TRUE(std::isnan(s.attention_max_diff()));
  EXPECT_EQ(s.trace().size(), cpu.trace().size());
  const AttentionFailure* f = s.attention_failed_call();
  ASSERT_NE(f, nullptr);
  EXPECT_EQ(std::tie(f->alg, f->line, f->layer), std::make_tuple(8, 16, 1));  // its first call, decoder layer 1
  EXPECT_EQ(f->kind, "cross");
  EXPECT_EQ(f->why, "not on this device");
  EXPECT_EQ(s.take_attention_failure(), "Algorithm 8 line 16, l = 1 (cross): not on this device");
  EXPECT_EQ(s.take_attention_failure(), "");         // told once
  ASSERT_NE(s.attention_failed_call(), nullptr);     // the tab keeps saying it
  s.set_attention_hook(core_hook(0));                // a new try forgets it
  EXPECT_EQ(s.attention_failed_call(), nullptr);
  EXPECT_TRUE(s.attention_hooked());
}

// The GPU guard's words (session 17): nothing before a check, one quiet line while every call agrees, and a
// warning with the device, the count and the largest |ΔṼ| once one disagrees.
TEST(GpuText, TheGuardSaysNothingAgreesOrWarns) {
  GpuGuardStats g;
  EXPECT_EQ(guard_text(g, "dev"), "");
  g.checked = 3, g.largest_diff = 1.5e-6, g.largest_tolerance = 2.4e-4;
  EXPECT_EQ(guard_text(g, "dev"), "Checked against core (not in the paper): 3 teaching-form calls on this device, every "
                                  "one agreeing; largest max |ΔṼ| = 1.5e-06 (tolerance 2.4e-04).");
  g.disagreed = 2, g.largest_diff = 0.23;
  const std::string w = guard_text(g, "NVIDIA H200/PCIe/SSE2");
  EXPECT_EQ(w.rfind("Warning: on NVIDIA H200/PCIe/SSE2, the GPU's teaching form disagreed with core on 2 of 3 checked "
                    "calls (largest max |ΔṼ| = 0.23, tolerance 2.4e-04).", 0),
            0u)
      << w;
  EXPECT_NE(w.find("Please report it"), std::string::npos) << w;
}

// agreement_tolerance = 64·n·u·max(1, scale), u = 2⁻²⁴ (attention_check.hpp): exact powers of two here.
TEST(AttentionCheck, ToleranceIsDerivedFromTheLongestSumAndTheScale) {
  EXPECT_DOUBLE_EQ(agreement_tolerance(64, 0.5), 64.0 * 64.0 / 16777216.0);  // scale below 1 counts as 1
  EXPECT_DOUBLE_EQ(agreement_tolerance(64, 4.0), 4.0 * 64.0 * 64.0 / 16777216.0);
  EXPECT_DOUBLE_EQ(agreement_tolerance(512, 1.0), 8.0 * 64.0 * 64.0 / 16777216.0);
}

TEST(AttentionCheck, LargestHeadDiffNamesTheHeadAndColumn) {
  std::vector<AttentionRecord<float>> a(3), b(3);
  for (int h = 0; h < 3; ++h) a[h].Vt = b[h].Vt = MatF::Zero(2, 4);
  a[1].Vt(0, 2) = 0.25f;
  a[2].Vt(1, 3) = -0.5f;
  const HeadDiff d = largest_head_diff(a, b);
  EXPECT_DOUBLE_EQ(d.diff, 0.5);
  EXPECT_EQ(d.head, 2);
  EXPECT_EQ(d.column, 3);
  EXPECT_EQ(largest_head_diff({}, {}).head, -1);
}

TEST(GpuText, AnUnmeasuredTimeSaysSo) {
  EXPECT_EQ(gpu_time_text(kNaN), "not measured");  // no GL_TIMESTAMP clock
  EXPECT_EQ(gpu_time_text(0.0), "not measured");   // two stamps that read the same time (llvmpipe)
  EXPECT_EQ(gpu_time_text(2.5), "2.500 ms");
  EXPECT_EQ(gpu_time_text(0.0125), "12.5 µs");
  EXPECT_EQ(gpu_time_text(4.8e-4), "480 ns");
}

TEST(GpuText, ATotalIsMeasuredOnlyWhenEveryPartIs) {
  AttentionCall a, b;
  a.dispatches = {{"L4", 4, 4, 4, "1–4", 0.25, 0.5}, {"L5", 4, 5, 5, "1–4", 0.5, 0.25}};
  b.dispatches = {{"L4", 4, 4, 4, "1–4", 0.25, 0.5}, {"L5", 4, 5, 5, "1–4", 0.0, 0.25}};
  EXPECT_DOUBLE_EQ(call_times(a).gpu_ms, 0.75);
  EXPECT_DOUBLE_EQ(call_times(a).cpu_ms, 0.75);
  EXPECT_TRUE(std::isnan(call_times(b).gpu_ms));  // one dispatch read 0: the sum is not the call's time
  EXPECT_EQ(gpu_time_text(call_times(b).gpu_ms), "not measured");
  EXPECT_DOUBLE_EQ(call_times(b).cpu_ms, 0.75);
  EXPECT_EQ(gpu_time_text(run_times({a, b}).gpu_ms), "not measured");
  EXPECT_EQ(gpu_time_text(run_times({a, b}).cpu_ms), "1.500 ms");
  EXPECT_EQ(gpu_time_text(run_times({a, a}).gpu_ms), "1.500 ms");
}

TEST(GpuText, CallsAndDispatchesAreNamedByTheirLines) {
  AttentionCall c;
  c.alg = 8, c.line = 16;
  EXPECT_EQ(call_site_text(c), "Alg. 8 L16");
  EXPECT_EQ(dispatch_lines_text({"", 4, 4, 6, "1–4", kNaN, kNaN}), "Alg. 4 L4–6");
  EXPECT_EQ(dispatch_lines_text({"", 5, 4, 4, "", kNaN, kNaN}), "Alg. 5 L4");
  // Algorithm 4-R's shaders (not in the paper) by its label, not its id
  EXPECT_EQ(dispatch_lines_text({"", algs::random_feature_attention, 8, 13, "1–4", kNaN, kNaN}), "Alg. 4-R L8–13");
  EXPECT_EQ(diff_text(kNaN), "—");
}

}  // namespace test_session_attention_hook
}  // namespace sf
