#include "app/gpu_attention_backend.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/algorithms/attention_check.hpp"

#ifdef STEPFORMER_HAVE_GPU
#include "gpu/attention.hpp"
#endif

namespace sf {

struct GpuAttentionBackend::Impl {
  GpuGuardStats guard;
#ifdef STEPFORMER_HAVE_GPU
  std::unique_ptr<gpu::GpuAttention> gpu;
#endif
};

GpuAttentionBackend::GpuAttentionBackend() : impl_(std::make_unique<Impl>()) {}
GpuAttentionBackend::~GpuAttentionBackend() = default;

bool GpuAttentionBackend::ensure(bool gl43) {
  if (tried_) return ready();
  tried_ = true;
  if (!gl43) {
    why_not_ = "the window's OpenGL context has no 4.3 compute shaders (e.g. --gl33)";
    return false;
  }
#ifdef STEPFORMER_HAVE_GPU
  std::string why;
  try {
    impl_->gpu = gpu::GpuAttention::create_on_current_context(glfwGetProcAddress, why);
  } catch (const std::exception& e) {
    why = e.what();
  }
  if (!impl_->gpu) why_not_ = why.empty() ? "the GPU attention could not be created" : why;
  return ready();
#else
  why_not_ = "this build has no GPU module (stepformer_gpu was not built)";
  return false;
#endif
}

bool GpuAttentionBackend::ready() const {
#ifdef STEPFORMER_HAVE_GPU
  return impl_->gpu != nullptr;
#else
  return false;
#endif
}

std::string GpuAttentionBackend::device() const {
#ifdef STEPFORMER_HAVE_GPU
  if (impl_->gpu) return impl_->gpu->device().summary();
#endif
  return "";
}

int GpuAttentionBackend::max_shared_bytes() const {
#ifdef STEPFORMER_HAVE_GPU
  if (impl_->gpu) return impl_->gpu->device().max_shared_bytes;
#endif
  return 0;
}

const GpuGuardStats& GpuAttentionBackend::guard() const { return impl_->guard; }

#ifdef STEPFORMER_HAVE_GPU
namespace {

void add_dispatches(const std::vector<gpu::DispatchTime>& dt, AttentionCall& call) {
  for (const auto& d : dt)
    call.dispatches.push_back(AttentionDispatch{d.what, d.algorithm, d.line_first, d.line_last, d.heads, d.gpu_ms, d.cpu_ms});
}

// "max |ΔṼ| = 0.52 (head 2, column 7)" (1-based), or "max |ΔṼ| = 0.52" when no head differs as much as the
// call's Ṽ after W_o.
std::string diff_words(double diff, const HeadDiff& where) {
  if (std::isinf(diff)) return std::string("max |ΔṼ| = ") + kNotFiniteDiff;
  char buf[96];
  if (where.head >= 0 && where.diff >= diff)
    std::snprintf(buf, sizeof buf, "max |ΔṼ| = %.2g (head %d, column %d)", diff, where.head + 1, where.column + 1);
  else
    std::snprintf(buf, sizeof buf, "max |ΔṼ| = %.2g", diff);
  return buf;
}

// The teaching form's call, checked: core's untraced Algorithm 5 on the same inputs (its heads' records for
// Ṽ^h), compared within agreement_tolerance. Agreeing, the trace replays the GPU's records; disagreeing, it is
// core's traced Algorithm 5 and the call's kind says why. Returns the Ṽ the trace shows.
MatF checked_teaching_call(gpu::GpuAttention& g, GpuGuardStats& guard, const MatF& X, const MatF& Z,
                           const MHAttentionW<const float>& W, const Mask& mask, const AttentionOptions& av,
                           Tracer* tr, AttentionCall& call) {
  std::vector<gpu::DispatchTime> dt;
  std::vector<AttentionRecord<float>> recs, cpu_recs;
  MatF Vt = g.mh_attention(X, Z, W, mask, gpu::Form::Teaching, &dt, &recs, av);
  add_dispatches(dt, call);
  const auto t0 = std::chrono::steady_clock::now();
  AttentionOptions untraced = av;
  untraced.patch = {};  // as core_mh_attention: the site only labels the call
  const MatF Vt_cpu = mh_attention<float>(X, Z, W, mask, nullptr, &cpu_recs, untraced);
  const HeadDiff head = largest_head_diff(recs, cpu_recs);
  bool finite = Vt.allFinite();  // a NaN would slip past the comparisons below: it is a disagreement
  for (const AttentionRecord<float>& r : recs) finite = finite && r.Vt.allFinite();
  const double diff = finite ? std::max(max_abs_diff_to_core(Vt, Vt_cpu), head.diff)
                             : std::numeric_limits<double>::infinity();
  double scale = Vt_cpu.size() ? static_cast<double>(Vt_cpu.cwiseAbs().maxCoeff()) : 0.0;
  for (const AttentionRecord<float>& r : cpu_recs)
    if (r.Vt.size()) scale = std::max(scale, static_cast<double>(r.Vt.cwiseAbs().maxCoeff()));
  const double tol = agreement_tolerance(longest_sum(X, Z, W), scale);
  guard.check_ms += std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  ++guard.checked;
  if (diff >= guard.largest_diff) guard.largest_diff = diff, guard.largest_tolerance = tol;
  call.max_diff = diff;
  if (diff <= tol) {  // Algorithm 5 and its heads' Algorithm 4 (RoPE's Q_pre, K_pre and ALiBi's B among their
    // sub-steps), traced with the GPU's Q, K, V, S, A, Ṽ.
    trace_mh_attention_replay<float>(tr, X, Z, W, mask, recs, Vt, av);
    return Vt;
  }
  ++guard.disagreed;
  char tol_text[32];
  std::snprintf(tol_text, sizeof tol_text, "%.1e", tol);
  call.kind += " · the GPU's teaching form disagreed with core by " + diff_words(diff, head) + " (tolerance " +
               tol_text + "): showing core's values";
  return tr ? mh_attention<float>(X, Z, W, mask, tr, nullptr, av) : Vt_cpu;
}

// Algorithm 4-R (random-feature attention, not in the paper) on the GPU (shaders/rf_*.comp): Ṽ and the
// dispatches are the GPU's. The shaders keep no per-query running sums S_φ, s_φ, which 4-R's listing
// shows line by line, so the trace is core's traced Algorithm 5 on the same inputs; the call's
// max |Ṽ_gpu − Ṽ_cpu| says how far the two are apart, and the kind says whose numbers the listing shows.
MatF random_features_on_gpu(gpu::GpuAttention& g, const MatF& X, const MatF& Z, const MHAttentionW<const float>& W,
                            const Mask& mask, const AttentionOptions& av, Tracer* tr, AttentionCall& call) {
  std::vector<gpu::DispatchTime> dt;
  MatF Vt = g.mh_attention(X, Z, W, mask, gpu::Form::Fused, &dt, nullptr, av);
  call.kind += " · on the GPU, " + std::to_string(g.guarded_columns()) + " guarded columns (4-R's listing: core's φ, κ, S_φ)";
  if (tr) mh_attention<float>(X, Z, W, mask, tr, nullptr, av);
  add_dispatches(dt, call);
  return Vt;
}

}  // namespace
#endif

AttentionHook GpuAttentionBackend::hook() {
#ifdef STEPFORMER_HAVE_GPU
  gpu::GpuAttention* g = impl_->gpu.get();
  if (!g) return {};
  GpuGuardStats* guard = &impl_->guard;
  return [g, guard](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                    const AttentionOptions& av, Tracer* tr, AttentionCall& call) {
    call.kind = gpu::describe_call(X.data() == Z.data(), mask, av, static_cast<int>(W.heads.size()));
    if (av.random_features()) return random_features_on_gpu(*g, X, Z, W, mask, av, tr, call);
    return checked_teaching_call(*g, *guard, X, Z, W, mask, av, tr, call);
  };
#else
  return {};
#endif
}

void GpuAttentionBackend::release() {
#ifdef STEPFORMER_HAVE_GPU
  impl_->gpu.reset();
#endif
}

}  // namespace sf
