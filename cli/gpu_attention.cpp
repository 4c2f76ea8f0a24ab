// --attention gpu for forward, fill and sample: see gpu_attention.hpp.
#include "cli/gpu_attention.hpp"

#include <cmath>
#include <cstdio>
#include <ostream>

#include "core/model/error.hpp"
#ifdef STEPFORMER_HAVE_GPU
#include "gpu/forward_gpu.hpp"
#endif

namespace sf::cli {

AttentionChoice attention_choice(const Args& args) {
  AttentionChoice c;
  const std::string where = args.get_or("attention", "cpu");
  if (where != "cpu" && where != "gpu") throw UsageError("--attention must be cpu or gpu, not \"" + where + "\"");
  c.gpu = where == "gpu";
  c.form = args.get_or("gpu-form", "fused");
  if (c.form != "teaching" && c.form != "fused")
    throw UsageError("--gpu-form must be teaching or fused, not \"" + c.form + "\"");
  if (args.has("gpu-form") && !c.gpu) throw UsageError("--gpu-form goes with --attention gpu");
  if (args.has("trace") && c.gpu)
    throw UsageError("--trace records the lines inside Algorithms 5 and 4 as core runs them: leave out --attention gpu");
  return c;
}

Option attention_option() {
  return {"attention", "cpu|gpu",
          "Where every MHAttention call (Algorithms 5 and 4) runs: cpu (core, Eigen; the default) or gpu (OpenGL 4.3 "
          "compute shaders on a headless context through EGL: a GPU's driver, or Mesa's llvmpipe on the CPU). GPT, "
          "BERT and the encoder-decoder (self-, cross- and KV-cached attention, every mask and variant), ecosystem "
          "models included; the rest of the pass stays on the CPU. Prints the device, one line per call (the line "
          "and layer that called it, what it was, where it ran and max |Ṽ_gpu − Ṽ_cpu| against core's attention "
          "on the same inputs), then every dispatch with its GPU clock (\"not measured\" where the driver has none) "
          "and CPU clock. A call the GPU cannot run runs on the CPU, and its line says so and why. Not with "
          "--trace."};
}

Option gpu_form_option() {
  return {"gpu-form", "teaching|fused",
          "With --attention gpu: teaching runs one shader per pseudocode line (S, masked S and the softmax are "
          "stored); fused (the default) runs lines 4-6 as one flash-attention shader that never stores S."};
}

#ifdef STEPFORMER_HAVE_GPU

struct CliGpu::Impl {
  std::unique_ptr<gpu::GpuAttention> gpu;
  std::unique_ptr<gpu::GpuForward> forward;
};

CliGpu::CliGpu(const std::string& form) : impl_(std::make_unique<Impl>()) {
  std::string why_not;
  impl_->gpu = gpu::GpuAttention::create(why_not);
  if (!impl_->gpu) throw Error("--attention gpu: " + why_not);
  gpu::GpuForwardOptions opt;
  opt.form = form == "teaching" ? gpu::Form::Teaching : gpu::Form::Fused;
  impl_->forward = std::make_unique<gpu::GpuForward>(*impl_->gpu, opt);
}

MHAttentionFn<float> CliGpu::attention() { return impl_->forward->attention(); }
CachedMHAttentionFn CliGpu::cached_attention() { return impl_->forward->cached_attention(); }

namespace {

// A time in a 20-wide column; NaN (the GL's clock did not time it) is "not measured", never 0.000.
std::string ms_column(double v) {
  char buf[32];
  if (std::isnan(v)) std::snprintf(buf, sizeof buf, "%20s", "not measured");
  else std::snprintf(buf, sizeof buf, "%20.3f", v);
  return buf;
}

void print_calls(std::ostream& os, const std::vector<gpu::CallRecord>& calls) {
  os << "MHAttention calls (" << calls.size() << "):\n";
  for (const gpu::CallRecord& r : calls) os << "  " << gpu::call_line(r) << "\n";
  const int on_cpu = gpu::cpu_calls(calls);
  if (on_cpu == 0) os << "every call ran on the GPU";
  else os << on_cpu << " of " << calls.size() << " calls ran on the CPU (see their lines)";
  const double e = gpu::max_call_diff(calls);
  if (e >= 0) {
    char buf[48];
    std::snprintf(buf, sizeof buf, "%.1e", e);
    os << "; max |Ṽ_gpu − Ṽ_cpu| over the calls = " << buf;
  }
  os << "\n";
  if (const int wrong = gpu::disagreeing_calls(calls))
    os << "WARNING: " << wrong << " of " << calls.size()
       << " calls DISAGREE with core beyond their tolerance: the GPU's results are wrong on this device. Please "
          "report it (device, driver); see docs/gpu.md (the fused form was right where the teaching form was seen "
          "wrong)\n";
}

void print_dispatches(std::ostream& os, const std::vector<gpu::CallRecord>& calls) {
  os << "  GPU ms (GL_TIMESTAMP)  CPU ms (glFinish to glFinish)  dispatch\n";
  double gpu_total = 0, cpu_total = 0;
  size_t n = 0;
  char cpu[64];
  for (const gpu::CallRecord& r : calls)
    for (const gpu::DispatchTime& t : r.times) {
      std::snprintf(cpu, sizeof cpu, "  %29.3f  ", t.cpu_ms);
      os << "  " << ms_column(t.gpu_ms) << cpu << gpu::call_site(r) << ": " << t.what << "\n";
      gpu_total += t.gpu_ms;  // NaN once any dispatch was not measured: no GPU total then either
      cpu_total += t.cpu_ms;
      ++n;
    }
  std::snprintf(cpu, sizeof cpu, "  %29.3f  ", cpu_total);
  os << "  " << ms_column(gpu_total) << cpu << "total, " << n << " dispatches\n";
}

}  // namespace

void CliGpu::report(std::ostream& os) const {
  const gpu::GpuForward& f = *impl_->forward;
  os << "\nMHAttention on the GPU, " << gpu::to_string(f.options().form)
     << " form: " << impl_->gpu->device().summary() << "\n";
  print_calls(os, f.calls());
  print_dispatches(os, f.calls());
}

#else

struct CliGpu::Impl {};

CliGpu::CliGpu(const std::string&) {
  throw Error("this stepformer-cli was built without the GPU attention (configure with -DSTEPFORMER_GPU=ON)");
}
MHAttentionFn<float> CliGpu::attention() { return {}; }
CachedMHAttentionFn CliGpu::cached_attention() { return {}; }
void CliGpu::report(std::ostream&) const {}

#endif

CliGpu::~CliGpu() = default;

}  // namespace sf::cli
