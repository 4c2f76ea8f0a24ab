// Algorithm 14-S (speculative decoding, not in the paper) in the Session: its settings, the draft
// model the learner picked, and the traced run's result. The Session starts the runs (it owns the
// trace) and hands back their results, as it does for Algorithm 14 (session_generation.hpp).
#pragma once
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "core/algorithms/speculative.hpp"

namespace sf {

struct SpeculationSettings {
  int K = 4;          // proposals per round
  double tau = 0.0;   // τ of both models (0 = greedy)
  int l_gen = 12;     // ℓ_gen
  uint64_t seed = 1;
};

// A model the draft can be: a bundled one or one the session opened.
struct DraftCandidate {
  std::string name;  // e.g. "draft.safetensors (bundled)"
  std::string path;
};

class Speculation {
 public:
  SpeculationSettings settings;

  const SpeculativeResult& result() const { return result_; }
  // The draft picked (null: none yet), its name, and why the last pick failed ("" when it did not).
  const std::shared_ptr<const Model>& draft() const { return draft_; }
  const std::string& draft_name() const { return draft_name_; }
  const std::string& error() const { return error_; }
  // Loads `path` as the draft for `target`; false (keeping the previous draft) with error() saying
  // why when it cannot be read or its vocabulary is not the target's (check_draft_model).
  bool pick_draft(const std::string& name, const std::string& path, const Model& target);
  // The bundled GPT models (assets/*.safetensors, assets/lessons/*.safetensors) and the models the
  // session opened, with the vocabulary of `target`, best first (draft.safetensors leads).
  std::vector<DraftCandidate> candidates(const Model& target) const;
  // A model the session opened: a candidate from now on.
  void remember_opened(const std::string& path);
  // A new target: the draft is checked again (dropped, with error(), when it no longer fits).
  void retarget(const Model& target);

 private:
  friend class Session;
  void finish(SpeculativeResult r) { result_ = std::move(r); }

  std::shared_ptr<const Model> draft_;
  std::string draft_name_, draft_path_, error_;
  std::vector<std::string> opened_;
  SpeculativeResult result_;
  mutable std::vector<DraftCandidate> candidates_;  // candidates()' answer, until retarget or a new opened model
  mutable bool candidates_known_ = false;
};

}  // namespace sf
