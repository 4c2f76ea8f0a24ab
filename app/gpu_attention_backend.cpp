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

AttentionHook GpuAttentionBackend::hook() {
#ifdef STEPFORMER_HAVE_GPU
  gpu::GpuAttention* g = impl_->gpu.get();
  if (!g) return {};
  return [g](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
             const AttentionOptions& av, Tracer* tr, AttentionCall& call) {
    call.kind = gpu::describe_call(X.data() == Z.data(), mask, av, static_cast<int>(W.heads.size()));
    if (av.random_features()) {  // no shader computes Algorithm 4-R: core runs it, and the call says so
      call.kind += " · random-feature attention (Algorithm 4-R): no GPU shader, computed on the CPU";
      return mh_attention<float>(X, Z, W, mask, tr, nullptr, av);
    }
    std::vector<gpu::DispatchTime> dt;
    std::vector<AttentionRecord<float>> recs;
    MatF Vt = g->mh_attention(X, Z, W, mask, gpu::Form::Teaching, &dt, &recs, av);
    // Algorithm 5 and its heads' Algorithm 4 (RoPE's Q_pre, K_pre and ALiBi's B among their
    // sub-steps), traced with the GPU's Q, K, V, S, A, Ṽ.
    trace_mh_attention_replay<float>(tr, X, Z, W, mask, recs, Vt, av);
    for (const auto& d : dt)
      call.dispatches.push_back(AttentionDispatch{d.what, d.algorithm, d.line_first, d.line_last, d.heads, d.gpu_ms, d.cpu_ms});
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
