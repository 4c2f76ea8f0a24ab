// Algorithm 14 in the Session: the sampling settings, what has been generated so far and the
// traced run's result. The Session starts the runs (it owns the trace) and hands back their results.
#pragma once
#include <cstdint>

#include "core/algorithms/algorithms.hpp"

namespace sf {

struct SamplingSettings {
  double tau = 0.8;        // τ (0 = argmax)
  int l_gen = 12;          // ℓ_gen
  uint64_t seed = 1;
  bool trim_context = true;
  bool kv_cache = false;  // not in the paper: compute only the new token's column (docs/variants.md)
  bool stop_at_eos = true;  // not in the paper's Algorithm 14: stop once eos_token is drawn (the CLI's --stop-at-eos)
  TopKTopP cut;            // not in the paper: top-k / top-p after τ (core/algorithms/sampling.hpp); off
  bool paged = false;      // not in the paper: with kv_cache, hold the cache in blocks (PagedAttention)
  int kv_block_size = 4;   // B, tokens per block when paged (core/algorithms/paged_kv.hpp's default)
};

class Generation {
 public:
  SamplingSettings settings;

  // The traced run's result (its y is what that run generated).
  const InferenceResult& result() const { return result_; }
  // The prompt's continuation: what earlier one-token runs generated, then the traced run's y.
  const Tokens& generated() const { return generated_; }
  // The KV-cache option the traced run used (not in the paper).
  bool traced_kv_cache() const { return traced_kv_cache_; }

 private:
  friend class Session;  // runs are started and finished by the Session, which owns the trace

  // Forgets what was generated (a new prompt or model: a continuation belongs to its prompt).
  void clear();
  // Prepares a run of `n` tokens; `append`: continuing from what was generated so far.
  void start(int n, bool append);
  // The run's input: the prompt, then what it continues from.
  Tokens input(const Tokens& prompt) const;
  // The run's options: settings, ℓ_gen = n, and a seed moved on by each token continued from
  // (so that one-at-a-time steps do not draw the same numbers again).
  InferenceOptions options() const;
  // Keeps a finished run's result, run with `used`.
  void finish(const InferenceOptions& used, InferenceResult r);

  int count_ = 0;                 // ℓ_gen of the next run
  Tokens prefix_;                 // generated before the traced run (one token at a time)
  Tokens generated_;              // prefix_ + what the traced run generated
  InferenceResult result_;
  bool traced_kv_cache_ = false;
};

}  // namespace sf
