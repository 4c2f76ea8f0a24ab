// Algorithm 15 in the Session (models whose output is a Translation): its settings, the traced
// run's x̂ and how many of its steps are shown so far. The Session traces the runs.
#pragma once
#include <cstdint>
#include <vector>

#include "core/algorithms/algorithms.hpp"

namespace sf {

struct TranslationSettings {
  double tau = 0.0;             // τ (0 = argmax)
  uint64_t seed = 1;
  bool reuse_encoding = false;  // not in the paper: encode z once and reuse Z
  bool kv_cache = false;        // not in the paper: z encoded once, only x̂'s new column per step
  TopKTopP cut;                 // not in the paper: top-k / top-p after τ (core/algorithms/sampling.hpp); off
  bool paged = false;           // not in the paper: with kv_cache, the decoder's cache in blocks (PagedAttention)
  int kv_block_size = 4;        // B, tokens per block when paged (core/algorithms/paged_kv.hpp's default)
};

class Translation {
 public:
  TranslationSettings settings;

  // The traced run: every step until eos_token or the ℓ_max cap.
  const EdInferenceResult& result() const { return result_; }
  // Steps of result() shown so far (≤ result().steps.size()).
  int shown() const { return shown_; }
  // x̂ as far as shown: [bos_token, y_1 … y_shown].
  Tokens translated() const;
  // The KV-cache option the traced run used (not in the paper).
  bool traced_kv_cache() const { return traced_kv_cache_; }

 private:
  friend class Session;  // runs are started and finished by the Session, which owns the trace

  // Forgets the run (a new model).
  void clear();
  // Whether z and the settings ask for a new run: not when `traced` (the run shown is
  // Algorithm 15's) and they are those it was traced for. A new run is recorded as traced for
  // them, none of its steps shown.
  bool needs_run(const Tokens& z, size_t n_params, bool traced);
  EdInferenceOptions options() const;
  // Keeps a finished run's result, run with `used`.
  void finish(const EdInferenceOptions& used, EdInferenceResult r);
  // Shows one more step (`one`) or all of them; returns how many are shown.
  int reveal(bool one);

  EdInferenceResult result_;
  int shown_ = 0;
  std::vector<double> key_;  // z and settings result_ was traced for
  bool traced_kv_cache_ = false;
};

}  // namespace sf
