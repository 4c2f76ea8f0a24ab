// The forward algorithms' MHAttention on the GPU, call by call: see forward_gpu.hpp.
#include "gpu/forward_gpu.hpp"

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <limits>

#include "core/algorithms/attention_check.hpp"
#include "core/algorithms/kv_cache.hpp"
#include "core/model/error.hpp"

namespace sf::gpu {

namespace {

double ms_since(std::chrono::steady_clock::time_point t0) {
  return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

// The record of a call before it runs: its site (the calling line av.patch.call, av.patch.l).
CallRecord site_of(const AttentionOptions& av, bool cached, int l_x, int l_z) {
  CallRecord r;
  r.algorithm = av.patch.call.alg;
  r.line = av.patch.call.line;
  r.layer = av.patch.l;
  r.cached = cached;
  r.l_x = l_x;
  r.l_z = l_z;
  return r;
}

// Core's cached check and fallback run without the call's site, as core_mh_attention does.
AttentionOptions without_site(AttentionOptions av) {
  av.patch = {};
  return av;
}

// What a cached call is, in describe_call's words. Its mask holds only the n new columns (ℓ, n); the
// square mask of the whole sequence has the cached columns' causal part to their left, so that a
// causal step reads "causal mask" and any other an explicit one.
std::string describe_cached(bool append, const Mask& mask, const AttentionOptions& av, int H) {
  const int l = static_cast<int>(mask.rows()), n = static_cast<int>(mask.cols());
  std::string what;
  if (append && n <= l) {
    Mask whole = unidirectional_mask(l, l);
    whole.rightCols(n) = mask;
    what = describe_call(true, whole, av, H);
  } else {
    what = describe_call(append, mask, av, H);
  }
  return what + " · KV cache: " + std::to_string(n) + " new column" + (n == 1 ? "" : "s") + " over " +
         std::to_string(append ? l - n : l) + " cached";
}

// Algorithm 4-R's denominator guard, as core's trace reports it: " · 2 guarded columns" ("" otherwise).
std::string guarded_note(const GpuAttention& gpu, const AttentionOptions& av) {
  return av.random_features() ? " · " + std::to_string(gpu.guarded_columns()) + " guarded columns" : "";
}

// The column count ℓ_c of each head's cached K or V.
std::vector<int> column_counts(const std::vector<MatF>& M) {
  std::vector<int> n;
  for (const MatF& m : M) n.push_back(static_cast<int>(m.cols()));
  return n;
}

// Undoes what a failed GPU call may have appended.
void restore_columns(std::vector<MatF>& M, const std::vector<int>& cols) {
  for (size_t h = 0; h < M.size(); ++h) M[h].conservativeResize(M[h].rows(), cols[h]);
}

// Records max |Ṽ_gpu − Ṽ_cpu| and the call's tolerance (n: its longest float sum).
void check(CallRecord& r, const MatF& Vt, const MatF& Vt_cpu, long n) {
  // A NaN would slip past the comparison with the tolerance: a Ṽ that is not finite is infinitely far.
  r.max_diff = Vt.allFinite() ? max_abs_diff_to_core(Vt, Vt_cpu) : std::numeric_limits<double>::infinity();
  r.tolerance = agreement_tolerance(n, Vt_cpu.size() ? static_cast<double>(Vt_cpu.cwiseAbs().maxCoeff()) : 0.0);
}

}  // namespace

MHAttentionFn<float> GpuForward::attention() {
  return [this](const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                const AttentionOptions& av) { return run(X, Z, W, mask, av); };
}

CachedMHAttentionFn GpuForward::cached_attention() {
  return [this](const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K, std::vector<MatF>& V,
                bool append, const Mask& mask, const AttentionOptions& av) {
    return run_cached(X, W, K, V, append, mask, av);
  };
}

MatF GpuForward::run(const MatF& X, const MatF& Z, const MHAttentionW<const float>& W, const Mask& mask,
                     const AttentionOptions& av) {
  CallRecord r = site_of(av, false, static_cast<int>(X.cols()), static_cast<int>(Z.cols()));
  r.what = describe_call(X.data() == Z.data(), mask, av, static_cast<int>(W.heads.size()));
  const auto t0 = std::chrono::steady_clock::now();
  MatF Vt;
  try {
    Vt = gpu_.mh_attention(X, Z, W, mask, opt_.form, opt_.timed ? &r.times : nullptr, nullptr, av);
    r.call_ms = ms_since(t0);
    r.what += guarded_note(gpu_, av);
  } catch (const Error& e) {
    r.on_gpu = false;
    r.cpu_reason = e.what();
    r.times.clear();
  }
  if (!r.on_gpu) Vt = core_mh_attention(X, Z, W, mask, av);
  else if (opt_.check) check(r, Vt, core_mh_attention(X, Z, W, mask, av), longest_sum(X, Z, W));
  calls_.push_back(std::move(r));
  return Vt;
}

MatF GpuForward::run_cached(const MatF& X, const MHAttentionW<const float>& W, std::vector<MatF>& K,
                            std::vector<MatF>& V, bool append, const Mask& mask, const AttentionOptions& av) {
  CallRecord r = site_of(av, true, static_cast<int>(X.cols()), static_cast<int>(mask.rows()));
  r.what = describe_cached(append, mask, av, static_cast<int>(W.heads.size()));
  // Core's check (and the fallback) starts from the cache as it was before the GPU appended to it.
  std::vector<MatF> K_cpu, V_cpu;
  if (opt_.check) K_cpu = K, V_cpu = V;
  const std::vector<int> k_cols = column_counts(K), v_cols = column_counts(V);
  const auto t0 = std::chrono::steady_clock::now();
  MatF Vt;
  try {
    Vt = gpu_.mh_attention_cached(X, W, K, V, append, mask, opt_.form, av, opt_.timed ? &r.times : nullptr);
    r.call_ms = ms_since(t0);
    r.what += guarded_note(gpu_, av);
  } catch (const Error& e) {
    r.on_gpu = false;
    r.cpu_reason = e.what();
    r.times.clear();
    restore_columns(K, k_cols);
    restore_columns(V, v_cols);
    Vt = kv_cached_mh_attention(X, W, K, V, append, mask, without_site(av));
  }
  if (r.on_gpu && opt_.check)
    check(r, Vt, kv_cached_mh_attention(X, W, K_cpu, V_cpu, append, mask, without_site(av)),
          std::max<long>(longest_sum(X, X, W), mask.rows()));  // ℓ_z = the mask's rows
  calls_.push_back(std::move(r));
  return Vt;
}

std::string call_site(const CallRecord& r) {
  return "Alg. " + std::to_string(r.algorithm) + " L" + std::to_string(r.line) + (r.cached ? " (KV cache)" : "") +
         ", layer " + std::to_string(r.layer);
}

std::string call_line(const CallRecord& r) {
  std::string s = call_site(r) + ": " + r.what + " — ";
  if (!r.on_gpu) return s + "ran on the CPU: " + r.cpu_reason;
  char buf[64];
  s += "GPU";
  if (!r.times.empty()) {
    s += ", " + std::to_string(r.times.size()) + " dispatches, ";
    // A GPU time is NaN where the GL's clock did not time the dispatch (gpu/attention.hpp).
    double gpu_ms = 0;
    for (const DispatchTime& t : r.times) gpu_ms += t.gpu_ms;
    if (std::isnan(gpu_ms)) {
      s += "GPU clock not measured";
    } else {
      std::snprintf(buf, sizeof buf, "%.3f ms GPU clock", gpu_ms);
      s += buf;
    }
  }
  std::snprintf(buf, sizeof buf, ", %.3f ms CPU clock", r.call_ms);
  s += buf;
  if (r.max_diff >= 0) {
    std::snprintf(buf, sizeof buf, ", max |Ṽ_gpu − Ṽ_cpu| %.1e", r.max_diff);
    s += buf;
    if (disagrees(r)) {
      std::snprintf(buf, sizeof buf, " — DISAGREES with core (tolerance %.1e): this Ṽ is wrong", r.tolerance);
      s += buf;
    }
  }
  return s;
}

bool disagrees(const CallRecord& r) { return r.tolerance >= 0 && r.max_diff > r.tolerance; }

int disagreeing_calls(const std::vector<CallRecord>& calls) {
  return static_cast<int>(std::count_if(calls.begin(), calls.end(), disagrees));
}

double max_call_diff(const std::vector<CallRecord>& calls) {
  double m = -1;
  for (const CallRecord& r : calls) m = std::max(m, r.max_diff);
  return m;
}

int cpu_calls(const std::vector<CallRecord>& calls) {
  return static_cast<int>(std::count_if(calls.begin(), calls.end(), [](const CallRecord& r) { return !r.on_gpu; }));
}

}  // namespace sf::gpu
