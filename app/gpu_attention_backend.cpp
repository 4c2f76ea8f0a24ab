#include "app/gpu_attention_backend.hpp"

#define GLFW_INCLUDE_NONE
#include <GLFW/glfw3.h>

#ifdef STEPFORMER_HAVE_GPU
#include "gpu/attention.hpp"
#endif

namespace sf {

struct GpuAttentionBackend::Impl {
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

#ifdef STEPFORMER_HAVE_GPU
namespace {

void add_dispatches(const std::vector<gpu::DispatchTime>& dt, AttentionCall& call) {
  for (const auto& d : dt)
    call.dispatches.push_back(AttentionDispatch{d.what, d.algorithm, d.line_first, d.line_last, d.heads, d.gpu_ms, d.cpu_ms});
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
  return [g](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
             const AttentionOptions& av, Tracer* tr, AttentionCall& call) {
    call.kind = gpu::describe_call(X.data() == Z.data(), mask, av, static_cast<int>(W.heads.size()));
    if (av.random_features()) return random_features_on_gpu(*g, X, Z, W, mask, av, tr, call);
    std::vector<gpu::DispatchTime> dt;
    std::vector<AttentionRecord<float>> recs;
    MatF Vt = g->mh_attention(X, Z, W, mask, gpu::Form::Teaching, &dt, &recs, av);
    // Algorithm 5 and its heads' Algorithm 4 (RoPE's Q_pre, K_pre and ALiBi's B among their
    // sub-steps), traced with the GPU's Q, K, V, S, A, Ṽ.
    trace_mh_attention_replay<float>(tr, X, Z, W, mask, recs, Vt, av);
    add_dispatches(dt, call);
    return Vt;
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
